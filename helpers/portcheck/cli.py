"""The command line: ``portcheck PATH... [--format text|json|sarif] [--fail-on error|warning|info] ...``."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

from . import files
from .model import SEVERITIES, at_least
from .report import format_text, to_sarif
from .rules import RULES
from .scanner import scan


def changed_files(rev: str) -> list[str]:
    """Files changed since git revision ``rev`` (committed, staged or not), that still exist."""
    out = subprocess.run(["git", "diff", "--name-only", "--diff-filter=ACMR", rev, "--"], capture_output=True,
                         text=True, check=True).stdout  # fmt: skip
    top = subprocess.run(["git", "rev-parse", "--show-toplevel"], capture_output=True, text=True, check=True).stdout
    return [p for p in (os.path.join(top.strip(), line) for line in out.splitlines() if line) if os.path.isfile(p)]


def _rules_arg(value: str) -> list[str]:
    ids = [v.strip().upper() for v in value.split(",") if v.strip()]
    for i in ids:
        if not any(r.startswith(i) for r in RULES):
            raise argparse.ArgumentTypeError(f"unknown rule {i!r} (known: {', '.join(RULES)})")
    return ids


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="portcheck", description="Find what breaks or misleads on ROCm.")
    ap.add_argument("paths", nargs="*", help="files or folders to scan")
    ap.add_argument("--format", choices=["text", "json", "sarif"], default="text", help="output format")
    ap.add_argument("--json", action="store_const", const="json", dest="format", help="same as --format json")
    ap.add_argument("--select", type=_rules_arg, help="only these rules (ids or prefixes: PC101,PC2)")
    ap.add_argument("--ignore", type=_rules_arg, help="skip these rules")
    ap.add_argument("--exclude", action="append", default=[], help="glob of paths to skip, relative to PATH")
    ap.add_argument("--changed", metavar="REV", help="also scan the files changed since git revision REV")
    ap.add_argument("--stdin", metavar="NAME", help="scan standard input as a file called NAME (editors)")
    ap.add_argument("--fail-on", choices=SEVERITIES, default="error",
                    help="exit 1 when a finding is this severe or more (default: error, what breaks on ROCm; "
                    "warning: also CPU portability)")  # fmt: skip
    return ap


def main(argv=None) -> int:
    ap = _parser()
    a = ap.parse_args(argv)
    missing = [p for p in a.paths if not os.path.exists(p)]
    if missing:
        print(f"portcheck: error: no such file or directory: {missing[0]}", file=sys.stderr)
        return 2
    paths = list(a.paths)
    if a.changed:
        try:
            paths += [p for p in changed_files(a.changed) if files.kind(p)]
        except (OSError, subprocess.CalledProcessError) as e:
            err = getattr(e, "stderr", "") or str(e)
            print(f"portcheck: error: git cannot list the changes since {a.changed}: {err.strip()}", file=sys.stderr)
            return 2
    if not paths and not a.stdin and not a.changed:
        ap.print_usage(sys.stderr)
        print("portcheck: error: give files or folders, --changed REV or --stdin NAME", file=sys.stderr)
        return 2
    stdin = (a.stdin, sys.stdin.buffer.read()) if a.stdin else None
    result = scan(paths, a.select, a.ignore, a.exclude, stdin=stdin)
    if a.format == "text":
        print(format_text(result))
    else:
        print(json.dumps(result if a.format == "json" else to_sarif(result), indent=2))
    return 1 if any(at_least(f["severity"], a.fail_on) for f in result["findings"]) else 0
