"""How fast is helpers.diagnose? 10,000 corpus-sized inputs, and a 50 MB log read line by line.

    python tools/bench_diagnose.py

Prints the time for 10,000 diagnoses of the real error texts in tests/corpus/errors.jsonl (cycled), and the time and
peak Python memory for streaming a generated 50 MB log (training noise, the real error at the very end).
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
import tracemalloc
from itertools import cycle, islice
from pathlib import Path

from helpers.diagnose import diagnose, diagnose_lines

ROOT = Path(__file__).resolve().parent.parent


def main() -> int:
    texts = [json.loads(line)["text"] for line in (ROOT / "tests" / "corpus" / "errors.jsonl").read_text().splitlines()]
    t0 = time.perf_counter()
    for text in islice(cycle(texts), 10_000):
        diagnose(text)
    corpus_s = time.perf_counter() - t0
    mean = sum(map(len, texts)) / len(texts)
    print(f"10,000 diagnoses of corpus texts (mean {mean:.0f} characters): {corpus_s:.2f} s")
    with tempfile.TemporaryDirectory() as d:
        log = Path(d) / "train.log"
        line = b"[rank0] 2026-11-30 01:00:00 step 12345 loss 1.2345 lr 3e-4 grad_norm 0.98 tokens/s 81234.5\n"
        with open(log, "wb") as f:
            f.write(line * (50 * 2**20 // len(line)))
            f.write(b"torch.OutOfMemoryError: HIP out of memory. Tried to allocate 2.00 GiB.\n")
        tracemalloc.start()
        t0 = time.perf_counter()
        with open(log, "rb") as f:
            d = diagnose_lines(f)
        stream_s = time.perf_counter() - t0
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    print(f"50 MB log, streamed: {stream_s:.1f} s, peak Python memory {peak / 2**20:.1f} MiB -> {d.category}")
    return 0 if d.category == "out_of_memory" else 1


if __name__ == "__main__":
    sys.exit(main())
