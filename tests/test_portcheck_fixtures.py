"""portcheck on fixture files: each finding is expected on its line, as `# expect: RULE severity` (flake8-bugbear's
way), and a line without a marker must have none. One folder per rule family under tests/portcheck/fixtures/."""

import re
from pathlib import Path

import pytest

from helpers.portcheck import _kind, scan_build, scan_cpp, scan_python

FIXTURES = sorted((Path(__file__).parent / "portcheck" / "fixtures").rglob("*.*"))
EXPECT = re.compile(r"(?:#|//)\s*expect:\s*(.+)$")


def expected(text: str) -> set[tuple[int, str, str]]:
    found = set()
    for n, line in enumerate(text.splitlines(), 1):
        m = EXPECT.search(line)
        for item in m.group(1).split(",") if m else []:
            rule, severity = item.split()
            found.add((n, rule, severity))
    return found


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_findings_are_the_expected_ones(path):
    text = path.read_text()
    kind = _kind(str(path))
    scanner = {"python": lambda: scan_python(path.name, text.encode()), "cpp": lambda: scan_cpp(path.name, text),
               "build": lambda: scan_build(path.name, text)}[kind]  # fmt: skip
    scan = scanner()
    assert {(f.line, f.rule, f.severity) for f in scan} == expected(text)
