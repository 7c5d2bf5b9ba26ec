"""Where am I running? Device detection for CUDA, ROCm, Apple MPS and CPU.

All facts about the machine are read in one place, :func:`read_facts` (sysfs through :mod:`helpers.hardware`), so
tests can hand :func:`detect` and :func:`pick_device` a simulated machine (an MI300X, an H100, a laptop).

Example::

    >>> from helpers.device import describe, pick_device
    >>> device = pick_device()          # explicit arg > $COURSE_DEVICE > auto
    >>> print(describe())               # what every notebook prints first
    backend: ...

Facts used (checked in PyTorch's HIP notes, https://pytorch.org/docs/stable/notes/hip.html):
ROCm builds reuse ``torch.cuda`` and the device string ``"cuda"``; ``torch.version.hip`` tells
ROCm from CUDA; ``gcnArchName`` carries feature flags (``"gfx942:sramecc+:xnack-"``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from helpers.hardware import AMD_WHEEL_INDEX, AMD_WHEEL_TARGETS, ROCM_WHEEL_INDEX, amd_igpus, pci_gpu_vendors

ENV_VAR = "COURSE_DEVICE"
# What a ROCm container needs (ROCm docs, "Running ROCm Docker containers"): the device files, and the groups that own
# them by the host's numeric GID (a group *name* may be missing in the image, or carry another GID there).
_GIDS = "--group-add $(stat -c %g /dev/kfd) --group-add $(stat -c %g /dev/dri/renderD128)"
DOCKER_GPU_FLAGS = f"--device=/dev/kfd --device=/dev/dri {_GIDS}"
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

        >>> import torch
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

        >>> import torch
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
