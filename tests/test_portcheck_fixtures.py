"""portcheck on fixture files: each finding is expected on its line, as `# expect: RULE severity` (flake8-bugbear's
way), and a line without a marker must have none. One folder per rule family under tests/portcheck/fixtures/; a
folder inside a family's folder is one project, scanned as a whole (its setup.py, its headers)."""

import re
from pathlib import Path

import pytest

from helpers.portcheck import scan

ROOT = Path(__file__).parent / "portcheck" / "fixtures"
CASES = sorted(p for family in ROOT.iterdir() if family.is_dir() for p in family.iterdir())
EXPECT = re.compile(r"(?:#|//)\s*expect:\s*(.+)$")


def expected(path: Path) -> set[tuple[str, int, str, str]]:
    found = set()
    for n, line in enumerate(path.read_text().splitlines(), 1):
        m = EXPECT.search(line)
        for item in m.group(1).split(",") if m else []:
            rule, severity = item.split()[:2]
            found.add((str(path), n, rule, severity))
    return found


@pytest.mark.parametrize("case", CASES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_findings_are_the_expected_ones(case):
    want = set().union(*(expected(p) for p in ([case] if case.is_file() else sorted(case.rglob("*.*")))))
    got = {(f["path"], f["line"], f["rule"], f["severity"]) for f in scan([str(case)])["findings"]}
    assert got == want
