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

from helpers.device import Facts
from helpers.doctor.checks import Check, device_checks, env_checks, torch_checks
from helpers.install import Install

__all__ = ["Check", "Machine", "format_report", "gather", "main", "report", "run_checks"]


@dataclass(frozen=True)
class Machine:
    """What the doctor reads; every field can be simulated in tests."""

    python: tuple = tuple(sys.version_info[:3])
    torch_error: str | None = None  # the import error, when `import torch` failed
    facts: Facts | None = None  # helpers.device.read_facts(); None when torch is unusable
    install: Install | None = None  # helpers.install.read_install(): which wheel, where ROCm comes from
    dev_access: dict = field(default_factory=dict)  # "/dev/kfd" -> "ok" | "missing" | "denied" (read-write for us?)
    dev_groups: dict = field(default_factory=dict)  # "/dev/kfd" -> (GID that owns it, its name here or None)
    gids: tuple = ()  # this process's group IDs, by number (a host GID given with --group-add has no name here)
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


def _owner(path: str) -> tuple[int, str | None] | None:
    """(GID, group name or None) of a device file; None when it is missing. A container started with
    ``--group-add $(stat -c %g /dev/kfd)`` has the host's GID but often no name for it."""
    try:
        gid = os.stat(path).st_gid
    except OSError:
        return None
    try:
        import grp

        return gid, grp.getgrgid(gid).gr_name
    except (ImportError, KeyError):  # no grp on Windows; a GID this image has no name for
        return gid, None


def _gids() -> tuple:
    """This process's group IDs (supplementary and effective), by number."""
    if not hasattr(os, "getgroups"):
        return ()
    return tuple(sorted({*os.getgroups(), os.getegid()}))


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
    nodes = ("/dev/kfd", _render_node())
    base = dict(
        dev_access={p: _access(p) for p in nodes},
        dev_groups={p: o for p in nodes if (o := _owner(p))},
        gids=_gids(),
        shm_bytes=_shm(),
    )
    try:
        import torch

        from helpers.device import pick_device, read_facts
        from helpers.install import read_install

        facts, install = read_facts(), read_install()
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
        install=install,
        op_errors=_run_ops(device),
        free_memory=free,
        torchvision=tv,
        torchvision_error=tv_err,
        numpy_error=np_err,
        runtime=_runtime(facts),
        **base,
    )


def run_checks(m: Machine) -> list[Check]:
    """All verdicts for machine ``m``; never raises on missing information."""
    py = ".".join(map(str, m.python))
    py_ok = (3, 11) <= tuple(m.python[:2]) <= (3, 13)
    fix = "the course is tested on 3.11-3.13" + (": its pinned numpy, matplotlib and scikit-learn need 3.11 or newer"
                                                  if tuple(m.python[:2]) < (3, 11) else "")  # fmt: skip
    checks = [Check("Python", "PASS" if py_ok else "WARN", py, "" if py_ok else fix)]
    if m.torch_error or m.facts is None:
        from helpers.diagnose import diagnose

        d = diagnose(m.torch_error or "")
        fix = d.fix[0] if d.category != "unknown" else "pip install -r requirements-torch.txt (CPU/NVIDIA), see README"
        checks.append(Check("import torch", "FAIL", m.torch_error or "torch unusable", fix))
        return checks + _env_checks_without_torch(m)
    checks.append(Check("import torch", "PASS", f"torch {m.facts.torch_version}"))
    return checks + torch_checks(m) + device_checks(m) + env_checks(m)


def _env_checks_without_torch(m: Machine) -> list[Check]:
    return [c for c in env_checks(dataclasses.replace(m, torchvision=None)) if c.name == "/dev/shm"]


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
