"""What the machine's hardware says, before torch is asked: the GPUs on the PCI bus, the AMD GPUs the amdgpu
driver exposes (its KFD topology in sysfs), the integrated Radeon GPUs of Ryzen laptops, and which PyTorch wheels
carry kernels for a GPU target.

Everything here reads plain files under a ``root`` ("/" by default), so tests hand it a directory that looks like an
MI300X node or a Ryzen laptop. :func:`helpers.device.read_facts` reads the machine through it; lesson 00 prints
:func:`kfd_gpus`.

Example::

    >>> from helpers.hardware import igpu_advice, kfd_gpus
    >>> gpus = kfd_gpus()  # [] without the amdgpu driver, else {"node", "gfx", "device_id", "render_node"} per GPU
    >>> igpu_advice("gfx90c").split(".")[0]
    'no ROCm build of torch ships kernels for gfx90c'
"""

from __future__ import annotations

import glob
import os

# PyTorch's ROCm wheel index for the torch this course pins: torch 2.14 pairs with ROCm 7.14 (the compatibility matrix
# in pytorch/pytorch RELEASE.md). Each torch release ships for one or two ROCm versions: for another torch, take the
# index that https://pytorch.org/get-started/locally/ (or /previous-versions/) gives for it.
ROCM_WHEEL_INDEX = "https://download.pytorch.org/whl/rocm7.14"
PCI_VENDORS = {"0x1002": "AMD", "0x10de": "NVIDIA"}
# AMD's multi-arch wheels (TheRock, ROCm 7.14+): one index for every GPU, the GPU's kernels from a pip extra,
# "torch[device-gfx942]" (TheRock RELEASES.md); without the extra for this GPU, kernel launches fail with
# hipErrorInvalidImage (ROCm/TheRock#7839).
AMD_WHEEL_INDEX = "https://repo.amd.com/rocm/whl-multi-arch/"
# The targets with a [device-gfxNNNN] extra there (TheRock RELEASES.md, "Supported Python [device-*] install extras")
AMD_WHEEL_TARGETS = ("gfx900", "gfx906", "gfx908", "gfx90a", "gfx942", "gfx950", "gfx1010", "gfx1011", "gfx1012",
                     "gfx1030", "gfx1031", "gfx1032", "gfx1033", "gfx1034", "gfx1035", "gfx1036", "gfx1100",
                     "gfx1101", "gfx1102", "gfx1103", "gfx1150", "gfx1151", "gfx1152", "gfx1153", "gfx1200",
                     "gfx1201")  # fmt: skip
# What PyTorch's own ROCm 7.14 wheels are built for (PYTORCH_ROCM_ARCH in pytorch's .ci/docker/manywheel/build.sh);
# torch.cuda.get_arch_list() of the installed wheel is the authority, this list only words the advice.
PYTORCH_WHEEL_TARGETS = ("gfx908", "gfx90a", "gfx942", "gfx950", "gfx1030", "gfx1100", "gfx1101", "gfx1102",
                         "gfx1103", "gfx1150", "gfx1151", "gfx1200", "gfx1201")  # fmt: skip
# The integrated GPUs of AMD's APUs, by PCI device id, when the KFD topology cannot say (amdgpu not loaded). Names:
# pci.ids; codename -> graphics IP: the kernel's Documentation/gpu/amdgpu/apu-asic-info-table.csv; IP -> gfx target:
# amdkfd's kfd_device.c (Mendocino's GC 10.3.7 reports gfx1036 there).
APU_GPUS = {
    "0x1636": "gfx90c", "0x1638": "gfx90c", "0x15e7": "gfx90c",  # Renoir, Cezanne, Barcelo (Radeon Vega)
    "0x163f": "gfx1033",  # Van Gogh (Steam Deck)
    "0x164d": "gfx1035", "0x1681": "gfx1035",  # Rembrandt: Radeon 680M / 660M
    "0x164e": "gfx1036", "0x13c0": "gfx1036", "0x1506": "gfx1036",  # Raphael, Granite Ridge, Mendocino: 610M
    "0x15bf": "gfx1103", "0x15c8": "gfx1103", "0x164f": "gfx1103",  # Phoenix: Radeon 780M / 760M / 740M
    "0x1900": "gfx1103", "0x1901": "gfx1103",  # Hawk Point: Radeon 780M / 760M / 740M
    "0x150e": "gfx1150",  # Strix Point: Radeon 890M / 880M
    "0x1586": "gfx1151",  # Strix Halo: Radeon 8060S / 8050S
    "0x1114": "gfx1152",  # Krackan Point: Radeon 860M / 840M
}  # fmt: skip
IGPU_TARGETS = frozenset(APU_GPUS.values()) | {"gfx1153"}  # gfx1153: the Radeon 820M (TheRock's extras table)


def _read(path: str) -> str:
    with open(path) as f:
        return f.read().strip().lower()


