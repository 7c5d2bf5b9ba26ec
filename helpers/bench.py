"""Measure training or inference steps with ``torch.utils.benchmark``, and compare them.

``torch.utils.benchmark.Timer`` handles warm-up and run counts (``blocked_autorange``); this module
adds a device synchronisation after each step (GPU work is asynchronous), peak device memory, and a
table plus a bar chart.

    >>> import torch
    >>> from helpers.bench import measure, compare
    >>> x = torch.randn(256, 256)
    >>> r = measure(lambda: x @ x, label="matmul", items=256, min_run_time=0.2)
    >>> r.items_per_s > 0
    True
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass

import torch

# torch.utils.benchmark imports cpp_extension, which logs "No CUDA runtime is found, using CUDA_HOME=..." on a
# machine with a CUDA toolkit and no GPU: noise in a lesson that compiles nothing (lesson 05 builds, and says where).
_cpp_log = logging.getLogger("torch.utils.cpp_extension")
_level = _cpp_log.level
_cpp_log.setLevel(logging.ERROR)
from torch.utils import benchmark  # noqa: E402

_cpp_log.setLevel(_level)


@dataclass(frozen=True)
class Result:
    label: str
    median_s: float  # median time per step
    items_per_s: float  # items (images, tokens, ...) per second
    peak_memory_mb: float | None  # peak device memory; None where not measured (CPU, MPS)
    runs: int
    device: str
    warmup_s: float | None = None  # the warm-up calls together: MIOpen's find for new shapes, compilation, allocation


def sync(device: torch.device) -> None:
    """Wait for the device's queued work (GPU work is asynchronous): CUDA and ROCm, MPS; nothing to do on a CPU."""
    device = torch.device(device)
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    elif device.type == "mps":
        torch.mps.synchronize()


def measure(
    step_fn: Callable[[], object],
    *,
    label: str,
    items: int = 1,
    device: torch.device | str = "cpu",
    min_run_time: float = 1.0,
    warmup: int = 2,
) -> Result:
    """Time ``step_fn`` (median over torch.utils.benchmark's blocks) and record peak GPU memory.

    The ``warmup`` calls before it are timed together (``Result.warmup_s``): on a cold MIOpen cache that is where
    the find step for each new convolution shape goes (lessons 02, 03, 07)."""
    device = torch.device(device)
    t0 = time.perf_counter()
    for _ in range(warmup):  # first calls pay for allocation, autotuning (MIOpen's find step), compilation
        step_fn()
    sync(device)
    warmup_s = time.perf_counter() - t0
    on_gpu = device.type == "cuda"
    if on_gpu:
        torch.cuda.reset_peak_memory_stats(device)

    def step():
        step_fn()
        sync(device)

    m = benchmark.Timer(stmt="step()", globals={"step": step}, label=label).blocked_autorange(min_run_time=min_run_time)
    peak = torch.cuda.max_memory_allocated(device) / 2**20 if on_gpu else None
    return Result(label, m.median, items / m.median, peak, len(m.times) * m.number_per_run, str(device), warmup_s)


@dataclass(frozen=True)
class Warmup:
    first_s: float  # the first call: allocation, kernel search (MIOpen find, cudnn.benchmark), compilation
    steady_s: float  # median of the calls after it
    runs: int  # calls in the steady-state median

    @property
    def ratio(self) -> float:
        return self.first_s / self.steady_s


def first_vs_steady(step_fn: Callable[[], object], device: torch.device | str = "cpu", runs: int = 5) -> Warmup:
    """Time the first call of ``step_fn`` on its own, then the median of ``runs`` more (each synchronised).

    What makes a first epoch slow shows up here: on ROCm MIOpen's kernel search per convolution shape (cached in
    its find-db afterwards), on any GPU allocator growth and library loading, for torch.compile the compilation.
    """
    import statistics

    device = torch.device(device)
    times = []
    for _ in range(runs + 1):
        sync(device)
        t0 = time.perf_counter()
        step_fn()
        sync(device)
        times.append(time.perf_counter() - t0)
    return Warmup(times[0], statistics.median(times[1:]), runs)


def run_json(args, *, what: str, env: dict | None = None, unset: tuple[str, ...] = (), cwd=None,
             timeout: float = 300) -> dict:  # fmt: skip
    """Run ``python *args`` in a fresh process and return the JSON object its last line prints (lessons 02, 07).

    A fresh process, because some settings are read once per process (TunableOp's and MIOpen's variables, torch
    2.5-2.8's NHWC switch). ``env`` is added to this environment, from which the variables whose names start with one
    of ``unset`` are removed first. A child that fails is a RuntimeError that quotes its error (``what`` names it).
    """
    base = {k: v for k, v in os.environ.items() if not k.startswith(tuple(unset))}
    r = subprocess.run([sys.executable, *map(str, args)], env=base | (env or {}), cwd=cwd, capture_output=True,
                       text=True, timeout=timeout)  # fmt: skip
    if r.returncode != 0:
        lines = r.stderr.strip().splitlines() or ["no output"]
        raise RuntimeError(f"{what} failed: {lines[-1]}\n" + "\n".join(lines[-30:]))
    return json.loads(r.stdout.strip().splitlines()[-1])


@dataclass(frozen=True)
class Spread:
    """Seconds per call, one value per repeat; each value is ``calls`` calls timed together (lesson 07)."""

    label: str
    per_call_s: tuple[float, ...]

    @property
    def median_s(self) -> float:
        import statistics

        return statistics.median(self.per_call_s)


