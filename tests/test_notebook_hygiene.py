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


def test_lesson_01_leaves_no_hook_behind():
    """After lesson 01, in the same kernel, a learner's own torch.save + torch.load works: the fake GPU checkpoint of
    section 5 is written in a child process, so no register_package tagger stays (it would tag every later save
    "cuda:0"). The default dtype and the device variables are as they were, too."""
    import nbformat
    from nbclient import NotebookClient
    from nbformat.v4 import new_code_cell

    path = Path(__file__).parent.parent / "notebooks" / "01_device_mapping.ipynb"
    nb = nbformat.read(path, as_version=4)
    before = "import os\n\nimport torch\n\n_env_before = dict(os.environ)\n"
    after = ("import io\nbuf = io.BytesIO()\ntorch.save(model.cpu().state_dict(), buf)  # the lesson's own model\n"
             "buf.seek(0)\nassert all(t.device.type == 'cpu' for t in torch.load(buf).values())\n"
             "assert torch.get_default_dtype() == torch.float32\n"
             "lesson = {'CUDA_VISIBLE_DEVICES', 'HIP_VISIBLE_DEVICES', 'COURSE_DEVICE'}  # (its children get theirs)\n"
             "assert all(os.environ.get(k) == _env_before.get(k) for k in lesson)\n")  # fmt: skip
    nb.cells = [new_code_cell(before)] + nb.cells + [new_code_cell(after)]
    client = NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}})
    client.execute()  # raises on a failing cell


def test_readme_agenda_matches_each_lessons_stated_time():
    """The README's agenda (tools/agenda.py's output) and its "about N hours" follow each lesson's "**Time**" line."""
    from tools.agenda import lesson_minutes

    rows = dict(re.findall(r"^\| (\d\d_\w+\.ipynb) \| (\d+) min \|", README, re.M))
    assert sorted(rows) == [p.name for p in NOTEBOOKS], "regenerate the agenda: make run && python tools/agenda.py"
    for path in NOTEBOOKS:
        assert int(rows[path.name]) == lesson_minutes(path), f"{path.name}: the agenda says {rows[path.name]} min"
    hours = sum(lesson_minutes(p) for p in NOTEBOOKS) / 60
    assert f"min ({hours:.1f} h)" in README, f"the agenda's total: the lessons add up to {hours:.1f} h"
    assert README.count(f"about {hours:.1f} hours") == 2, f"the README's prose: the lessons add up to {hours:.1f} h"


def _relative_links(text: str) -> list[str]:
    return [t.split("#")[0] for t in re.findall(r"\]\(([^)\s]+)\)", text) if not re.match(r"[a-z]+:|#", t)]


def test_relative_links_point_at_files_that_exist():
    """A link to a moved helper (helpers/doctor.py became a package) is found here, not by a learner's click."""
    root = Path(__file__).parent.parent
    docs = [
        (p, p.read_text()) for p in [root / "README.md", root / "README.zh-CN.md", *sorted(root.glob("docs/**/*.md"))]
    ]
    for path in NOTEBOOKS:
        cells = json.loads(path.read_text())["cells"]
        docs.append((path, "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")))
    broken = [f"{p.name}: {t}" for p, text in docs for t in _relative_links(text) if not (p.parent / t).exists()]
    assert not broken, broken
