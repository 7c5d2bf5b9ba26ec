"""Is this machine ready for the course? ``python -m helpers.doctor [--json]``.

Each check says PASS, WARN, FAIL or SKIP with a fix. Exit code 0 when nothing FAILs, 1 otherwise.
torch is imported lazily: a missing or broken torch is a FAIL in the report, not a crash.
Everything is read by :func:`gather` (the seam); :func:`run_checks` only decides, so tests can feed
it simulated machines.

JSON schema (``--json``, stable)::

    {"schema": 1, "ok": bool,
     "summary": {"PASS": int, "WARN": int, "FAIL": int, "SKIP": int},
     "checks": [{"name": str, "status": "PASS|WARN|FAIL|SKIP", "detail": str, "fix": str}, ...]}
"""

from __future__ import annotations

import argparse
import dataclasses
import glob
import json
import os
import platform
import sys
from dataclasses import dataclass, field

from helpers.device import DOCKER_GPU_FLAGS, ROCM_WHEEL_INDEX, Facts, detect

MIN_TORCH = (2, 5)


@dataclass(frozen=True)
class Check:
    name: str
    status: str  # PASS, WARN, FAIL, SKIP
    detail: str
    fix: str = ""


@dataclass(frozen=True)
class Machine:
    """What the doctor reads; every field can be simulated in tests."""

    python: tuple = tuple(sys.version_info[:3])
    torch_error: str | None = None  # the import error, when `import torch` failed
    facts: Facts | None = None  # helpers.device.read_facts(); None when torch is unusable
    dev_access: dict = field(default_factory=dict)  # "/dev/kfd" -> "ok" | "missing" | "denied"
    groups: tuple = ()
    is_root: bool = False
    shm_bytes: int | None = None
    op_errors: dict = field(default_factory=dict)  # "tiny op" / "bf16 op" -> None (ran) or the error text
    free_memory: tuple | None = None  # (free, total) bytes on the GPU
    torchvision: str | None = None  # version, or None when the import failed
    torchvision_error: str | None = None
    numpy_error: str | None = None  # None when torch.from_numpy works
    runtime: str = ""  # HIP/MIOpen runtime or NVIDIA driver, from torch.utils.collect_env


def _access(path: str) -> str:
    if not os.path.exists(path):
        return "missing"
    return "ok" if os.access(path, os.R_OK | os.W_OK) else "denied"


def _render_node() -> str:
    """The first /dev/dri/renderD* node (what the ROCm runtime opens), else /dev/dri itself."""
    nodes = sorted(glob.glob("/dev/dri/renderD*"))
    return nodes[0] if nodes else "/dev/dri"


def _groups() -> tuple:
    """Names of this process's groups; a GID with no name here (a host GID given with --group-add) as its number."""
    try:
        import grp
    except ImportError:  # not on Windows
        return ()
    names = set()
    for g in os.getgroups():
        try:
            names.add(grp.getgrgid(g).gr_name)
        except KeyError:
            names.add(str(g))
    return tuple(sorted(names))


def _shm() -> int | None:
    try:
        st = os.statvfs("/dev/shm")
        return st.f_frsize * st.f_blocks
    except OSError:
        return None


def _run_ops(device) -> dict:
    import torch

    errors = {}
    for name, dtype in (("tiny op", torch.float32), ("bf16 op", torch.bfloat16)):
        try:
            a = torch.ones(8, 8, device=device, dtype=dtype)
            assert (a @ a).float().sum().item() == 512.0
            errors[name] = None
        except Exception as e:  # any failure is the finding
            errors[name] = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
    return errors


def _runtime(facts: Facts) -> str:
    try:
        from torch.utils import collect_env

        env = collect_env.get_env_info()
        if facts.hip_version:
            return f"HIP runtime {env.hip_runtime_version}, MIOpen {env.miopen_runtime_version}"
        if facts.cuda_available:
            return f"NVIDIA driver {env.nvidia_driver_version}"
    except Exception:  # collect_env shells out; its absence is not a finding
        pass
    return ""


