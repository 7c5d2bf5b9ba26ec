"""Lesson 01's exercises: 01a (port an inference snippet), 01b (which build is this?)."""

from __future__ import annotations

from helpers.exercises.core import Hint, check, portcheck_hint, say
from helpers.exercises.simulated import NO_DRIVER, on_gpu, simulated_gpu, simulated_laptop


def section_3() -> str:
    return say(
        "01a.section_3",
        "lesson 01, section 3: choose it once with pick_device() (the course's helper: "
        "torch.accelerator's device when one is usable, else MPS, else the CPU), or "
        'torch.accelerator.current_accelerator(check_available=True) or torch.device("cpu")',
    )


def _run_on_machines(predict, machines):
    """{where: (result, moved)} of predict on each simulated machine, or the Message that says why it failed."""
    import torch

    runs = {}
    for where, machine in machines.items():
        with machine() as placement:
            try:
                runs[where] = predict(torch.randn(5, 64)), placement.moved
            except RuntimeError as e:
                if NO_DRIVER in str(e):
                    return say(
                        "01a.no_driver",
                        "on {where} the code sent tensors to 'cuda': "
                        "current_accelerator() answers what the build was made for, usable or not (the "
                        "trap of {section})",
                        where=where,
                        section=section_3(),
                    )
                if "same device" in str(e):
                    return say(
                        "01a.mismatch",
                        "on {where}: {error}: move every input with .to(device), like the model",
                        where=where,
                        error=str(e).strip(),
                    )
                raise
    return runs


def _wrong_result(runs):
    """The Message for the first run whose result is not CPU class ids of shape (5,), or None."""
    import torch

    for where, (result, _) in runs.items():
        if not isinstance(result, torch.Tensor):
            return say(
                "01a.not_tensor", "predict returned {kind}, expected a tensor of class ids", kind=type(result).__name__
            )
        if on_gpu(result):
            return say(
                "01a.stays_on_gpu",
                "on {where} the class ids stay on the GPU (cuda:0): end with .cpu() so callers can use them",
                where=where,
            )
        if result.shape != (5,) or result.dtype != torch.int64:
            return say(
                "01a.shape",
                "expected 5 class ids (shape (5,), int64), got shape {shape}, {dtype}",
                shape=tuple(result.shape),
                dtype=result.dtype,
            )
    return None


@check("01a")
def check_portable_predict(predict):
    """Exercise 01a: `predict(batch)` runs on this machine, on a laptop with a CUDA wheel and no GPU, and on a GPU
    machine (the last two simulated); it uses the GPU where there is one and returns class ids on the CPU."""
    import torch

    if not callable(predict):
        return False, say("core.define", "define a function `{signature}`", signature="predict(batch)")
    hint = portcheck_hint(predict)
    if hint:
        return False, hint
    laptop = say("01a.laptop", "a laptop with a CUDA build of torch and no GPU")
    gpu = say("01a.gpu_machine", "a GPU machine")
    runs = _run_on_machines(predict, {laptop: simulated_laptop, gpu: simulated_gpu})
    if not isinstance(runs, dict):
        return False, runs
    out, moved = runs[gpu]
    if not moved:
        return False, say(
            "01a.hardwired",
            "on a GPU machine this code still computes on the CPU: the device is hard-wired. {section}",
            section=section_3(),
        )
    wrong = _wrong_result(runs)
    if wrong:
        return False, wrong
    here = predict(torch.randn(5, 64))
    if here.device.type != "cpu":
        return False, say(
            "01a.not_cpu",
            "the result is on {device}: end with .cpu() so callers can use it anywhere",
            device=here.device,
        )
    return True, say(
        "01a.done",
        "portable: it picks the GPU where there is one (simulated here), falls back to the "
        "CPU on a laptop, and returns CPU class ids",
    )


class _Build:
    """A stand-in for the torch module of one build: only torch.version answers (what the exercise may read)."""

    def __init__(self, hip, cuda):
        import types

        self.version = types.SimpleNamespace(hip=hip, cuda=cuda)

    def __getattr__(self, name):
        raise Hint(
            say(
                "01b.read_other",
                "your function read torch.{name}: decide from torch.version.hip and "
                "torch.version.cuda only. The build says what it is; the GPU is not asked here "
                "(torch.cuda.is_available() is True on ROCm and CUDA alike, and a version string's '+rocm' tag is "
                "only a habit of the wheel indexes)",
                name=name,
            )
        )


@check("01b")
def check_build_kind(build_kind):
    """Exercise 01b: `build_kind(torch)` says "rocm", "cuda" or "cpu" from torch.version, without touching a GPU."""
    if not callable(build_kind):
        return False, say("core.define", "define a function `{signature}`", signature="build_kind(torch)")
    cases = [
        (
            say("01b.rocm", "a ROCm build (torch.version.hip='7.14.60001', torch.version.cuda=None)"),
            _Build("7.14.60001", None),
            "rocm",
        ),
        (
            say("01b.cuda", "a CUDA build (torch.version.hip=None, torch.version.cuda='13.0')"),
            _Build(None, "13.0"),
            "cuda",
        ),
        (say("01b.cpu", "a CPU build (both None)"), _Build(None, None), "cpu"),
    ]
    for what, fake, want in cases:
        got = build_kind(fake)
        if got == "hip" and want == "rocm":
            return False, say("01b.hip", "{what} got 'hip': the three answers are 'rocm', 'cuda' and 'cpu'", what=what)
        if got != want:
            if want == "rocm":
                return False, say(
                    "01b.wrong_rocm",
                    "{what} got {got!r}, expected {want!r} (a ROCm build sets "
                    "torch.version.hip, a version string, and leaves torch.version.cuda None)",
                    what=what,
                    got=got,
                    want=want,
                )
            return False, say("01b.wrong", "{what} got {got!r}, expected {want!r}", what=what, got=got, want=want)
    return True, say("01b.done", "right on ROCm, CUDA and CPU builds")
