"""The rules, one family per module, each with its metadata (id, severity and why, message, fix, example) beside its
check. ``RULES`` maps every id to its Rule, in the order the reference lists them."""

from __future__ import annotations

from ..model import Rule
from . import pc1xx_api, pc2xx_build, pc2xx_cpp, pc3xx_deps, pc101_device

PC900 = Rule("PC900", "error", "a Python file that does not parse does not run anywhere",
             "file could not be parsed", "fix the syntax error or the encoding", "def f(:")  # fmt: skip
FAMILIES = (pc101_device, pc1xx_api, pc3xx_deps, pc2xx_cpp, pc2xx_build)
RULES: dict[str, Rule] = {r.id: r for family in FAMILIES for r in family.RULES} | {"PC900": PC900}
PYTHON_CHECKS = (pc101_device.check, pc1xx_api.check, pc3xx_deps.check)
