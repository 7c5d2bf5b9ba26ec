"""Per-module table of a mutmut run: killed, survived, judged equivalent, score. `make mutation` prints it.

Reads `mutmut results --all true` (run in the project root after `mutmut run`). A survivor listed in
tools/mutation_equivalent.txt (one `mutant-name  reason` per line) changes no behaviour a test could see: it is
counted apart, and the score is killed / (mutants - equivalent - not run), timeouts counting as killed, as mutmut does.
"""

from __future__ import annotations

import subprocess
import sys
from collections import Counter, defaultdict
from pathlib import Path

EQUIVALENT = Path(__file__).with_name("mutation_equivalent.txt")


def parse(text: str) -> dict[str, str]:
    """mutant name -> status, from lines like `    helpers.bench.x_measure__mutmut_3: killed`."""
    out = {}
    for line in text.splitlines():
        name, sep, status = line.strip().rpartition(": ")
        if sep and "__mutmut_" in name:
            out[name] = status
    return out


def equivalent(path: Path = EQUIVALENT) -> dict[str, str]:
    lines = path.read_text().splitlines() if path.exists() else []
    return {ln.split(maxsplit=1)[0]: (ln.split(maxsplit=1) + [""])[1] for ln in lines if ln.strip() and ln[0] != "#"}


def module(name: str) -> str:
    """helpers.doctor.x_gather__mutmut_3 -> helpers.doctor; classes too (x«Class«method)."""
    return ".".join(p for p in name.split(".") if not p.startswith("x"))


def table(results: dict[str, str], equiv: dict[str, str]) -> tuple[str, dict[str, float]]:
    counts: dict[str, Counter] = defaultdict(Counter)
    for name, status in results.items():
        key = "equivalent" if status == "survived" and name in equiv else status
        counts[module(name)][key] += 1
    rows = ["| module | mutants | killed | timeout | survived | equivalent | no tests / not run | score |",
            "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]  # fmt: skip
    scores = {}
    for mod, c in sorted(counts.items()):
        idle = c["no tests"] + c["not checked"] + c["skipped"]
        if idle == sum(c.values()):
            continue  # a module this run did not select
        judged = sum(c.values()) - c["equivalent"] - idle
        scores[mod] = (c["killed"] + c["timeout"]) / judged if judged else 0.0
        rows.append(f"| {mod} | {sum(c.values())} | {c['killed']} | {c['timeout']} | {c['survived']} | "
                    f"{c['equivalent']} | {idle} | {scores[mod]:.0%} |")  # fmt: skip
    return "\n".join(rows), scores


def main() -> int:
    r = subprocess.run([sys.executable, "-m", "mutmut", "results", "--all", "true"], capture_output=True, text=True)
    results = parse(r.stdout)
    if not results:
        print("no mutmut results here: run `make mutation` first", file=sys.stderr)
        return 2
    text, _ = table(results, equivalent())
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
