"""Benchmark helpers.portcheck: scan a generated tree of Python and CUDA files, print lines/s.

    python tools/bench_portcheck.py [--lines 100000]

Not a timed test (machines are noisy): it reports. The tree is generated in a temporary directory
from realistic training-script code (half of it CUDA-era, half ported) and removed afterwards.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from helpers.portcheck import scan

FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "portcheck" / "fixtures"


def build_tree(root: Path, target_lines: int) -> int:
    """Write files (packages of modules) until about target_lines lines of Python exist; returns the count."""
    bad, good = (FIXTURES / "pc1xx_api" / "py_bad.py").read_text(), (FIXTURES / "pc1xx_api" / "py_good.py").read_text()
    filler = "".join(
        f"def step_{i}(model, batch, opt):\n    loss = model(batch).sum()\n    loss.backward()\n"
        f"    opt.step()\n    return {{'loss': loss.item(), 'i': {i}}}\n\n\n"
        for i in range(60)
    )
    module = bad + "\n\n" + filler + good  # about 450 lines, findings at the top and bottom
    per = module.count("\n")
    n_files = max(1, target_lines // per)
    for i in range(n_files):
        pkg = root / f"pkg{i // 20}"
        pkg.mkdir(exist_ok=True)
        (pkg / f"mod{i}.py").write_text(module)
    (root / "kernels").mkdir()
    (root / "kernels" / "k.cu").write_text((FIXTURES / "pc2xx_cpp" / "kernel_bad.cu").read_text() * 20)
    return n_files * per


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lines", type=int, default=100_000)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        n = build_tree(Path(tmp), a.lines)
        t0 = time.perf_counter()
        result = scan([tmp])
        dt = time.perf_counter() - t0
    print(
        f"scanned {result['files_scanned']} files, {result['lines_scanned']} lines "
        f"({n} of Python) in {dt:.2f} s: {result['lines_scanned'] / dt:,.0f} lines/s, "
        f"{len(result['findings'])} findings"
    )


if __name__ == "__main__":
    main()
