"""Simulated machines: the facts `helpers.device.read_facts` would return on each.

Architectures, names and arch lists follow ../shared/ROCM_FACTS.md (MI300X gfx942, MI250X gfx90a,
RX 7900 XTX gfx1100) and what PyTorch reports on those machines.
"""

import pytest

from helpers.device import GPU, Facts

GiB = 2**30
ROCM_ARCHES = ("gfx900", "gfx906", "gfx908", "gfx90a", "gfx942", "gfx1030", "gfx1100", "gfx1101", "gfx1200", "gfx1201")
CUDA_ARCHES = ("sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120")
ROCM = dict(
    torch_version="2.9.1+rocm6.4",
    hip_version="6.4.43482",
    cuda_version=None,
    arch_list=ROCM_ARCHES,
    dev_kfd=True,
    dev_dri=True,
    pci_gpu_vendors=("AMD",),
)

MACHINES = {
    "mi300x": Facts(
        **ROCM,
        cuda_available=True,
        accelerator="cuda",
        gpus=(GPU("AMD Instinct MI300X", "gfx942:sramecc+:xnack-", 192 * GiB),) * 8,
    ),
    "mi250x": Facts(
        **ROCM,
        cuda_available=True,
        accelerator="cuda",
        gpus=(GPU("AMD Instinct MI250X/MI250", "gfx90a:sramecc+:xnack-", 64 * GiB),) * 2,
    ),
    "rx7900xtx": Facts(
        **ROCM, cuda_available=True, accelerator="cuda", gpus=(GPU("AMD Radeon RX 7900 XTX", "gfx1100", 24 * GiB),)
    ),
    "h100": Facts(
        torch_version="2.14.1+cu130",
        cuda_version="13.0",
        cuda_available=True,
        accelerator="cuda",
        gpus=(GPU("NVIDIA H100 80GB HBM3", "sm_90", 80 * GiB),),
        arch_list=CUDA_ARCHES,
        dev_dri=True,
        pci_gpu_vendors=("NVIDIA",),
    ),
    "cpu": Facts(torch_version="2.14.1+cpu"),
    "mps": Facts(torch_version="2.14.1", mps_available=True, accelerator="mps"),
    # A CUDA wheel from PyPI installed on an AMD machine: no ROCm, no GPU for torch.
    "cuda_wheel_on_amd": Facts(
        torch_version="2.14.1+cu130", cuda_version="13.0", dev_kfd=True, dev_dri=True, pci_gpu_vendors=("AMD",)
    ),
    # A ROCm wheel on a GPU whose target it was not built for (Radeon 780M iGPU, gfx1103).
    "rocm_missing_arch": Facts(
        **{**ROCM, "arch_list": ROCM_ARCHES},
        cuda_available=True,
        accelerator="cuda",
        gpus=(GPU("AMD Radeon 780M", "gfx1103", 16 * GiB),),
    ),
    # The rocm/pytorch image started without --device=/dev/kfd --device=/dev/dri.
    "container_no_kfd": Facts(**{**ROCM, "dev_kfd": False, "dev_dri": False}),
}


@pytest.fixture(params=sorted(MACHINES))
def machine(request):
    return request.param, MACHINES[request.param]
