"""Lesson 06's exercises: 06a (why does this hang?), 06b (the backend)."""

from __future__ import annotations

from helpers.exercises.core import check, say


@check("06a")
def check_hang_fixed(script_source, timeout=120):
    """Exercise 06a: the two-rank script finishes (run for real with torchrun and gloo on the CPU)."""
    import tempfile
    from pathlib import Path

    from helpers.dist import run_torchrun

    with tempfile.TemporaryDirectory() as d:
        script = Path(d) / "two_ranks.py"
        script.write_text(script_source)
        r = run_torchrun(str(script), nproc=2, timeout=timeout, env={"CUDA_VISIBLE_DEVICES": "-1",
                                                                      "HIP_VISIBLE_DEVICES": "-1"})  # fmt: skip
    if r.timed_out:
        return False, say("06a.hanging", "still hanging after {timeout} s", timeout=timeout)
    if r.returncode != 0:
        waited = [ln.strip() for ln in r.output.splitlines() if "imed out" in ln]
        if not waited:
            last = r.output.strip().splitlines()[-1][:160] if r.output.strip() else ""
            return False, say("06a.failed", "the script failed: {last}", last=last)
        return False, say(
            "06a.waited",
            "{who} waited in a collective the other rank never called: every rank must run "
            "the same collectives, the same number of times ({line})",
            who=waited[0].split(": ", 1)[0],
            line=waited[0][-70:],
        )
    if r.output.count("done") < 2:
        return False, say("06a.done_missing", "both ranks must print 'done' at the end")
    return True, say("06a.done", "both ranks finished")


@check("06b")
def check_backend_choice(backend_for):
    """Exercise 06b: the torch.distributed backend for a device type, on NVIDIA and AMD."""
    cases = [("cuda", False, "nccl"), ("cuda", True, "nccl"), ("cpu", False, "gloo")]
    for device_type, rocm, want in cases:
        got = backend_for(device_type, rocm)
        if got != want:
            if rocm:
                return False, say(
                    "06b.amd",
                    "on an AMD GPU (ROCm) got {got!r}, expected {want!r} ('nccl' is RCCL on "
                    "ROCm; there is no 'rccl' backend)",
                    got=got,
                    want=want,
                )
            if device_type == "cuda":
                return False, say("06b.nvidia", "on an NVIDIA GPU got {got!r}, expected {want!r}", got=got, want=want)
            return False, say("06b.cpu", "on the CPU got {got!r}, expected {want!r}", got=got, want=want)
    return True, say("06b.done", "'nccl' on NVIDIA and AMD GPUs, 'gloo' on the CPU")