def spread(fn: Callable[[], object], *, label: str, device: torch.device | str = "cpu", calls: int = 20,
           repeats: int = 7) -> Spread:  # fmt: skip
    """Time ``calls`` back-to-back calls of ``fn`` between two GPU events (the clock on a CPU), ``repeats`` times.

    One synchronisation per repeat, not per call: a short GPU call followed by a synchronize each time is timed
    with the launch gap, which shrinks every ratio. The repeats show the noise (``versus`` compares them).
    """
    device = torch.device(device)
    fn()  # one call first: allocation and first-call set-up stay out of the numbers
    sync(device)
    times = []
    for _ in range(repeats):
        if device.type == "cuda":  # events on the device's own stream: cuda:1 is not always the current device
            stream = torch.cuda.current_stream(device)
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record(stream)
            for _ in range(calls):
                fn()
            end.record(stream)
            end.synchronize()
            times.append(start.elapsed_time(end) / 1e3 / calls)  # elapsed_time is in milliseconds
        else:
            t0 = time.perf_counter()
            for _ in range(calls):
                fn()
            sync(device)
            times.append((time.perf_counter() - t0) / calls)
    return Spread(label, tuple(times))


def versus(base: Spread, new: Spread) -> str:
    """How much faster ``new`` is than ``base``, or "no difference beyond noise" when their repeats overlap.

    >>> versus(Spread("a", (1.0, 1.1, 1.2)), Spread("b", (0.5, 0.55, 0.6)))
    '2.00x faster (every repeat of b beat every repeat of a)'
    >>> versus(Spread("a", (1.0, 1.1, 1.2)), Spread("b", (0.95, 1.05, 1.15)))
    'no difference beyond noise (1.05x; the repeats overlap)'
    """
    ratio = base.median_s / new.median_s
    if max(new.per_call_s) < min(base.per_call_s):
        return f"{ratio:.2f}x faster (every repeat of {new.label} beat every repeat of {base.label})"
    if min(new.per_call_s) > max(base.per_call_s):
        return f"{1 / ratio:.2f}x slower (every repeat of {new.label} lost to every repeat of {base.label})"
    return f"no difference beyond noise ({ratio:.2f}x; the repeats overlap)"


@dataclass
class Comparison:
    """A markdown table (``.table``) and a matplotlib bar chart (``.figure``); shows itself in Jupyter."""

    table: str
    figure: object

    def _repr_markdown_(self) -> str:
        return self.table


def compare(
    results: list[Result], baseline: str | None = None, title: str = "throughput", extra: dict | None = None
) -> Comparison:
    """Table of time, throughput, speed-up against ``baseline`` (default: the first) and memory; bar chart.

    ``extra`` adds columns: ``{"final loss": {"fp32": "0.41", ...}}``.
    """
    import matplotlib.pyplot as plt

    if not results:
        raise ValueError("nothing to compare: every row was skipped (see the notes printed above)")
    extra = extra or {}
    base = next((r for r in results if r.label == baseline), results[0])
    head = ["variant", "ms / step", "items / s", "speed-up", "peak memory (MB)", *extra]
    rows = ["| " + " | ".join(head) + " |", "| --- |" + " ---: |" * (len(head) - 1)]
    for r in results:
        mem = f"{r.peak_memory_mb:.0f}" if r.peak_memory_mb is not None else "not measured on " + r.device
        cells = [r.label, f"{r.median_s * 1e3:.1f}", f"{r.items_per_s:.1f}", f"{r.items_per_s / base.items_per_s:.2f}x"]
        cells += [mem] + [str(col.get(r.label, "")) for col in extra.values()]
        rows.append("| " + " | ".join(cells) + " |")
    fig, ax = plt.subplots(figsize=(6, 0.5 + 0.5 * len(results)))
    ax.barh([r.label for r in results][::-1], [r.items_per_s for r in results][::-1], color="#c0392b")
    ax.set_xlabel("items / s (higher is better)")
    ax.set_title(f"{title} on {results[0].device}")
    fig.tight_layout()
    plt.close(fig)  # shown by the notebook with display(fig), not twice
    return Comparison("\n".join(rows), fig)


def compare_spreads(spreads: list[Spread], title: str = "ms per step", extra: dict | None = None) -> Comparison:
    """Table (median, fastest and slowest repeat, each against the first run) and a dot per repeat (lesson 07).

    ``extra`` adds columns, as in ``compare``: ``{"first step (s)": {"tuned": "0.4"}}``.
    """
    import matplotlib.pyplot as plt

    extra = extra or {}
    base = spreads[0]
    head = ["run", "ms / step (median)", "fastest repeat", "slowest repeat", f"against {base.label}", *extra]
    rows = ["| " + " | ".join(head) + " |", "| --- |" + " ---: |" * 3 + " --- |" + " ---: |" * len(extra)]
    for s in spreads:
        against = "" if s is base else versus(base, s)
        cells = [s.label, f"{s.median_s * 1e3:.2f}", f"{min(s.per_call_s) * 1e3:.2f}", f"{max(s.per_call_s) * 1e3:.2f}"]
        rows.append("| " + " | ".join(cells + [against] + [str(c.get(s.label, "")) for c in extra.values()]) + " |")
    fig, ax = plt.subplots(figsize=(6, 0.6 + 0.45 * len(spreads)))
    for i, s in enumerate(reversed(spreads)):
        ax.plot([t * 1e3 for t in s.per_call_s], [i] * len(s.per_call_s), "o", color="#c0392b", alpha=0.6)
    ax.set_yticks(range(len(spreads)), [s.label for s in reversed(spreads)])
    ax.set_xlabel("ms per step, one dot per repeat (lower is better)")
    ax.set_title(title)
    fig.tight_layout()
    plt.close(fig)
    return Comparison("\n".join(rows), fig)
