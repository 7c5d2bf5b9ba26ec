"""Print a workshop agenda from build/summary.md (written by `make run`) and each lesson's stated time.

    make run && python tools/agenda.py [build/summary.md]

Run it on the workshop hardware: the "runs in" column is what `make run` measured there.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def lesson_minutes(notebook: Path) -> int | None:
    """The "**Time**: about N minutes" of the notebook's first cell."""
    first = "".join(json.loads(notebook.read_text())["cells"][0]["source"])
    m = re.search(r"\*\*Time\*\*:\s*(?:about\s*)?(\d+)\s*minutes", first)
    return int(m.group(1)) if m else None


def main(summary: Path) -> int:
    if not summary.exists():
        print(f"error: {summary} not found: run `make run` first", file=sys.stderr)
        return 2
    rows = [r for r in summary.read_text().splitlines() if r.startswith("| ") and ".ipynb" in r]
    print("| lesson | teaching time | runs in | status | device |\n| --- | ---: | ---: | --- | --- |")
    total = 0
    for row in rows:
        name, status, seconds, device, _ = [c.strip() for c in row.strip("|").split("|")]
        minutes = lesson_minutes(ROOT / "notebooks" / name) or 0
        total += minutes
        print(f"| {name} | {minutes} min | {float(seconds):.0f} s | {status} | {device} |")
    print(f"| total | {total} min ({total / 60:.1f} h) | | | |")
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "build" / "summary.md"))
