"""Simulated machines, made below the seam: fake torch builds and fake /sys and /dev trees (tests/fakes.py) go
through the real ``helpers.device.read_facts``, so what the tests see is what read_facts makes of each build's API.

Names, targets and PCI classes follow ../shared/ROCM_FACTS.md and what PyTorch reports on those machines.
"""

import os
import tempfile
from collections.abc import Mapping
from pathlib import Path

import pytest

from helpers.device import read_facts
from tests.fakes import (
    H100_PCI,
    MI250X_PCI,
    MI300X_PCI,
    NIC_PCI,
    RADEON_680M_PCI,
    RADEON_780M_PCI,
    RADEON_PCI,
    XDNA_NPU_PCI,
    cuda_gpu,
    fake_torch,
    make_root,
    rocm_gpu,
)

# make mutation: mutmut's coverage pass runs with MUTANT_UNDER_TEST=stats, kept in-process as well. A subprocess that
# a test starts would inherit it and try to record coverage where mutmut is not listening: it runs plain code instead.
if os.environ.get("MUTANT_UNDER_TEST") == "stats":
    del os.environ["MUTANT_UNDER_TEST"]

# torch.cuda.get_arch_list() of PyTorch's ROCm 7.14 wheel (PYTORCH_ROCM_ARCH in pytorch's .ci/docker/manywheel/build.sh)
# and of a CUDA 13.0 wheel (PyPI torch 2.14.1).
ROCM_ARCHES = ("gfx908", "gfx90a", "gfx942", "gfx950", "gfx1030", "gfx1100", "gfx1101", "gfx1102", "gfx1103",
               "gfx1200", "gfx1201", "gfx1150", "gfx1151")  # fmt: skip
CUDA_ARCHES = ("sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120")
ROCM_BUILD = dict(version="2.14.1+rocm7.14", hip="7.14.60001", arch_list=ROCM_ARCHES)
CUDA_BUILD = dict(version="2.14.1+cu130", cuda="13.0", arch_list=CUDA_ARCHES)

# Sources: gfx targets, memory and wavefront size of the AMD GPUs from ROCm's "GPU hardware specifications"
# (https://rocm.docs.amd.com/en/latest/reference/gpu-arch-specs.html); total_memory as torch reports it (a little under
# the marketed 192/64/24/16 GB); major/minor on ROCm derived from the gfx target (ROCM_FACTS.md); H100 from NVIDIA's
# data sheet (80 GB HBM3, compute capability 9.0). MI250X is two GCDs per package: torch sees 2 GPUs per card.
MI300X = rocm_gpu("AMD Instinct MI300X", "gfx942:sramecc+:xnack-", 9, 4, 191.98)
MI250X = rocm_gpu("AMD Instinct MI250X/MI250", "gfx90a:sramecc+:xnack-", 9, 0, 63.98)
RX7900XTX = rocm_gpu("AMD Radeon RX 7900 XTX", "gfx1100", 11, 0, 23.98, warp_size=32)
RX6900XT = rocm_gpu("AMD Radeon RX 6900 XT", "gfx1030", 10, 3, 15.98, warp_size=32)
RADEON_680M = rocm_gpu("AMD Radeon 680M", "gfx1035", 10, 3, 8.0, warp_size=32)  # an iGPU: system memory
H100 = cuda_gpu("NVIDIA H100 80GB HBM3", 9, 0, 79.19)

# name -> (torch as that build answers, what /sys and /dev hold)
SPECS = {
    "mi300x": (fake_torch(**ROCM_BUILD, gpus=[MI300X] * 8), dict(pci=[MI300X_PCI] * 8 + [NIC_PCI], kfd=1, dri=1)),
    "mi250x": (fake_torch(**ROCM_BUILD, gpus=[MI250X] * 2), dict(pci=[MI250X_PCI] * 2, kfd=1, dri=1)),  # 2 GCDs
    "rx7900xtx": (fake_torch(**ROCM_BUILD, gpus=[RX7900XTX]), dict(pci=[RADEON_PCI], kfd=1, dri=1)),
    "rx6900xt": (fake_torch(**ROCM_BUILD, gpus=[RX6900XT]), dict(pci=[RADEON_PCI], kfd=1, dri=1)),
    "h100": (fake_torch(**CUDA_BUILD, gpus=[H100]), dict(pci=[H100_PCI], dri=1)),
    "cpu": (fake_torch("2.14.1+cpu"), dict()),
    "mps": (fake_torch("2.14.1", mps=True), dict()),
    # A CUDA wheel from PyPI on an MI300X machine: no ROCm, no GPU for torch (the MI300X is PCI class 0x1200).
    "cuda_wheel_on_amd": (fake_torch(**CUDA_BUILD), dict(pci=[MI300X_PCI] * 8, kfd=1, dri=1)),
    # PyTorch's ROCm wheel on a GPU whose target it was not built for: a Ryzen 6000 laptop's Radeon 680M (gfx1035).
    "rocm_missing_arch": (fake_torch(**ROCM_BUILD, gpus=[RADEON_680M]), dict(pci=[RADEON_680M_PCI], kfd=1, dri=1)),
    # A Ryzen 7 7840U laptop with PyPI's default torch (a CUDA build, no NVIDIA GPU): its Radeon 780M (gfx1103) is
    # part of the CPU, the lessons run on the CPU. amdgpu is loaded (/dev/kfd, the KFD topology); a Ryzen AI NPU too.
    "ryzen_laptop": (fake_torch(**CUDA_BUILD), dict(pci=[RADEON_780M_PCI, XDNA_NPU_PCI], kfd=1, dri=1)),
    # The rocm/pytorch image started without --device=/dev/kfd --device=/dev/dri: /sys still shows the GPUs.
    "container_no_kfd": (fake_torch(**ROCM_BUILD), dict(pci=[MI300X_PCI] * 8)),
}  # fmt: skip


def simulate(torch_fake, files) -> object:
    """read_facts() on a fake torch and a fake file tree (deleted afterwards: read_facts reads eagerly)."""
    with tempfile.TemporaryDirectory() as d:
        return read_facts(torch_fake, str(make_root(Path(d), **files)), environ={})


class _Machines(Mapping):
    """name -> read_facts() of that machine, made afresh on every lookup: a change to read_facts (make mutation)
    reaches every test that uses a machine, not only the first one."""

    def __getitem__(self, name):
        return simulate(*SPECS[name])

    def __iter__(self):
        return iter(SPECS)

    def __len__(self):
        return len(SPECS)


MACHINES = _Machines()


@pytest.fixture(params=sorted(MACHINES))
def machine(request):
    return request.param, MACHINES[request.param]
