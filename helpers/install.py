"""How torch and ROCm got onto this machine: the four ways of late 2026 (lesson 00), told apart for the doctor.

1. PyTorch's own index: ``pip install torch torchvision --index-url https://download.pytorch.org/whl/rocm7.14``.
   Its ROCm 7.14 wheels bring ROCm itself as pip packages (``rocm[libraries,device-all]``, pytorch#191688).
2. AMD's multi-arch wheels (TheRock): ``pip install "torch[device-gfx942]" --index-url <AMD's index>``; the extra
   installs ``amd-torch-device-gfx942``, this GPU's kernels (the wheel's metadata lists the ``device-*`` extras).
   Without it kernel launches fail with ``hipErrorInvalidImage`` (ROCm/TheRock#7839).
3. ROCm from pip (``rocm``, ``rocm-sdk-core``, ``rocm-sdk-devel``, the ``rocm-sdk`` command): no ``/opt/rocm`` at
   all; building an extension needs ``rocm[devel]`` and ``rocm-sdk init`` (pytorch#196503).
4. The ``rocm/pytorch`` image: all of it preinstalled (ROCm 10.x tags: a venv in ``/opt/venv``).

:func:`read_install` is the seam (installed distributions, a few paths); :func:`torch_verdict` and
:func:`compiler_verdict` only decide, so tests hand them simulated installs.

    >>> from helpers.install import read_install
    >>> read_install().torch_dir.endswith("torch")
    True
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass

from helpers.device import Facts
from helpers.hardware import AMD_WHEEL_INDEX


@dataclass(frozen=True)
class Install:
    torch_dir: str  # where this Python's torch lives (.venv/..., /opt/venv/... in the ROCm 10.x images)
    amd_build: bool = False  # AMD's multi-arch torch: its metadata offers the [device-gfxNNNN] extras
    device_packages: tuple[str, ...] = ()  # gfx targets of the amd-torch-device-gfx* packages installed
    rocm_sdk_core: str | None = None  # version of ROCm from pip (rocm-sdk-core), None when not installed
    rocm_sdk_devel: str | None = None  # rocm-sdk-devel: headers and compilers for building extensions
    system_rocm: str | None = None  # a system install: /opt/rocm/core-X.Y (ROCm 7.14+) or /opt/rocm
    hipcc: str | None = None  # hipcc on PATH


def read_install(torch=None, root: str = "/") -> Install:
    """The seam: read the installed Python distributions and the ROCm paths of this machine."""
    from importlib import metadata

    if torch is None:
        import torch
    names, extras = {}, []
    for d in metadata.distributions():
        name = (d.metadata["Name"] or "").lower().replace("_", "-")
        names[name] = d.version
        if name == "torch":  # AMD's torch offers torch[device-gfx942]; PyTorch's own ROCm wheels have no such extra
            extras = d.metadata.get_all("Provides-Extra") or []
    torch_dir = os.path.dirname(torch.__file__)
    core, opt = os.path.join(root, "opt/rocm/core"), os.path.join(root, "opt/rocm")
    system = os.path.realpath(core) if os.path.exists(core) else (os.path.realpath(opt) if os.path.isdir(opt) else None)
    return Install(
        torch_dir=torch_dir,
        amd_build=any(e.startswith("device-") for e in extras),
        device_packages=tuple(
            sorted(n.removeprefix("amd-torch-device-") for n in names if n.startswith("amd-torch-device-gfx"))
        ),
        rocm_sdk_core=names.get("rocm-sdk-core"),
        rocm_sdk_devel=names.get("rocm-sdk-devel"),
        system_rocm=system,
        hipcc=shutil.which("hipcc"),
    )


def _rocm_source(inst: Install) -> str:
    if inst.rocm_sdk_core:
        return f"ROCm {inst.rocm_sdk_core} from pip (rocm-sdk-core)"
    return f"ROCm in {inst.system_rocm}" if inst.system_rocm else "no ROCm install found"


def torch_verdict(f: Facts, inst: Install, arch: str | None, op_failed: bool) -> tuple[str, str, str]:
    """(status, detail, fix) for "torch install": which of the four ways this torch came, and, for AMD's multi-arch
    wheels, whether this GPU's kernels came with it."""
    where = f"in {inst.torch_dir}"
    if not f.hip_version:
        kind = f"a CUDA {f.cuda_version} wheel" if f.cuda_version else "a CPU-only wheel"
        return "PASS", f"{kind} (torch {f.torch_version}) {where}", ""
    if not (inst.amd_build or inst.device_packages):
        return "PASS", f"PyTorch's ROCm wheel (torch {f.torch_version}), {_rocm_source(inst)}, {where}", ""
    packages = ", ".join(inst.device_packages) or "none"
    detail = f"AMD's multi-arch wheel (torch {f.torch_version}), device packages: {packages}; {_rocm_source(inst)}"
    if arch is None or arch in inst.device_packages:
        return "PASS", f"{detail}, {where}", ""
    # The GPU's own package is missing: a generic one (amd-torch-device-gfx11) may still carry its kernels, so the
    # tiny op decides between a WARN and the FAIL that hipErrorInvalidImage will be.
    fix = (f'pip install "torch[device-{arch}]" "torchvision[device-{arch}]" --index-url {AMD_WHEEL_INDEX} '
           "(the same torch version)")  # fmt: skip
    why = "kernel launches fail with hipErrorInvalidImage" if op_failed else "its kernels may be missing"
    return ("FAIL" if op_failed else "WARN"), f"{detail}: no package for {arch}, {why}", fix


def compiler_verdict(f: Facts, inst: Install) -> tuple[str, str, str]:
    """(status, detail, fix) for "ROCm compiler": can lesson 05 (and your own extensions) build HIP code here?"""
    if not f.hip_version:
        return "SKIP", "not a ROCm build of torch", ""
    if inst.hipcc:
        return "PASS", f"hipcc: {inst.hipcc}", ""
    if inst.rocm_sdk_devel:
        init = "run `rocm-sdk init` once, then ROCM_HOME=$(rocm-sdk path --root)"
        return "PASS", f"rocm-sdk-devel {inst.rocm_sdk_devel} ({init})", ""
    fix = ('ROCm from pip: pip install "rocm[devel]" && rocm-sdk init && export ROCM_HOME=$(rocm-sdk path --root); '
           "a system ROCm: install its hipcc")  # fmt: skip
    return "WARN", "no hipcc and no rocm-sdk-devel: lesson 05 cannot build its GPU kernels here", fix