def _pci_gpus(root: str) -> list[tuple[str, str]]:
    """(vendor, device id) of each GPU on the PCI bus, from sysfs; [] if it is unreadable.

    A GPU is a display controller (class 0x03xxxx: Radeon 0x0300, MI250X 0x0380, H100 0x0302) or, for
    AMD, a processing accelerator (0x12xxxx: MI300X/MI300A/MI325X/MI350 enumerate so). Other AMD devices
    can share class 0x12 (Ryzen AI NPUs): such a device counts only when no driver is bound, or amdgpu.
    """
    found = []
    for dev in sorted(glob.glob(os.path.join(root, "*"))):
        try:
            cls, vendor = _read(os.path.join(dev, "class")), _read(os.path.join(dev, "vendor"))
        except OSError:
            continue
        link = os.path.join(dev, "driver")
        driver = os.path.basename(os.readlink(link)) if os.path.islink(link) else None
        accelerator = cls.startswith("0x12") and vendor == "0x1002" and driver in (None, "amdgpu")
        if (cls.startswith("0x03") or accelerator) and vendor in PCI_VENDORS:
            try:
                device = _read(os.path.join(dev, "device"))
            except OSError:
                device = ""
            found.append((PCI_VENDORS[vendor], device))
    return found


def pci_gpu_vendors(root: str = "/sys/bus/pci/devices") -> tuple[str, ...]:
    """Vendors of the GPUs on the PCI bus ("AMD", "NVIDIA"), from sysfs; () if it is unreadable."""
    return tuple(vendor for vendor, _ in _pci_gpus(root))


def kfd_gpus(root: str = "/") -> list[dict]:
    """The GPUs the amdgpu driver exposes, from the KFD topology in sysfs (``/sys/class/kfd/kfd/topology/nodes/N/
    properties``: one "key value" per line, in decimal; amdkfd's kfd_topology.c). Each: its KFD ``node`` (the
    "GPU node-N" of a memory fault), ``gfx`` target, PCI ``device_id`` and ``render_node`` (/dev/dri/renderD<minor>:
    what to pass into a container to give it this GPU alone, lesson 00). CPU nodes (gfx_target_version 0) are left out.

    gfx_target_version is major * 10000 + minor * 100 + stepping: 90402 -> gfx942, 90010 -> gfx90a, 110003 -> gfx1103.
    """
    out = []
    for path in sorted(glob.glob(os.path.join(root, "sys/class/kfd/kfd/topology/nodes/*/properties"))):
        try:
            with open(path) as f:
                props = {k: int(v) for k, v, *_ in (line.split() for line in f if len(line.split()) >= 2)}
        except (OSError, ValueError):
            continue
        v = props.get("gfx_target_version", 0)
        if v:
            out.append({"node": int(os.path.basename(os.path.dirname(path))),
                        "gfx": f"gfx{v // 10000}{v // 100 % 100:x}{v % 100:x}",
                        "device_id": f"0x{props.get('device_id', 0):04x}",
                        "render_node": f"/dev/dri/renderD{props['drm_render_minor']}" if "drm_render_minor" in props
                        else None})  # fmt: skip
    return sorted(out, key=lambda g: g["node"])


def kfd_targets(root: str = "/") -> dict[str, str]:
    """PCI device id -> gfx target of each GPU in the KFD topology (:func:`kfd_gpus`)."""
    return {g["device_id"]: g["gfx"] for g in kfd_gpus(root)}


def amd_igpus(root: str = "/") -> tuple[str, ...]:
    """gfx targets of the AMD integrated GPUs (APUs: a Ryzen laptop's Radeon 780M is "gfx1103") on the PCI bus:
    from the KFD topology when amdgpu is loaded, else from the device id (``APU_GPUS``)."""
    kfd = kfd_targets(root)
    found = (kfd.get(dev) or APU_GPUS.get(dev) for vendor, dev in _pci_gpus(os.path.join(root, "sys/bus/pci/devices"))
             if vendor == "AMD")  # fmt: skip
    return tuple(gfx for gfx in found if gfx in IGPU_TARGETS)


def igpu_advice(gfx: str) -> str:
    """What is true for an AMD integrated GPU of this target (lesson 00): which wheel has its kernels, what it means."""
    if gfx in PYTORCH_WHEEL_TARGETS:
        where = (f"PyTorch's ROCm wheels list {gfx} (--index-url {ROCM_WHEEL_INDEX}), and so do AMD's multi-arch "
                 f'wheels: pip install "torch[device-{gfx}]" --index-url {AMD_WHEEL_INDEX}')  # fmt: skip
    elif gfx in AMD_WHEEL_TARGETS:
        where = (f"PyTorch's own ROCm wheels have no kernels for {gfx}; AMD's multi-arch wheels do: "
                 f'pip install "torch[device-{gfx}]" --index-url {AMD_WHEEL_INDEX}')  # fmt: skip
    else:
        where = f"no ROCm build of torch ships kernels for {gfx}"
    return (f"{where}. An integrated GPU shares the system's memory and trains far slower than a discrete GPU: "
            "the CPU is a fine machine for this course")  # fmt: skip
