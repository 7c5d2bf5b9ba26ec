"""The zh-CN edition (tools/i18n.py): translations current, code identical, an edited English cell caught."""

import json
import shutil
from pathlib import Path

import pytest

from tools import i18n

ROOT = Path(__file__).parent.parent


def test_every_translation_is_current_and_complete():
    """Fails when an English cell or README section changed without its translation: it lists each one."""
    assert i18n.check("zh_CN") == []


@pytest.mark.parametrize("path", i18n.LESSONS, ids=lambda p: p.stem)
def test_code_cells_are_byte_identical_in_the_translated_notebook(path):
    english = json.loads(path.read_text())
    zh = i18n.translated(json.loads(path.read_text()), i18n.catalogue("zh_CN", path.stem), "zh_CN")
    assert [c for c in zh["cells"] if c["cell_type"] == "code"] == [
        c for c in english["cells"] if c["cell_type"] == "code"
    ]
    prose = [c["source"] for c in zh["cells"] if c["cell_type"] == "markdown"]
    assert all(any("\u4e00" <= ch <= "\u9fff" for ch in text) for text in prose), "a Markdown cell left in English"
    assert (
        zh["metadata"]["course"]["lang"] == "zh_CN"
        and zh["metadata"]["kernelspec"] == english["metadata"]["kernelspec"]
    )


def test_an_edited_english_cell_makes_its_translation_stale(tmp_path, monkeypatch):
    (tmp_path / "notebooks").mkdir()
    shutil.copytree(ROOT / "i18n", tmp_path / "i18n")
    shutil.copy(ROOT / "README.md", tmp_path)
    lesson = tmp_path / "notebooks" / "02_mixed_precision.ipynb"
    nb = json.loads((ROOT / "notebooks" / lesson.name).read_text())
    cell = next(c for c in nb["cells"] if c["cell_type"] == "markdown" and c["id"] == "cell-06")
    cell["source"] = "".join(cell["source"]).replace("Both are 16 bits", "Both are sixteen bits")
    lesson.write_text(json.dumps(nb))
    monkeypatch.setattr(i18n, "ROOT", tmp_path)
    monkeypatch.setattr(i18n, "LESSONS", [lesson])
    stale = i18n.check("zh_CN")
    assert len(stale) == 1 and "02_mixed_precision.ipynb: cell 'cell-06' is stale" in stale[0], stale
    assert i18n.digest(cell["source"]) in i18n.todo(lesson.name, "zh_CN")


def test_the_chinese_readme_is_generated_from_its_catalogue():
    assert (ROOT / "README.zh-CN.md").read_text() == i18n.readme("zh_CN"), "run: python tools/i18n.py readme"


def test_the_lab_in_chinese_serves_the_generated_notebooks(tmp_path):
    """tools/lab.sh (make lab and the workshop image's CMD) with COURSE_LANG=zh_CN: it builds the zh-CN notebooks
    and points JupyterLab at them. A stand-in python records the calls; the real build is tested above."""
    import os
    import subprocess

    fake = tmp_path / "python"
    fake.write_text(f'#!/bin/sh\necho "$@" >> {tmp_path}/calls\n')
    fake.chmod(0o755)
    env = {**os.environ, "PY": str(fake), "COURSE_LANG": "zh_CN", "JUPYTER_TOKEN": "t"}
    subprocess.run(["bash", str(ROOT / "tools/lab.sh")], env=env, check=True, capture_output=True, timeout=30)
    build, lab = (tmp_path / "calls").read_text().splitlines()
    assert build == f"{ROOT}/tools/i18n.py build --out {ROOT}/build/zh_CN"
    assert f"--ServerApp.root_dir={ROOT}/build/zh_CN/notebooks" in lab
