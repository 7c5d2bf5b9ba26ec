"""Compare two `make run` summaries (build/summary.json): what broke, what got slower, what got better.

    python tools/compare_runs.py OLD.json NEW.json [--threshold 0.10]

Prints the notebooks whose status changed and the recorded numbers that moved by more than the threshold
(a fraction: 0.10 = 10 %). Exit code 1 on a regression (a notebook that passed and now fails or is missing,
or a number that moved the wrong way by more than the threshold), 2 when a file cannot be read, else 0.
Numbers recorded without a direction (`better=None`) are reported, never a regression.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


class BadSummary(Exception):
    """A file that is not a readable `make run` summary."""


def load(path: Path) -> dict:
    try:
        doc = json.loads(path.read_text())
    except (OSError, ValueError) as e:
        raise BadSummary(f"cannot read {path}: {e}") from None
    nbs = doc.get("notebooks") if isinstance(doc, dict) else None
    if not isinstance(nbs, dict) or not all(isinstance(r, dict) and "status" in r for r in nbs.values()):
        raise BadSummary(f"{path} is not a `make run` summary (build/summary.json)")
    return doc


def compare(old: dict, new: dict, threshold: float = 0.10) -> tuple[list[str], list[str]]:
    """(regressions, other changes), each a list of one-line messages."""
    bad, info = [], []
    for name in sorted(set(old["notebooks"]) | set(new["notebooks"])):
        a, b = old["notebooks"].get(name), new["notebooks"].get(name)
        if b is None:
            (bad if a["status"] == "pass" else info).append(f"{name}: missing from the new run (was {a['status']})")
            continue
        if a is None:
            info.append(f"{name}: new notebook ({b['status']})")
            continue
        if a["status"] != b["status"]:
            msg = f"{name}: {a['status']} -> {b['status']}"
            if b["status"] != "pass":
                bad.append(msg + (f" ({b['error']['message']})" if b.get("error") else ""))
            else:
                info.append(msg)
        for key in sorted(set(a.get("metrics", {})) & set(b.get("metrics", {}))):
            m, n = a["metrics"][key], b["metrics"][key]
            if not m["value"]:
                continue
            change = (n["value"] - m["value"]) / abs(m["value"])
            if abs(change) <= threshold:
                continue
            unit = f" {n['unit']}" if n.get("unit") else ""
            msg = f"{name}: {key} {m['value']:.4g} -> {n['value']:.4g}{unit} ({change:+.0%})"
            worse = {"higher": change < 0, "lower": change > 0}.get(n.get("better"), False)
            (bad if worse else info).append(msg)
    return bad, info


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("old", type=Path)
    ap.add_argument("new", type=Path)
    ap.add_argument("--threshold", type=float, default=0.10, help="relative change to report (default 0.10 = 10%%)")
    a = ap.parse_args(argv)
    if not 0 <= a.threshold < 10:
        print(f"error: --threshold is a fraction such as 0.1, got {a.threshold}", file=sys.stderr)
        return 2
    try:
        old, new = load(a.old), load(a.new)
    except BadSummary as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    for key in ("device", "torch", "hip", "cuda"):
        x, y = old.get("machine", {}).get(key), new.get("machine", {}).get(key)
        if x != y:
            print(f"note: {key} differs: {x} -> {y}")
    bad, info = compare(old, new, a.threshold)
    for line in bad:
        print(f"REGRESSION {line}")
    for line in info:
        print(f"changed    {line}")
    print(f"{len(bad)} regression(s), {len(info)} other change(s) beyond {a.threshold:.0%}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
