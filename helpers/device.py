"""Where am I running? Device detection for CUDA, ROCm, Apple MPS and CPU.

All facts about the machine are read in one place, :func:`read_facts`, so tests can hand
:func:`detect` and :func:`pick_device` a simulated machine (an MI300X, an H100, a laptop).

Example::

    >>> from helpers.device import detect, pick_device, describe
    >>> device = pick_device()          # explicit arg > $COURSE_DEVICE > auto
    >>> print(describe())               # what every notebook prints first

Facts used (checked in PyTorch's HIP notes, https://pytorch.org/docs/stable/notes/hip.html):
ROCm builds reuse ``torch.cuda`` and the device string ``"cuda"``; ``torch.version.hip`` tells
ROCm from CUDA; ``gcnArchName`` carries feature flags (``"gfx942:sramecc+:xnack-"``).
"""

from __future__ import annotations

import glob
import os
from dataclasses import dataclass, field

ENV_VAR = "COURSE_DEVICE"
# PyTorch's ROCm wheel index for the torch this course pins: torch 2.14 pairs with ROCm 7.14 (the compatibility matrix
# in pytorch/pytorch RELEASE.md). Each torch release ships for one or two ROCm versions: for another torch, take the
# index that https://pytorch.org/get-started/locally/ (or /previous-versions/) gives for it.
ROCM_WHEEL_INDEX = "https://download.pytorch.org/whl/rocm7.14"
# What a ROCm container needs (ROCm docs, "Running ROCm Docker containers"): the device files, and the groups that own
# them by the host's numeric GID (a group *name* may be missing in the image, or carry another GID there).
_GIDS = "--group-add $(stat -c %g /dev/kfd) --group-add $(stat -c %g /dev/dri/renderD128)"
DOCKER_GPU_FLAGS = f"--device=/dev/kfd --device=/dev/dri {_GIDS}"
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
VISIBILITY_VARS = ("HIP_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES")
ENV_KEYS = VISIBILITY_VARS + (ENV_VAR, "HSA_OVERRIDE_GFX_VERSION", "PYTORCH_ROCM_ARCH")


class DeviceError(ValueError):
    """A device was asked for that this machine does not have (one-line message)."""


@dataclass(frozen=True)
class GPU:
    name: str
    arch: str  # gcnArchName as reported ("gfx942:sramecc+:xnack-") or "sm_90"
    total_memory: int  # bytes


@dataclass(frozen=True)
class Facts:
    """Everything detection needs, read from torch and the OS by :func:`read_facts`."""

    torch_version: str
    hip_version: str | None = None
    cuda_version: str | None = None
    cuda_available: bool = False  # torch.cuda.is_available(): True on ROCm too
    gpus: tuple[GPU, ...] = ()
    arch_list: tuple[str, ...] = ()  # torch.cuda.get_arch_list(): targets the wheel was built for
    mps_available: bool = False
    accelerator: str | None = None  # torch.accelerator.current_accelerator().type when available
    env: dict = field(default_factory=dict)
    dev_kfd: bool = False
    dev_dri: bool = False
    pci_gpu_vendors: tuple[str, ...] = ()  # "AMD" / "NVIDIA", from /sys/bus/pci
    amd_igpus: tuple[str, ...] = ()  # gfx targets of the AMD *integrated* GPUs among them ("gfx1103")

    @property
    def amd_discrete(self) -> bool:
        """Is an AMD GPU on the bus that is not the CPU's integrated graphics (an Instinct, a Radeon card)?"""
        return self.pci_gpu_vendors.count("AMD") > len(self.amd_igpus)


@dataclass(frozen=True)
class DeviceInfo:
    backend: str  # "rocm", "cuda", "mps" or "cpu"
    device: object  # torch.device (kept as object so this module imports without torch)
    name: str
    count: int
    memory_gb: float | None
    arch: str | None  # "gfx942" (feature flags stripped) or "sm_90"
    torch_version: str
    hip_version: str | None
    cuda_version: str | None
    arch_supported: bool | None  # is `arch` in the wheel's get_arch_list()? None: not a GPU
    warnings: tuple[str, ...] = ()


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