def gather() -> Machine:
    """Read this machine (the seam)."""
    base = dict(
        dev_access={p: _access(p) for p in ("/dev/kfd", _render_node())},
        groups=_groups(),
        is_root=hasattr(os, "geteuid") and os.geteuid() == 0,
        shm_bytes=_shm(),
    )
    try:
        import torch

        from helpers.device import pick_device, read_facts

        facts = read_facts()
    except Exception as e:  # ImportError, OSError from a broken install, ...
        return Machine(torch_error=f"{type(e).__name__}: {e}", **base)
    device = pick_device("auto", facts)
    try:  # a GPU that can be listed but not used (held in exclusive mode, ...): the tiny-op check reports why
        free = torch.cuda.mem_get_info(device) if device.type == "cuda" else None
    except RuntimeError:
        free = None
    tv, tv_err = None, None
    try:
        import torchvision

        tv = torchvision.__version__
    except Exception as e:
        tv_err = f"{type(e).__name__}: {e}"
    np_err = None
    try:
        import numpy

        torch.from_numpy(numpy.zeros(2))
    except Exception as e:
        np_err = f"{type(e).__name__}: {e}"
    return Machine(
        facts=facts,
        op_errors=_run_ops(device),
        free_memory=free,
        torchvision=tv,
        torchvision_error=tv_err,
        numpy_error=np_err,
        runtime=_runtime(facts),
        **base,
    )


def _version(v: str) -> tuple:
    parts = []
    for p in v.split("+")[0].split(".")[:2]:
        digits = "".join(ch for ch in p if ch.isdigit())
        parts.append(int(digits or 0))
    return tuple(parts)


def _torch_checks(m: Machine) -> list[Check]:
    f = m.facts
    info = detect(f)
    amd, nvidia = "AMD" in f.pci_gpu_vendors, "NVIDIA" in f.pci_gpu_vendors
    out = []
    ok = _version(f.torch_version) >= MIN_TORCH
    out.append(
        Check("torch version", "PASS" if ok else "FAIL", f.torch_version, "" if ok else "the lessons need torch >= 2.5")
    )
    build = "ROCm " + f.hip_version if f.hip_version else ("CUDA " + f.cuda_version if f.cuda_version else "CPU")
    gpus = ", ".join(f.pci_gpu_vendors) or "none found"
    if info.backend in ("rocm", "cuda", "mps"):  # a GPU in use is the answer, whatever else is on the bus
        other = " (an AMD GPU is on the bus too, such as the CPU's integrated graphics: not used)"
        other = other if amd and info.backend == "cuda" else ""
        out.append(Check("torch build", "PASS", f"{build} build, using {info.name}{other}"))
    elif amd and not f.hip_version:
        out.append(
            Check(
                "torch build",
                "FAIL",
                f"{build} build on a machine with an AMD GPU",
                f"bare metal: pip install torch torchvision --index-url {ROCM_WHEEL_INDEX}; "
                "in a rocm/pytorch container: a fresh container (never pip install torch in it)",
            )
        )
    elif nvidia and not f.cuda_version:
        out.append(Check("torch build", "FAIL", f"{build} build with an NVIDIA GPU", "install a CUDA wheel from PyPI"))
    elif not (amd or nvidia):
        out.append(
            Check(
                "torch build",
                "WARN",
                f"{build} build; GPUs: {gpus}: the lessons run on the CPU",
                "fine for learning; on a workshop machine this means the GPU is not visible (see /dev checks)",
            )
        )
    else:
        out.append(
            Check("torch build", "FAIL", f"{build} build; GPUs: {gpus}; torch sees none", "see the checks below")
        )
    if m.runtime:
        out.append(Check("GPU runtime", "PASS", m.runtime))
    if info.arch is None:
        out.append(Check("GPU target in this build", "SKIP", "no GPU in use"))
    elif info.arch_supported:
        listed = info.arch in f.arch_list  # else: compatible sm_XY cubins or PTX (helpers.device._arch_supported)
        how = "is in" if listed else "runs code the build has for an older target or PTX in"
        out.append(Check("GPU target in this build", "PASS", f"{info.arch} {how} torch.cuda.get_arch_list()"))
    else:
        out.append(
            Check(
                "GPU target in this build",
                "FAIL",
                f"{info.arch} not in {', '.join(f.arch_list)}",
                "install a build for this target (PYTORCH_ROCM_ARCH for your own builds)",
            )
        )
    override = f.env.get("HSA_OVERRIDE_GFX_VERSION")
    if override is None:
        out.append(Check("HSA_OVERRIDE_GFX_VERSION", "PASS", "not set"))
    elif "Instinct" in info.name:
        out.append(
            Check(
                "HSA_OVERRIDE_GFX_VERSION",
                "FAIL",
                f"set to {override} on {info.name}, a natively supported GPU",
                "unset HSA_OVERRIDE_GFX_VERSION",
            )
        )
    else:
        out.append(
            Check(
                "HSA_OVERRIDE_GFX_VERSION",
                "WARN",
                f"set to {override} (unofficial)",
                "only for consumer GPUs missing from the build; unset it when the build lists your GPU",
            )
        )
    clash = [w for w in info.warnings if "disagree" in w]
    out.append(
        Check(
            "visible-device variables",
            "WARN" if clash else "PASS",
            clash[0] if clash else "consistent",
            "set only HIP_VISIBLE_DEVICES (or only CUDA_VISIBLE_DEVICES)" if clash else "",
        )
    )
    return out


