"""Every example in a helper's docstring runs and prints what it shows (the docs a learner reads first)."""

import doctest
import importlib
import pkgutil

import pytest

import helpers

MODULES = sorted(m.name for m in pkgutil.walk_packages(helpers.__path__, "helpers.") if not m.name.endswith("__main__"))


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0, f"{name}: {result.failed} of {result.attempted} docstring examples failed (see above)"