def gpu_arch(torch, props) -> str:
    """The GPU target: ``gcnArchName`` on ROCm builds ("gfx942:sramecc+:xnack-"), ``sm_XY`` on CUDA builds.

    CUDA builds have a ``gcnArchName`` attribute too, holding the device *name* ("NVIDIA H100 80GB HBM3";
    torch/csrc/cuda/Module.cpp: "HIP-only property; reuse name attribute for CUDA builds"), so the build decides.
    """
    return props.gcnArchName if torch.version.hip else f"sm_{props.major}{props.minor}"


def device_arch(device, torch=None) -> str | None:
    """The GPU target of a torch device ("gfx942", "sm_90": gcnArchName before its ':'), None off the GPU.

    An index-less ``cuda`` device is torch's current GPU: ``get_device_properties`` takes either (its
    ``_get_device_index(device, optional=True)``), so ``cuda:1`` gives GPU 1's target, not GPU 0's.
    """
    if torch is None:
        import torch
    if device.type != "cuda":
        return None
    return gpu_arch(torch, torch.cuda.get_device_properties(device)).split(":")[0]


def memory_gib(device, torch=None) -> float | None:
    """The memory a lesson sizes its work by (lesson 02), in GiB: a GPU's total memory
    (``get_device_properties(device).total_memory``), on a Mac the working set Metal recommends
    (``torch.mps.recommended_max_memory()``: unified memory, shared with the system); None on the CPU.

        >>> memory_gib(torch.device("cpu")) is None
        True
    """
    if torch is None:
        import torch
    if device.type == "cuda":
        return torch.cuda.get_device_properties(device).total_memory / 2**30
    if device.type == "mps" and hasattr(torch.mps, "recommended_max_memory"):  # torch >= 2.5
        return torch.mps.recommended_max_memory() / 2**30
    return None


def with_index(device, torch=None):
    """The device with its GPU index spelled out: an index-less ``cuda`` is torch's *current* GPU here, but GPU 0 in a
    child process, so hand children this (lessons 02 and 04). Other devices come back as they are.

        >>> with_index(torch.device("cpu"))
        device(type='cpu')
    """
    if torch is None:
        import torch
    if device.type == "cuda" and device.index is None:
        return torch.device("cuda", torch.cuda.current_device())
    return device


def save_as_from(location: str, state: dict, path) -> None:
    """Lessons 01 and 04: write ``state`` to ``path`` as a machine whose tensors are on ``location`` ("cuda:0") writes
    it, without that machine: each storage tagged with ``location``, through torch.serialization.register_package in a
    child process. (A tagger registered here would stay, and tag every later torch.save of this process.)"""
    import subprocess
    import sys
    import tempfile

    import torch

    code = "\n".join([
        "import sys, torch",
        "state = torch.load(sys.argv[1], weights_only=True)",
        "ptrs = {t.untyped_storage().data_ptr() for t in state.values()}",
        "tag = lambda storage: sys.argv[3] if storage.data_ptr() in ptrs else None",
        "torch.serialization.register_package(1, tag, lambda obj, location: None)",
        "torch.save(state, sys.argv[2])",
    ])  # fmt: skip
    with tempfile.TemporaryDirectory() as d:
        plain = os.path.join(d, "plain.pt")
        torch.save(state, plain)
        subprocess.run([sys.executable, "-c", code, plain, str(path), location], check=True, capture_output=True)


