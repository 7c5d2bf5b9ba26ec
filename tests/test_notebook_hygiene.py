"""Notebooks are stored clean: no outputs, kernelspec python3, one `parameters` cell, a title, numbered names."""

import json
import re
from pathlib import Path

import pytest

NOTEBOOKS = sorted((Path(__file__).parent.parent / "notebooks").glob("*.ipynb"))
README = (Path(__file__).parent.parent / "README.md").read_text()


def test_there_are_notebooks():
    assert NOTEBOOKS


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_is_clean(path):
    assert re.fullmatch(r"\d\d_[a-z0-9_]+\.ipynb", path.name), "name notebooks NN_topic.ipynb"
    nb = json.loads(path.read_text())
    assert nb["metadata"]["kernelspec"]["name"] == "python3"
    cells = nb["cells"]
    code = [c for c in cells if c["cell_type"] == "code"]
    for c in code:
        assert c["outputs"] == [] and c["execution_count"] is None, "strip outputs before committing"
    params = [c for c in code if "parameters" in c.get("metadata", {}).get("tags", [])]
    assert len(params) == 1, "exactly one cell tagged `parameters`"
    assert code.index(params[0]) == 1, "the parameters cell comes right after the first code cell"
    assert cells[0]["cell_type"] == "markdown" and "".join(cells[0]["source"]).startswith("# ")
    assert "describe()" in "".join(code[0]["source"]), "the first code cell prints where it runs"
    for c in code:
        assert len("".join(c["source"]).splitlines()) <= 45, "keep cells short; move logic to helpers"
        assert not re.search(r"^\s*[!%]pip install", "".join(c["source"]), re.M), "no pip installs in lessons"
        assert "sys.path" not in "".join(c["source"]), "import helpers, no sys.path hacks"
    assert path.name in README, "list the notebook in the README's curriculum table"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_papermill_sees_every_parameter(path):
    """`papermill --help-notebook` lists every knob: its parser skips lines with two `=` (e.g. `>=` in a comment)."""

    import papermill

    from tools.run_notebooks import defined_parameters

    names = defined_parameters(path)
    assert names and list(papermill.inspect_notebook(str(path))) == names
