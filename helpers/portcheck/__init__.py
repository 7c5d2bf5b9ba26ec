"""Scan a PyTorch project for what breaks or misleads on ROCm, the way a linter does.

    python -m helpers.portcheck PATH... [--format text|json|sarif] [--select PC101,PC2] [--ignore PC111]
                                [--exclude GLOB] [--changed REV] [--stdin NAME] [--fail-on error|warning|info]

Python files are parsed with ``ast`` (never imported or run); CUDA/C++ sources and build files are matched line by
line. Output: ``path:line:col: RULE severity message`` (sorted by file and line), then a summary by rule and what
the severities mean (model.py). Exit code 1 when a finding is at least as severe as ``--fail-on`` (default
``error``: breaks on ROCm), 0 otherwise, 2 on usage errors. A line ending in ``# portcheck: ignore`` (``//
portcheck: ignore`` in C++) is skipped; so are only the listed rules with ``# portcheck: ignore=PC101,PC104``.
Imports no torch.

JSON (``--json``, schema 1)::

    {"schema": 1, "files_scanned": int, "lines_scanned": int,
     "findings": [{"path", "line", "col", "rule", "severity", "message", "fix"}],
     "errors": [{"path", "error"}], "summary": {"PC101": int, ...}}

The layout: model.py (Rule, Finding, severities), rules/ (one family of rules per module, metadata beside the check),
context/ (what a module's code tells the rules, computed once), project.py (what the scanned project tells),
scanner.py, report.py, cli.py.
"""

from .cli import main
from .context.build import cuda_only_folders, rocm_test
from .files import kind
from .model import Finding, Rule
from .report import format_text, to_sarif
from .rules import RULES
from .scanner import scan, scan_build, scan_cpp, scan_python, scan_source

__all__ = ["RULES", "Finding", "Rule", "cuda_only_folders", "format_text", "kind", "main", "rocm_test", "scan",
           "scan_build", "scan_cpp", "scan_python", "scan_source", "to_sarif"]  # fmt: skip
