import matplotlib
import torch

from helpers.bench import Result, compare, measure

matplotlib.use("Agg")


def test_measure_on_cpu_returns_sane_numbers():
    x = torch.randn(128, 128)
    r = measure(lambda: x @ x, label="mm", items=128, min_run_time=0.1)
    assert r.label == "mm" and r.device == "cpu"
    assert 0 < r.median_s < 1 and r.items_per_s > 0 and r.runs >= 1
    assert abs(r.items_per_s - 128 / r.median_s) < 1e-6 * r.items_per_s
    assert r.peak_memory_mb is None  # not measured on the CPU, never invented


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
