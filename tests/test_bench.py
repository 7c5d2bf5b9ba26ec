import time

import matplotlib
import pytest
import torch

from helpers.bench import Result, Spread, compare, first_vs_steady, measure, spread, versus

matplotlib.use("Agg")


def test_measure_on_cpu_returns_sane_numbers():
    x = torch.randn(128, 128)
    r = measure(lambda: x @ x, label="mm", items=128, min_run_time=0.1)
    assert r.label == "mm" and r.device == "cpu"
    assert 0 < r.median_s < 1 and r.items_per_s > 0 and r.runs >= 1
    assert abs(r.items_per_s - 128 / r.median_s) < 1e-6 * r.items_per_s
    assert r.peak_memory_mb is None  # not measured on the CPU, never invented


def test_measure_times_the_warmup_on_its_own():
    calls = []

    def step():
        calls.append(1)
        if len(calls) <= 2:  # the two warm-up calls: a kernel search, a compilation
            time.sleep(0.2)

    r = measure(step, label="cold", warmup=2, min_run_time=0.05)
    assert r.warmup_s >= 0.4 and r.median_s < 0.1


def test_measure_sees_slower_work():
    small, big = torch.randn(32, 32), torch.randn(384, 384)
    fast = measure(lambda: small @ small, label="s", min_run_time=0.1)
    slow = measure(lambda: big @ big @ big, label="b", min_run_time=0.1)
    assert slow.median_s > fast.median_s


def test_compare_table_and_figure():
    rs = [Result("fp32", 0.02, 50.0, None, 10, "cpu"), Result("bf16", 0.01, 100.0, 12.5, 10, "cuda:0")]
    c = compare(rs)
    lines = c.table.splitlines()
    assert len(lines) == 4 and "| fp32 | 20.0 | 50.0 | 1.00x | not measured on cpu |" == lines[2]
    assert "| 2.00x | 12 |" in lines[3]
    assert c._repr_markdown_() == c.table
    assert [t.get_text() for t in c.figure.axes[0].get_yticklabels()] == ["bf16", "fp32"]
    assert "0.50x" in compare(rs, baseline="bf16").table
    with_loss = compare(rs, extra={"final loss": {"fp32": "0.40", "bf16": "0.41"}}).table.splitlines()
    assert with_loss[0].endswith("| final loss |") and with_loss[3].endswith("| 0.41 |")


def test_first_vs_steady_default_is_one_plus_five_calls():
    calls = []
    w = first_vs_steady(lambda: calls.append(1))
    assert len(calls) == 6 and w.runs == 5


def test_first_vs_steady_separates_the_first_call(monkeypatch):
    import time

    clock, calls = [0.0], []
    monkeypatch.setattr(time, "perf_counter", lambda: clock[0])

    def step():  # a fake clock: the first call "takes" 3 s (a kernel search, a compilation), later ones 1, 2, 1, 5 s
        calls.append(1)
        clock[0] += [3.0, 1.0, 2.0, 1.0, 5.0][len(calls) - 1]

    w = first_vs_steady(step, runs=4)
    assert len(calls) == 5 and w.runs == 4
    assert (w.first_s, w.steady_s, w.ratio) == (3.0, 1.5, 2.0)  # the median of 1, 2, 1, 5


def test_first_vs_steady_synchronises_the_gpu(monkeypatch):
    """Asynchronous GPU work is only timed if the clock is read after torch.cuda.synchronize."""
    events = []
    monkeypatch.setattr(torch.cuda, "synchronize", lambda device=None: events.append(("sync", device)))
    gpu = torch.device("cuda", 0)  # portcheck: ignore=PC101 (never touched: synchronize is faked)
    first_vs_steady(lambda: events.append("step"), device=gpu, runs=2)
    assert events[:3] == [("sync", gpu), "step", ("sync", gpu)]
    assert events.count("step") == 3 and all(e != "step" or events[i + 1][0] == "sync" for i, e in enumerate(events))