def _device_checks(m: Machine) -> list[Check]:
    f = m.facts
    nvidia_in_use = f.cuda_available and not f.hip_version  # an AMD iGPU beside it needs no /dev/kfd
    amd_stack = ("AMD" in f.pci_gpu_vendors or bool(f.hip_version)) and not nvidia_in_use
    out = []
    if not amd_stack:
        why = "a CUDA build using an NVIDIA GPU" if nvidia_in_use else "no AMD GPU and no ROCm build"
        out.append(Check("/dev/kfd and /dev/dri", "SKIP", why))
        out.append(Check("render/video groups", "SKIP", why))
    else:
        bad = {p: s for p, s in m.dev_access.items() if s != "ok"}
        if not bad:
            out.append(Check("/dev/kfd and /dev/dri", "PASS", "present and accessible"))
        else:
            detail = ", ".join(f"{p} {s}" for p, s in bad.items())
            fix = (
                f"docker run {DOCKER_GPU_FLAGS} ..."
                if "missing" in bad.values()
                else "add the user to render and video"
            )
            out.append(Check("/dev/kfd and /dev/dri", "FAIL", detail, fix))
        missing = [g for g in ("render", "video") if g not in m.groups]
        if m.is_root or not missing:
            out.append(Check("render/video groups", "PASS", "root" if m.is_root else "member of render and video"))
        else:
            status = "FAIL" if "denied" in m.dev_access.values() else "WARN"
            out.append(
                Check(
                    "render/video groups",
                    status,
                    f"not in {', '.join(missing)}",
                    "sudo usermod -aG render,video $USER; in a container: docker run --group-add with the host's "
                    "GIDs of /dev/kfd and /dev/dri/renderD* (stat -c %g), as make docker-lab does",
                )
            )
    where = "GPU" if f.cuda_available or f.mps_available else "CPU"
    for name, severity in (("tiny op", "FAIL"), ("bf16 op", "WARN")):
        err = m.op_errors.get(name)
        if name not in m.op_errors:
            out.append(Check(f"{name} on the {where}", "SKIP", "not run"))
        elif err is None:
            out.append(Check(f"{name} on the {where}", "PASS", "ran and gave the right answer"))
        else:
            fix = "run `python -m helpers.diagnose` on this error" if severity == "FAIL" else "use float16 + GradScaler"
            out.append(Check(f"{name} on the {where}", severity, err, fix))
    if m.free_memory:
        free, total = m.free_memory
        status = "PASS" if free >= 2 * 2**30 else "WARN"
        out.append(
            Check(
                "free GPU memory",
                status,
                f"{free / 2**30:.1f} of {total / 2**30:.1f} GiB free",
                "" if status == "PASS" else "another process holds the GPU: amd-smi / nvidia-smi",
            )
        )
    else:
        out.append(Check("free GPU memory", "SKIP", "no GPU in use"))
    return out


