"""The doctor's verdicts (lesson 00): each check reads a :class:`helpers.doctor.Machine` and says PASS, WARN, FAIL or
SKIP with a fix. Nothing here reads the machine; :func:`helpers.doctor.gather` does, so tests simulate machines.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from helpers.device import DOCKER_GPU_FLAGS, Facts, detect
from helpers.hardware import AMD_WHEEL_INDEX, AMD_WHEEL_TARGETS, IGPU_TARGETS, ROCM_WHEEL_INDEX, igpu_advice
from helpers.install import compiler_verdict, torch_verdict

if TYPE_CHECKING:  # the machine's readings; defined beside gather(), which makes them
    from helpers.doctor import Machine

MIN_TORCH = (2, 5)


@dataclass(frozen=True)
class Check:
    name: str
    status: str  # PASS, WARN, FAIL, SKIP
    detail: str
    fix: str = ""


def _version(v: str) -> tuple:
    parts = []
    for p in v.split("+")[0].split(".")[:2]:
        digits = "".join(ch for ch in p if ch.isdigit())
        parts.append(int(digits or 0))
    return tuple(parts)


def torch_checks(m: Machine) -> list[Check]:
    f = m.facts
    info = detect(f)
    ok = _version(f.torch_version) >= MIN_TORCH
    out = [
        Check("torch version", "PASS" if ok else "FAIL", f.torch_version, "" if ok else "the lessons need torch >= 2.5")
    ]
    out.append(_build_check(f, info))
    if m.install:
        op_failed = bool(m.op_errors.get("tiny op")) and f.cuda_available
        out.append(Check("torch install", *torch_verdict(f, m.install, info.arch, op_failed)))
    if m.runtime:
        out.append(Check("GPU runtime", "PASS", m.runtime))
    out += [_target_check(f, info), _override_check(f, info)]
    clash = [w for w in info.warnings if "disagree" in w]
    fix = "set only HIP_VISIBLE_DEVICES (or only CUDA_VISIBLE_DEVICES)" if clash else ""
    out.append(Check("visible-device variables", "WARN" if clash else "PASS", clash[0] if clash else "consistent", fix))
    if m.install and f.hip_version:
        out.append(Check("ROCm compiler", *compiler_verdict(f, m.install)))
    return out


def _build_check(f: Facts, info) -> Check:
    """Is this torch built for the GPU on the bus? A GPU in use is the answer, whatever else is there."""
    amd, nvidia = "AMD" in f.pci_gpu_vendors, "NVIDIA" in f.pci_gpu_vendors
    build = "ROCm " + f.hip_version if f.hip_version else ("CUDA " + f.cuda_version if f.cuda_version else "CPU")
    gpus = ", ".join(f.pci_gpu_vendors) or "none found"
    if info.backend in ("rocm", "cuda", "mps"):
        other = " (an AMD GPU is on the bus too, such as the CPU's integrated graphics: not used)"
        return Check(
            "torch build", "PASS", f"{build} build, using {info.name}{other if amd and info.backend == 'cuda' else ''}"
        )
    if f.amd_discrete and not f.hip_version:
        return Check("torch build", "FAIL", f"{build} build on a machine with an AMD GPU",
                     f"bare metal: pip install torch torchvision --index-url {ROCM_WHEEL_INDEX}; "
                     "in a rocm/pytorch container: a fresh container (never pip install torch in it)")  # fmt: skip
    if nvidia and not f.cuda_version:
        return Check("torch build", "FAIL", f"{build} build with an NVIDIA GPU", "install a CUDA wheel from PyPI")
    if f.amd_igpus and not f.hip_version:  # a Ryzen laptop or desktop: its Radeon graphics are part of the CPU
        igpus = ", ".join(f.amd_igpus)
        detail = f"{build} build; an AMD integrated GPU ({igpus}), not used by this build: the lessons run on the CPU"
        return Check("torch build", "WARN", detail, igpu_advice(f.amd_igpus[0]))
    if not (amd or nvidia):
        return Check("torch build", "WARN", f"{build} build; GPUs: {gpus}: the lessons run on the CPU",
                     "fine for learning: every lesson runs on the CPU; on a workshop GPU machine it means torch sees "
                     "no GPU: run the doctor inside the course's container")  # fmt: skip
    return Check("torch build", "FAIL", f"{build} build; GPUs: {gpus}; torch sees none", "see the checks below")


def _target_check(f: Facts, info) -> Check:
    if info.arch is None:
        return Check("GPU target in this build", "SKIP", "no GPU in use")
    if info.arch_supported:
        listed = info.arch in f.arch_list  # else: compatible sm_XY cubins or PTX (helpers.device._arch_supported)
        how = "is in" if listed else "runs code the build has for an older target or PTX in"
        return Check("GPU target in this build", "PASS", f"{info.arch} {how} torch.cuda.get_arch_list()")
    return Check("GPU target in this build", "FAIL", f"{info.arch} not in {', '.join(f.arch_list)}",
                 _missing_target_fix(f, info.arch))  # fmt: skip


def _override_check(f: Facts, info) -> Check:
    override = f.env.get("HSA_OVERRIDE_GFX_VERSION")
    if override is None:
        return Check("HSA_OVERRIDE_GFX_VERSION", "PASS", "not set")
    if "Instinct" in info.name:
        return Check("HSA_OVERRIDE_GFX_VERSION", "FAIL", f"set to {override} on {info.name}, a natively supported GPU",
                     "unset HSA_OVERRIDE_GFX_VERSION")  # fmt: skip
    return Check("HSA_OVERRIDE_GFX_VERSION", "WARN", f"set to {override} (unofficial)",
                 "only for consumer GPUs missing from the build; unset it when the build lists your GPU")  # fmt: skip


def _missing_target_fix(f: Facts, arch: str) -> str:
    fix = "install a build for this target (PYTORCH_ROCM_ARCH for your own builds)"
    if arch in AMD_WHEEL_TARGETS:
        fix = f'AMD\'s multi-arch wheels have it: pip install "torch[device-{arch}]" --index-url {AMD_WHEEL_INDEX}'
    if arch in IGPU_TARGETS and len(f.gpus) > 1:  # the CPU's graphics listed first, before a supported card
        fix = f"{arch} is the CPU's integrated GPU: use the other one, HIP_VISIBLE_DEVICES=1 (or turn it off); " + fix
    return fix


def _dev_access_check(m: Machine) -> Check:
    """What the ROCm runtime needs: /dev/kfd and a render node it can open read-write. Access is what counts, not
    group names: a container given the host's GIDs by number (--group-add 110) has no name for them."""
    missing = [p for p, s in m.dev_access.items() if s == "missing"]
    if missing:
        return Check("/dev/kfd and /dev/dri", "FAIL", ", ".join(f"{p} missing" for p in missing),
                     f"docker run {DOCKER_GPU_FLAGS} ...")  # fmt: skip
    denied = [p for p, s in m.dev_access.items() if s == "denied"]
    if not denied:
        return Check("/dev/kfd and /dev/dri", "PASS", f"read-write for this process: {', '.join(m.dev_access)}")
    owners = {p: m.dev_groups.get(p, (None, None)) for p in denied}
    detail = "; ".join(f"{p}: no read-write access (group {_group(*owners[p])})" for p in denied)
    detail += f"; this process has GIDs {', '.join(map(str, m.gids)) or 'none'}"
    add = " ".join(f"--group-add {gid}" for gid in dict.fromkeys(g for g, _ in owners.values() if g is not None))
    names = ",".join(dict.fromkeys(n for _, n in owners.values() if n))
    fix = f"in a container: docker run {add or '--group-add $(stat -c %g /dev/kfd)'} (the host's GIDs, by number)"
    if names:
        fix += f"; bare metal: sudo usermod -aG {names} $USER, then log in again"
    return Check("/dev/kfd and /dev/dri", "FAIL", detail, fix)


def _group(gid, name) -> str:
    return "unknown" if gid is None else f"{gid}" + (f" '{name}'" if name else ", no name in this image")


def device_checks(m: Machine) -> list[Check]:
    f = m.facts
    nvidia_in_use = f.cuda_available and not f.hip_version  # an AMD iGPU beside it needs no /dev/kfd
    amd_stack = (f.amd_discrete or bool(f.hip_version)) and not nvidia_in_use
    out = []
    if not amd_stack:
        why = "no ROCm build, and no AMD GPU but the CPU's graphics" if f.amd_igpus else "no AMD GPU and no ROCm build"
        why = "a CUDA build using an NVIDIA GPU" if nvidia_in_use else why
        out.append(Check("/dev/kfd and /dev/dri", "SKIP", why))
    elif not m.dev_access:
        out.append(Check("/dev/kfd and /dev/dri", "SKIP", "not readable here"))
    else:
        out.append(_dev_access_check(m))
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


def env_checks(m: Machine) -> list[Check]:
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