def test_measure_synchronises_and_reads_peak_memory_on_a_gpu(monkeypatch):
    """The GPU branch with fakes of torch.cuda's real API (torch/cuda/__init__.py, torch/cuda/memory.py):
    synchronize(device), reset_peak_memory_stats(device), max_memory_allocated(device) -> bytes."""
    events = []
    gpu = torch.device("cuda", 0)  # portcheck: ignore=PC101 (never touched: torch.cuda is faked)
    monkeypatch.setattr(torch.cuda, "synchronize", lambda device=None: events.append(("sync", device)))
    monkeypatch.setattr(torch.cuda, "reset_peak_memory_stats", lambda device=None: events.append(("reset", device)))
    monkeypatch.setattr(
        torch.cuda, "max_memory_allocated", lambda device=None: events.append(("peak", device)) or 3 << 20
    )
    r = measure(lambda: events.append("step"), label="gpu", device=gpu, warmup=2, min_run_time=0.01)
    assert events[:4] == ["step", "step", ("sync", gpu), ("reset", gpu)]  # warm-up, then a clean peak
    timed = events[4:-1]
    assert timed and all(timed[i + 1] == ("sync", gpu) for i, e in enumerate(timed) if e == "step")
    assert events[-1] == ("peak", gpu) and r.peak_memory_mb == 3.0 and r.device == "cuda:0"
    assert timed.count("step") >= r.runs  # every timed step was followed by its synchronisation


def test_compare_table_text_and_chart_data():
    rs = [Result("fp32", 0.25, 50.0, None, 10, "cpu"), Result("bf16", 0.125, 100.0, 12.5, 10, "cuda:0")]
    c = compare(rs, extra={"final loss": {"fp32": "0.40"}})
    assert c.table.splitlines() == [
        "| variant | ms / step | items / s | speed-up | peak memory (MB) | final loss |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
        "| fp32 | 250.0 | 50.0 | 1.00x | not measured on cpu | 0.40 |",
        "| bf16 | 125.0 | 100.0 | 2.00x | 12 |  |",
    ]
    ax = c.figure.axes[0]
    assert c.figure.get_size_inches()[0] == 6
    assert all(matplotlib.colors.to_hex(b.get_facecolor()) == "#c0392b" for b in ax.patches)
    assert [b.get_width() for b in ax.patches] == [100.0, 50.0]  # bars in the order of the labels (bf16, fp32)
    assert ax.get_xlabel() == "items / s (higher is better)" and ax.get_title() == "throughput on cpu"
    assert c.figure.get_size_inches()[1] == 0.5 + 0.5 * 2
    import matplotlib.pyplot as plt

    assert c.figure.number not in plt.get_fignums()  # closed: the notebook shows it once, with display()


def test_mps_is_synchronised_too(monkeypatch):
    events = []
    monkeypatch.setattr(torch.mps, "synchronize", lambda: events.append("mps sync"))
    first_vs_steady(lambda: events.append("step"), device="mps", runs=1)  # torch.device("mps") is only a name here
    assert events == ["mps sync", "step", "mps sync", "mps sync", "step", "mps sync"]


def test_measure_counts_one_item_per_step_by_default():
    r = measure(lambda: None, label="noop", min_run_time=0.01)
    assert abs(r.items_per_s * r.median_s - 1.0) < 1e-9


def test_compare_of_nothing_says_why():
    """A lesson whose rows were all skipped (FIRST_STEP_BUDGET spent on a cold MIOpen cache) gets a sentence, not an
    IndexError from results[0]."""
    import pytest

    with pytest.raises(ValueError, match="every row was skipped"):
        compare([])