def read_facts(torch=None, root: str = "/", environ=None) -> Facts:
    """The one seam that reads torch and the OS (tests pass a fake ``torch``, ``root`` file tree and ``environ``)."""
    if torch is None:
        import torch

    gpus: tuple[GPU, ...] = ()
    arch_list: tuple[str, ...] = ()
    # is_available() asks the GPU runtime, device_count() what torch will index: they differ when torch parses a
    # visible-device variable the runtime ignores (HIP_VISIBLE_DEVICES="" on ROCm): no GPU torch can use, then.
    cuda_ok = torch.cuda.is_available() and torch.cuda.device_count() > 0
    if cuda_ok:
        props = [torch.cuda.get_device_properties(i) for i in range(torch.cuda.device_count())]
        gpus = tuple(GPU(p.name, gpu_arch(torch, p), p.total_memory) for p in props)
        arch_list = tuple(torch.cuda.get_arch_list())
    accel = None
    if hasattr(torch, "accelerator") and torch.accelerator.is_available():  # torch >= 2.6
        accel = torch.accelerator.current_accelerator().type
    mps = getattr(torch.backends, "mps", None)
    return Facts(
        torch_version=torch.__version__,
        hip_version=torch.version.hip,
        cuda_version=torch.version.cuda,
        cuda_available=cuda_ok,
        gpus=gpus,
        arch_list=arch_list,
        mps_available=bool(mps and mps.is_available()),
        accelerator=accel,
        env={k: v for k, v in (os.environ if environ is None else environ).items() if k in ENV_KEYS},
        dev_kfd=os.path.exists(os.path.join(root, "dev/kfd")),
        dev_dri=os.path.isdir(os.path.join(root, "dev/dri")),
        pci_gpu_vendors=pci_gpu_vendors(os.path.join(root, "sys/bus/pci/devices")),
        amd_igpus=amd_igpus(root),
    )


def _arch_supported(arch: str, arch_list: tuple[str, ...]) -> bool:
    """Is this GPU target in the wheel? ROCm: the exact gfx name. CUDA (CUDA C++ Programming Guide, "Binary
    Compatibility"): a cubin for sm_XY runs on X.Z with Z >= Y (sm_86 code on an sm_89 L40S), an arch-specific one
    (sm_90a) on X.Y only, and PTX (compute_XY) is compiled at load time for any GPU of X.Y or newer."""
    if arch in arch_list:
        return True
    if not arch.startswith("sm_"):
        return False
    cap = _cap(arch)
    for a in arch_list:
        if a.startswith("compute_") and _cap(a) <= cap:
            return True
        if a.startswith("sm_") and _cap(a) // 10 == cap // 10 and _cap(a) <= cap:
            if not a.endswith("a") or _cap(a) == cap:
                return True
    return False


def _cap(target: str) -> int:
    """ "sm_89" -> 89, "sm_90a" -> 90, "compute_120" -> 120."""
    return int("".join(ch for ch in target if ch.isdigit()))


def _warnings(f: Facts, backend: str, arch: str | None, supported: bool | None) -> list[str]:
    w = []
    if f.amd_discrete and f.hip_version is None and backend != "cuda":  # not an iGPU, not beside a working NVIDIA GPU
        w.append(
            "AMD GPU present but this torch has no ROCm support (torch.version.hip is None): "
            f"install a ROCm wheel (--index-url {ROCM_WHEEL_INDEX}) or use a rocm/pytorch image"
        )
    if "NVIDIA" in f.pci_gpu_vendors and not f.cuda_available:
        if f.cuda_version is None:
            w.append("NVIDIA GPU present but this torch has no CUDA support: install a CUDA wheel")
        else:  # a driver older than the wheel's CUDA, or no driver loaded
            w.append(f"NVIDIA GPU present and a CUDA {f.cuda_version} build, but torch sees no GPU: check the driver "
                     f"(nvidia-smi shows the newest CUDA it supports)")  # fmt: skip
    if f.hip_version and not f.dev_kfd:
        w.append(f"ROCm build of torch but /dev/kfd is missing: start the container with {DOCKER_GPU_FLAGS}")
    elif f.hip_version and not f.cuda_available and backend == "cpu":
        w.append("ROCm build of torch but no usable GPU: run `python -m helpers.doctor`")
    if supported is False:
        fix = "install a build that lists it in torch.cuda.get_arch_list()"
        if arch in AMD_WHEEL_TARGETS:
            fix = f'AMD\'s multi-arch wheels have it: pip install "torch[device-{arch}]" --index-url {AMD_WHEEL_INDEX}'
        w.append(f"this torch build has no kernels for {arch} (built for {', '.join(f.arch_list) or 'nothing'}): {fix}")
    hip, cuda = f.env.get("HIP_VISIBLE_DEVICES"), f.env.get("CUDA_VISIBLE_DEVICES")
    if hip is not None and cuda is not None and hip != cuda:
        w.append(f"HIP_VISIBLE_DEVICES={hip!r} and CUDA_VISIBLE_DEVICES={cuda!r} disagree: set only one")
    return w


