"""Fakes of torch's real API and of the OS files, one per build, for machines nobody here has.

The simulated machines in conftest.py are made *below* the seam: a fake ``torch`` module and a fake file tree
(``/sys/bus/pci/devices``, ``/dev``) go through the real ``helpers.device.read_facts``. Each fake follows what the
real build returns; the source is named beside each behaviour. A fake that disagrees with torch is a bug here.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace

import torch

GiB = 2**30


@dataclass(frozen=True)
class Props:
    """torch.cuda.get_device_properties(i) (torch/csrc/cuda/Module.cpp, the _CudaDeviceProperties binding)."""

    name: str
    major: int
    minor: int
    total_memory: int
    gcnArchName: str  # noqa: N815  (torch's own spelling)
    warp_size: int


def rocm_gpu(name, gcn_arch, major, minor, memory_gib, warp_size=64) -> Props:
    # ROCm builds: gcnArchName is hipDeviceProp_t.gcnArchName with feature flags ("gfx942:sramecc+:xnack-");
    # major/minor are gfx-derived (MI300X reports 9, 4), not CUDA compute capabilities (ROCM_FACTS.md).
    return Props(name, major, minor, int(memory_gib * GiB), gcn_arch, warp_size)


def cuda_gpu(name, major, minor, memory_gib) -> Props:
    # CUDA builds: the binding exists too and returns the device *name*: torch/csrc/cuda/Module.cpp,
    # "HIP-only property; reuse name attribute for CUDA builds".
    return Props(name, major, minor, int(memory_gib * GiB), name, 32)


class FakeCuda:
    """torch.cuda: is_available() is True on ROCm builds too (same namespace; PyTorch notes/hip)."""

    def __init__(self, gpus=(), arch_list=()):
        self._gpus, self._arch_list = tuple(gpus), list(arch_list)

    def is_available(self):
        return bool(self._gpus)

    def device_count(self):
        return len(self._gpus)

    def get_device_properties(self, device=None):
        if not self._gpus:  # torch/cuda/__init__.py: _lazy_init raises without a usable GPU
            raise RuntimeError("No HIP GPUs are available" if self._hip else "Found no NVIDIA driver on your system.")
        # torch/cuda/__init__.py: _get_device_index(device, optional=True): an int, "cuda:N", or the current GPU for
        # an index-less "cuda" (and None)
        index = getattr(device, "index", device)
        return self._gpus[self._current if index is None else index]

    _current = 0  # torch.cuda.current_device(): 0 until torch.cuda.set_device() changes it

    def get_arch_list(self):
        # torch/cuda/__init__.py: [] when not is_available(), else the targets the wheel was compiled for
        return list(self._arch_list) if self.is_available() else []

    _hip = False


class FakeAccelerator:
    """torch.accelerator (torch >= 2.6): the *build's* accelerator, usable or not (check_available=False)."""

    def __init__(self, build_type, usable):
        self._type, self._usable = build_type, usable

    def is_available(self):
        return self._usable

    def current_accelerator(self, check_available=False):
        # torch/accelerator/__init__.py: returns the compile-time accelerator; None only with check_available=True
        # when none is usable, or on a build without one (CPU wheels).
        if self._type is None or (check_available and not self._usable):
            return None
        return torch.device(self._type)


def fake_torch(version, hip=None, cuda=None, gpus=(), arch_list=(), mps=False, accelerator=True):
    """A torch module as the given build answers; accelerator=False models torch < 2.6 (no torch.accelerator)."""
    cuda_ns = FakeCuda(gpus, arch_list)
    cuda_ns._hip = hip is not None
    build_type = "cuda" if (hip or cuda) else ("mps" if mps else None)
    t = SimpleNamespace(
        __version__=version,
        version=SimpleNamespace(hip=hip, cuda=cuda),
        cuda=cuda_ns,
        backends=SimpleNamespace(mps=SimpleNamespace(is_available=lambda: mps)),
    )
    if accelerator:
        t.accelerator = FakeAccelerator(build_type, bool(gpus) or mps)
    return t


@dataclass(frozen=True)
class PciDevice:
    cls: str  # the sysfs "class" file, e.g. "0x120000"
    vendor: str  # "0x1002" AMD, "0x10de" NVIDIA, "0x1022" AMD (CPU side: NPUs, bridges)
    driver: str | None = None  # the bound kernel driver (sysfs "driver" symlink), None when unbound
    device: str = "0x0000"  # the sysfs "device" file: the PCI device id
    gfx_target_version: int = 0  # its KFD topology node's gfx_target_version when amdgpu exposes it, 0: no node


