"""Lesson 01's exercises: 01a (port an inference snippet), 01b (which build is this?)."""

from __future__ import annotations

from helpers.exercises.core import Hint, check, portcheck_hint
from helpers.exercises.simulated import NO_DRIVER, on_gpu, simulated_gpu, simulated_laptop

SECTION_3 = ("lesson 01, section 3: choose it once with pick_device() (the course's helper: torch.accelerator's "
             "device when one is usable, else MPS, else the CPU), or torch.accelerator.current_accelerator("
             'check_available=True) or torch.device("cpu")')  # fmt: skip


@check("01a")
def check_portable_predict(predict):
    """Exercise 01a: `predict(batch)` runs on this machine, on a laptop with a CUDA wheel and no GPU, and on a GPU
    machine (the last two simulated); it uses the GPU where there is one and returns class ids on the CPU."""
    import torch

    if not callable(predict):
        return False, "define a function `predict(batch)`"
    hint = portcheck_hint(predict)
    if hint:
        return False, hint
    runs = {}
    for where, machine in (("a laptop with a CUDA build of torch and no GPU", simulated_laptop),
                           ("a GPU machine", simulated_gpu)):  # fmt: skip
        with machine() as placement:
            try:
                runs[where] = predict(torch.randn(5, 64)), placement.moved
            except RuntimeError as e:
                if NO_DRIVER in str(e):
                    return False, (f"on {where} the code sent tensors to 'cuda': current_accelerator() answers what "
                                   f"the build was made for, usable or not (the trap of {SECTION_3})")  # fmt: skip
                if "same device" in str(e):
                    return False, f"on {where}: {str(e).strip()}: move every input with .to(device), like the model"
                raise
    out, moved = runs["a GPU machine"]
    if not moved:
        return False, f"on a GPU machine this code still computes on the CPU: the device is hard-wired. {SECTION_3}"
    for where, (result, _) in runs.items():
        if not isinstance(result, torch.Tensor):
            return False, f"predict returned {type(result).__name__}, expected a tensor of class ids"
        if on_gpu(result):
            return False, f"on {where} the class ids stay on the GPU (cuda:0): end with .cpu() so callers can use them"
        if result.shape != (5,) or result.dtype != torch.int64:
            return False, f"expected 5 class ids (shape (5,), int64), got shape {tuple(result.shape)}, {result.dtype}"
    here = predict(torch.randn(5, 64))
    if here.device.type != "cpu":
        return False, f"the result is on {here.device}: end with .cpu() so callers can use it anywhere"
    return True, "portable: it picks the GPU where there is one (simulated here), falls back to the CPU on a laptop, " \
                 "and returns CPU class ids"  # fmt: skip


class _Build:
    """A stand-in for the torch module of one build: only torch.version answers (what the exercise may read)."""

    def __init__(self, hip, cuda):
        import types

        self.version = types.SimpleNamespace(hip=hip, cuda=cuda)

    def __getattr__(self, name):
        raise Hint(
            f"your function read torch.{name}: decide from torch.version.hip and torch.version.cuda only. "
            "The build says what it is; the GPU is not asked here (torch.cuda.is_available() is True on "
            "ROCm and CUDA alike, and a version string's '+rocm' tag is only a habit of the wheel indexes)"
        )


@check("01b")
def check_build_kind(build_kind):
    """Exercise 01b: `build_kind(torch)` says "rocm", "cuda" or "cpu" from torch.version, without touching a GPU."""
    if not callable(build_kind):
        return False, "define a function `build_kind(torch)`"
    cases = [
        ("a ROCm build (torch.version.hip='7.14.60001', torch.version.cuda=None)", _Build("7.14.60001", None), "rocm"),
        ("a CUDA build (torch.version.hip=None, torch.version.cuda='13.0')", _Build(None, "13.0"), "cuda"),
        ("a CPU build (both None)", _Build(None, None), "cpu"),
    ]
    for what, fake, want in cases:
        got = build_kind(fake)
        if got == "hip" and want == "rocm":
            return False, f"{what} got 'hip': the three answers are 'rocm', 'cuda' and 'cpu'"
        if got != want:
            tip = " (a ROCm build sets torch.version.hip, a version string, and leaves torch.version.cuda None)"
            return False, f"{what} got {got!r}, expected {want!r}" + (tip if want == "rocm" else "")
    return True, "right on ROCm, CUDA and CPU builds"