def detect(facts: Facts | None = None) -> DeviceInfo:
    """Describe the best device of this machine (or of the simulated ``facts``)."""
    import torch

    f = facts or read_facts()
    arch = supported = None
    if f.cuda_available and f.gpus:
        backend = "rocm" if f.hip_version else "cuda"
        gpu = f.gpus[0]
        arch = gpu.arch.split(":")[0]  # "gfx942:sramecc+:xnack-" -> "gfx942"
        supported = _arch_supported(arch, f.arch_list)
        name, count, mem, dev = gpu.name, len(f.gpus), gpu.total_memory / 2**30, torch.device("cuda", 0)
    elif f.mps_available:
        backend, name, count, mem, dev = "mps", "Apple MPS", 1, None, torch.device("mps")
    else:
        backend, name, count, mem, dev = "cpu", "CPU", 1, None, torch.device("cpu")
    return DeviceInfo(
        backend=backend,
        device=dev,
        name=name,
        count=count,
        memory_gb=round(mem, 1) if mem else None,
        arch=arch,
        torch_version=f.torch_version,
        hip_version=f.hip_version,
        cuda_version=f.cuda_version,
        arch_supported=supported,
        warnings=tuple(_warnings(f, backend, arch, supported)),
    )


def available_devices(facts: Facts) -> list[str]:
    """Device strings this machine accepts, e.g. ['cuda:0', 'cuda:1', 'cpu']."""
    out = [f"cuda:{i}" for i in range(len(facts.gpus))] if facts.cuda_available else []
    return out + (["mps"] if facts.mps_available else []) + ["cpu"]


def pick_device(prefer: str | None = None, facts: Facts | None = None):
    """The torch.device to use: ``prefer``, else ``$COURSE_DEVICE``, else the best one available.

    ``"auto"`` means: the current accelerator (``torch.accelerator``, PyTorch >= 2.6; the same
    ``"cuda"`` device on NVIDIA and AMD), else MPS, else CPU. A device that is not here raises
    :class:`DeviceError` naming what is, e.g. ``pick_device("cuda")`` on a laptop.

        >>> pick_device("cpu")
        device(type='cpu')
    """
    import torch

    f = facts or read_facts()
    choice = prefer if prefer is not None else (f.env.get(ENV_VAR) or "auto")
    where = "argument" if prefer is not None else f"${ENV_VAR}"
    have = available_devices(f)
    choice = choice.strip().lower()
    if choice == "auto":  # torch.accelerator's answer, when torch can index a GPU of it
        if f.cuda_available:
            return torch.device("cuda")
        return torch.device("mps" if f.accelerator == "mps" or f.mps_available else "cpu")
    if choice.split(":")[0] in ("rocm", "hip"):
        raise DeviceError(
            f"{choice!r} ({where}) is not a PyTorch device type: AMD GPUs are 'cuda' in PyTorch; "
            f"available here: {', '.join(have)}"
        )
    try:
        dev = torch.device(choice)
    except RuntimeError:
        raise DeviceError(f"unknown device {choice!r} ({where}); available here: {', '.join(have)}") from None
    wanted = f"{dev.type}:{dev.index or 0}" if dev.type == "cuda" else dev.type
    if wanted not in have:
        raise DeviceError(f"device {choice!r} ({where}) is not available here; available: {', '.join(have)}")
    return dev


def describe(info: DeviceInfo | None = None) -> str:
    """A few lines for the top of every notebook: backend, device, versions, warnings."""
    d = info or detect()
    versions = f"torch {d.torch_version}" + (f", HIP {d.hip_version}" if d.hip_version else "")
    versions += f", CUDA {d.cuda_version}" if d.cuda_version and not d.hip_version else ""
    lines = [f"backend: {d.backend}  device: {d.device}  ({d.name})", f"versions: {versions}"]
    if d.arch:
        mem = f", {d.memory_gb} GiB" if d.memory_gb else ""
        lines.append(f"gpu: {d.count} x {d.arch}{mem}, in this build: {'yes' if d.arch_supported else 'NO'}")
    lines += [f"warning: {w}" for w in d.warnings]
    return "\n".join(lines)
