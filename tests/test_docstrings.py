"""Every example in a helper's docstring runs and prints what it shows (the docs a learner reads first), and every
helper is short enough to read."""

import doctest
import importlib
import pkgutil
from pathlib import Path

import pytest

import helpers

MODULES = sorted(m.name for m in pkgutil.walk_packages(helpers.__path__, "helpers.") if not m.name.endswith("__main__"))


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0, f"{name}: {result.failed} of {result.attempted} docstring examples failed (see above)"


def test_every_helper_reads_in_a_minute():
    """No module of helpers/ over 400 lines, no function over 60: a learner reads any helper in a minute."""
    import ast

    for path in sorted((Path(__file__).parent.parent / "helpers").rglob("*.py")):
        text = path.read_text()
        assert text.count("\n") <= 400, f"{path}: {text.count(chr(10))} lines"
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                length = node.end_lineno - node.lineno + 1
                assert length <= 60, f"{path}:{node.lineno}: {node.name} has {length} lines"