def _env_checks(m: Machine) -> list[Check]:
    out = []
    if m.shm_bytes is None:
        out.append(Check("/dev/shm", "SKIP", "not readable here"))
    else:
        ok = m.shm_bytes >= 2**30
        out.append(
            Check(
                "/dev/shm",
                "PASS" if ok else "WARN",
                f"{m.shm_bytes / 2**30:.1f} GiB",
                "" if ok else "DataLoader workers need shared memory: docker run --shm-size 8G (or --ipc=host)",
            )
        )
    if m.torchvision_error:
        out.append(Check("torchvision", "FAIL", m.torchvision_error, "install the torchvision that matches torch"))
    elif m.torchvision:
        t, tv = _version(m.facts.torch_version), _version(m.torchvision)
        ok = tv[1] == t[1] + 15  # torch 2.N pairs with torchvision 0.(N+15): 2.5/0.20 ... 2.14/0.29
        out.append(
            Check(
                "torchvision",
                "PASS" if ok else "WARN",
                f"{m.torchvision} with torch {m.facts.torch_version}",
                "" if ok else "install the torchvision release that pairs with this torch",
            )
        )
    out.append(
        Check(
            "numpy",
            "FAIL" if m.numpy_error else "PASS",
            m.numpy_error or "torch.from_numpy works",
            "reinstall the torch wheel that belongs to this numpy (torch >= 2.3 wheels work with numpy 1.x and 2.x); "
            "numpy<2 only for an extension compiled against numpy 1.x"
            if m.numpy_error
            else "",
        )
    )
    return out


def run_checks(m: Machine) -> list[Check]:
    """All verdicts for machine ``m``; never raises on missing information."""
    py = ".".join(map(str, m.python))
    py_ok = (3, 11) <= tuple(m.python[:2]) <= (3, 12)
    checks = [Check("Python", "PASS" if py_ok else "WARN", py, "" if py_ok else "the course is tested on 3.11-3.12")]
    if m.torch_error or m.facts is None:
        from helpers.diagnose import diagnose

        d = diagnose(m.torch_error or "")
        fix = d.fix[0] if d.category != "unknown" else "pip install -r requirements-torch.txt (CPU/NVIDIA), see README"
        checks.append(Check("import torch", "FAIL", m.torch_error or "torch unusable", fix))
        return checks + _env_checks_without_torch(m)
    checks.append(Check("import torch", "PASS", f"torch {m.facts.torch_version}"))
    return checks + _torch_checks(m) + _device_checks(m) + _env_checks(m)


def _env_checks_without_torch(m: Machine) -> list[Check]:
    return [c for c in _env_checks(dataclasses.replace(m, torchvision=None)) if c.name == "/dev/shm"]


def report(checks: list[Check]) -> dict:
    summary = {s: sum(c.status == s for c in checks) for s in ("PASS", "WARN", "FAIL", "SKIP")}
    return {
        "schema": 1,
        "ok": summary["FAIL"] == 0,
        "summary": summary,
        "checks": [dataclasses.asdict(c) for c in checks],
    }


def format_report(checks: list[Check]) -> str:
    lines = [f"{'course doctor':<28} ({platform.node() or 'this machine'})"]
    for c in checks:
        lines.append(f"[{c.status:4}] {c.name:<28} {c.detail}")
        if c.fix and c.status in ("WARN", "FAIL"):
            lines.append(f"{'':7}{'':28} fix: {c.fix}")
    s = report(checks)["summary"]
    verdict = "ready" if s["FAIL"] == 0 else "NOT ready: fix the FAIL lines first"
    lines.append(f"{s['PASS']} pass, {s['WARN']} warn, {s['FAIL']} fail, {s['SKIP']} skip -> {verdict}")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m helpers.doctor", description="Is this machine ready for the course?")
    ap.add_argument("--json", action="store_true", help="machine-readable output (schema in the module docstring)")
    a = ap.parse_args(argv)
    checks = run_checks(gather())
    print(json.dumps(report(checks), indent=2) if a.json else format_report(checks))
    return 0 if report(checks)["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
