"""Lesson 07's exercises: 07a (TunableOp for an 8-GPU job), 07b (time a GPU step right)."""

from __future__ import annotations

from helpers.exercises.core import check, say


@check("07a")
def check_tunableop_env(record_env, reuse_env):
    """Exercise 07a: the environment of an offline-tuning run that records GEMM shapes, and of the runs that reuse
    the tuned results, one file per rank."""
    p = "PYTORCH_TUNABLEOP_"
    if not isinstance(record_env, dict) or not isinstance(reuse_env, dict):
        return False, say("07a.dicts", "record_env and reuse_env must be dicts of environment variables")
    if record_env.get(p + "ENABLED") != "1":
        return False, say(
            "07a.enabled", "record_env: TunableOp must be on to record anything: {p}ENABLED=1 (values are strings)", p=p
        )
    if record_env.get(p + "RECORD_UNTUNED") != "1":
        return False, say("07a.record", "record_env: only record the shapes while training: {p}RECORD_UNTUNED=1", p=p)
    if record_env.get(p + "TUNING") != "0":
        return False, say(
            "07a.no_tuning", "record_env: no tuning during the training run: {p}TUNING=0 (tune later, offline)", p=p
        )
    if reuse_env.get(p + "ENABLED") != "1" or reuse_env.get(p + "TUNING") != "0":
        return False, say(
            "07a.reuse", "reuse_env: use the results without tuning again: {p}ENABLED=1 and {p}TUNING=0", p=p
        )
    # One file per rank needs nothing more: TunableOp inserts the GPU ordinal into the file name itself, at %d or
    # before the extension (Tunable.cpp: SetFilename(filename, true) for PYTORCH_TUNABLEOP_FILENAME and the default).
    return True, say(
        "07a.done",
        "record while training, tune offline (tune_gemm_in_file), reuse: each rank reads its "
        "own file, TunableOp puts the GPU ordinal into the name (at %d, else before the extension)",
    )


@check("07b")
def check_gpu_timer(time_step):
    """Exercise 07b: `time_step(fn, device)` returns the seconds one call of fn takes, GPU work included."""
    import time as time_module
    from unittest import mock

    import torch

    clock = [0.0]
    pending = []

    def launch():  # a GPU step: returns at once, the work runs on
        clock[0] += 0.001
        pending.append(0.049)

    def synchronize(device=None):  # waiting for the GPU
        clock[0] += sum(pending)
        pending.clear()

    with mock.patch.object(time_module, "perf_counter", lambda: clock[0]), \
            mock.patch.object(torch.cuda, "synchronize", synchronize), \
            mock.patch.object(torch.accelerator, "synchronize", synchronize):  # fmt: skip
        seconds = time_step(launch, torch.device("cuda"))  # portcheck: ignore=PC101 (a fake GPU)
    if not isinstance(seconds, int | float):
        return False, say(
            "07b.number",
            "time_step returned {kind}: return the seconds per call, a number",
            kind=type(seconds).__name__,
        )
    if abs(seconds - 0.05) < 1e-6:
        return True, say("07b.done", "the clock is read after the GPU finished: asynchronous work is counted")
    if abs(seconds - 0.001) < 1e-6:
        return False, say(
            "07b.launch",
            "you timed the launch only (1 ms of 50): GPU work is asynchronous, call "
            "torch.cuda.synchronize(device) before reading the clock",
        )
    if abs(seconds - 50.0) < 1e-3:
        return False, say(
            "07b.ms", "that is 50, for a step of 0.05 seconds: return seconds, as time.perf_counter() differences are"
        )
    return False, say(
        "07b.other",
        "got {got!r} for a step of 0.05 seconds: synchronize before each clock read, time one call",
        got=seconds,
    )