def test_spread_times_many_calls_between_two_events_on_a_gpu(monkeypatch):
    """torch.cuda.Event(enable_timing=True).record(stream), .synchronize(), .elapsed_time(end) -> ms
    (torch/cuda/streams.py): one pair per repeat, on the stream of the device the work runs on."""
    events, clock = [], [0.0]
    gpu = torch.device("cuda", 1)  # portcheck: ignore=PC101 (never touched: torch.cuda is faked)

    class Event:
        def __init__(self, enable_timing=False):
            assert enable_timing, "elapsed_time needs enable_timing=True"

        def record(self, stream=None):
            self.at, self.stream = clock[0], stream
            events.append(("record", stream))

        def synchronize(self):
            events.append("wait")

        def elapsed_time(self, end):
            return (end.at - self.at) * 1e3

    monkeypatch.setattr(torch.cuda, "Event", Event)
    monkeypatch.setattr(torch.cuda, "current_stream", lambda device=None: f"stream of {device}")
    monkeypatch.setattr(torch.cuda, "synchronize", lambda device=None: events.append(("sync", device)))

    def step():  # each call "takes" 2 ms of GPU time
        events.append("step")
        clock[0] += 0.002

    s = spread(step, label="gpu", device=gpu, calls=5, repeats=3)
    assert events[:2] == ["step", ("sync", gpu)]  # a first call outside the timing
    one_repeat = [("record", f"stream of {gpu}")] + ["step"] * 5 + [("record", f"stream of {gpu}"), "wait"]
    assert events[2:] == one_repeat * 3  # no synchronize between the calls of a repeat
    assert len(s.per_call_s) == 3 and all(abs(t - 0.002) < 1e-12 for t in s.per_call_s)


def test_spread_on_a_cpu_divides_by_the_calls(monkeypatch):
    clock = [0.0]
    monkeypatch.setattr(time, "perf_counter", lambda: clock[0])
    costs = iter([9.0] + [1.0] * 4 + [3.0] * 4)  # the first call is slow and not counted

    def step():
        clock[0] += next(costs)

    s = spread(step, label="cpu", calls=4, repeats=2)
    assert s.per_call_s == (1.0, 3.0) and s.median_s == 2.0


def test_versus_needs_every_repeat_on_one_side():
    base = Spread("default", (1.00, 1.02, 1.04))
    assert versus(base, Spread("tuned", (0.90, 0.92, 0.99))).startswith("1.11x faster")
    assert versus(base, Spread("tuned", (0.90, 0.92, 1.01))).startswith("no difference beyond noise (1.11x")
    assert versus(base, Spread("slow", (1.10, 1.20, 1.30))).startswith("1.18x slower")


def test_compare_spreads_table_says_noise_and_draws_every_repeat():
    from helpers.bench import compare_spreads

    runs = [Spread("default", (1e-3, 1.1e-3, 1.2e-3)), Spread("tuned", (0.5e-3, 0.6e-3, 0.55e-3)),
            Spread("other", (1.05e-3, 1.0e-3, 1.3e-3))]  # fmt: skip
    c = compare_spreads(runs, extra={"first step (s)": {"tuned": "4.0"}})
    lines = c.table.splitlines()
    assert (
        lines[0] == "| run | ms / step (median) | fastest repeat | slowest repeat | against default | first step (s) |"
    )
    assert lines[2] == "| default | 1.10 | 1.00 | 1.20 |  |  |"
    assert lines[3].startswith("| tuned | 0.55 | 0.50 | 0.60 | 2.00x faster") and lines[3].endswith("| 4.0 |")
    assert "no difference beyond noise" in lines[4]
    ax = c.figure.axes[0]
    assert sum(len(line.get_xdata()) for line in ax.lines) == 9  # one dot per repeat
    assert [t.get_text() for t in ax.get_yticklabels()] == ["other", "tuned", "default"]


def test_run_json_gives_the_child_its_environment_and_reads_its_last_line(tmp_path, monkeypatch):
    from helpers.bench import run_json

    monkeypatch.setenv("PYTORCH_TUNABLEOP_ENABLED", "1")  # a setting the parent has and the child must not inherit
    script = (
        "import json, os; print('noise'); "
        "print(json.dumps({k: os.environ.get(k) for k in ('A', 'PYTORCH_TUNABLEOP_ENABLED')} | {'cwd': os.getcwd()}))"
    )
    got = run_json(["-c", script], what="the child", env={"A": "1"}, unset=("PYTORCH_TUNABLEOP_",), cwd=tmp_path)
    assert got == {"A": "1", "PYTORCH_TUNABLEOP_ENABLED": None, "cwd": str(tmp_path)}
    with pytest.raises(RuntimeError, match="the child failed: ValueError: no GPU"):
        run_json(["-c", "raise ValueError('no GPU')"], what="the child")