# PCI classes and ids (lspci -nn on real machines; ROCM_FACTS.md "Hardware facts"; ids from pci.ids):
MI300X_PCI = PciDevice("0x120000", "0x1002", "amdgpu", "0x74a1", 90402)  # "Processing accelerators [1200]"
MI250X_PCI = PciDevice("0x038000", "0x1002", "amdgpu", "0x740c", 90010)  # "Display controller [0380]"
RADEON_PCI = PciDevice("0x030000", "0x1002", "amdgpu", "0x744c", 110000)  # RX 7900 XTX, "VGA compatible [0300]"
H100_PCI = PciDevice("0x030200", "0x10de", "nvidia", "0x2330")  # "3D controller [0302]"
XDNA_NPU_PCI = PciDevice("0x118000", "0x1022", "amdxdna", "0x17f0")  # Ryzen AI NPU (drivers/accel/amdxdna)
NIC_PCI = PciDevice("0x020000", "0x15b3", "mlx5_core", "0x1021")  # an InfiniBand adapter
# The integrated GPUs of Ryzen APUs: a VGA controller like any Radeon, told apart by device id or KFD target.
RADEON_780M_PCI = PciDevice("0x030000", "0x1002", "amdgpu", "0x15bf", 110003)  # Phoenix1: Ryzen 7 7840U/HS
RADEON_680M_PCI = PciDevice("0x030000", "0x1002", "amdgpu", "0x1681", 100305)  # Rembrandt: Ryzen 6000 laptops


def make_root(root: Path, pci=(), kfd=False, dri=False, kfd_topology=None) -> Path:
    """A file tree with /sys/bus/pci/devices/* (class, vendor, device, driver link), /dev/kfd, /dev/dri/renderD128,
    and the KFD topology amdgpu writes (/sys/class/kfd/kfd/topology/nodes/N/properties: node 0 a CPU, then one node
    per GPU whose driver is amdgpu and gfx_target_version is set). ``kfd_topology`` defaults to ``kfd``: a machine
    whose driver is loaded has both; a container without --device=/dev/kfd still sees the sysfs topology."""
    devices = root / "sys/bus/pci/devices"
    devices.mkdir(parents=True, exist_ok=True)
    gpu_nodes = []
    for i, d in enumerate(pci):
        dev = devices / f"0000:{i + 1:02x}:00.0"
        dev.mkdir()
        (dev / "class").write_text(d.cls + "\n")
        (dev / "vendor").write_text(d.vendor + "\n")
        (dev / "device").write_text(d.device + "\n")
        if d.driver:
            os.symlink(f"../../../bus/pci/drivers/{d.driver}", dev / "driver")
        if d.driver == "amdgpu" and d.gfx_target_version:
            gpu_nodes.append(d)
    if kfd if kfd_topology is None else kfd_topology:
        write_kfd_topology(root, gpu_nodes)
    (root / "dev").mkdir(exist_ok=True)
    if kfd:
        (root / "dev/kfd").write_text("")
    if dri:
        (root / "dev/dri").mkdir()
        (root / "dev/dri/renderD128").write_text("")
    return root


def write_kfd_topology(root: Path, gpus) -> None:
    """amdkfd's node properties (kfd_topology.c node_show: "%s %u" lines, decimal): a CPU node (gfx_target_version 0,
    simd_count 0), then the GPUs. Only the keys the course reads, and a few around them, in the driver's order."""
    nodes = root / "sys/class/kfd/kfd/topology/nodes"
    cpu = {"cpu_cores_count": 16, "simd_count": 0, "gfx_target_version": 0, "vendor_id": 0, "device_id": 0}
    gpu_nodes = [{"cpu_cores_count": 0, "simd_count": 304, "gfx_target_version": g.gfx_target_version,
                  "vendor_id": int(g.vendor, 16), "device_id": int(g.device, 16), "drm_render_minor": 128 + i}
                 for i, g in enumerate(gpus)]  # fmt: skip
    for n, props in enumerate([cpu] + gpu_nodes):
        (nodes / str(n)).mkdir(parents=True)
        (nodes / str(n) / "properties").write_text("".join(f"{k} {v}\n" for k, v in props.items()))
