"""`make run`'s runner: runs every notebook even after a failure, passes parameters, writes the summaries."""

import contextlib
import io
import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from types import SimpleNamespace

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

ROOT = Path(__file__).parent.parent


def notebook(path: Path, code: str):
    params = new_code_cell("VALUE = 1")
    params.metadata["tags"] = ["parameters"]
    nb = new_notebook(cells=[new_markdown_cell("# t"), new_code_cell("import os"), params, new_code_cell(code)])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, path)


def runner(*args, cwd):
    """tools/run_notebooks.py's main() in this process (so make mutation sees it), as the command line would."""
    from tools.run_notebooks import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.chdir(cwd), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([str(a) for a in args])
    return SimpleNamespace(returncode=code, stdout=out.getvalue(), stderr=err.getvalue())


def cli(*args, cwd):
    return subprocess.run([sys.executable, str(ROOT / "tools" / "run_notebooks.py"), *map(str, args)],
                          capture_output=True, text=True, timeout=300, cwd=cwd)  # fmt: skip


def test_runner_keeps_going_and_reports(tmp_path):
    notebook(tmp_path / "01_fails.ipynb", "raise RuntimeError('boom')")
    notebook(
        tmp_path / "02_param.ipynb",
        "from helpers.record import record\nassert VALUE == 7, VALUE\n"
        "open('written.txt', 'w').write('x')\nrecord('speed', 12.5, 'items/s', better='higher')",
    )
    (tmp_path / "params.yaml").write_text("02_param:\n  VALUE: 7\n")
    out = tmp_path / "build"
    r = runner("--params", tmp_path / "params.yaml", "--out", out, "--cell-timeout", "120",
               tmp_path / "01_fails.ipynb", tmp_path / "02_param.ipynb", cwd=tmp_path)  # fmt: skip
    assert r.returncode == 1, r.stdout + r.stderr
    summary = (out / "summary.md").read_text()
    assert "| 01_fails.ipynb | FAIL" in summary and "RuntimeError: boom" in summary
    assert "| 02_param.ipynb | pass |" in summary  # ran after the failure, with VALUE from the YAML file
    assert "| 02_param | speed | 12.5 | items/s |" in summary
    assert (out / "executed" / "02_param.ipynb").exists() and (out / "html" / "02_param.html").exists()
    assert not (tmp_path / "written.txt").exists()  # notebooks run in a temporary directory

    suite = ET.parse(out / "junit.xml").getroot().find("testsuite")
    assert (suite.get("tests"), suite.get("failures")) == ("2", "1")
    cases = {c.get("name"): c for c in suite.iter("testcase")}
    assert set(cases) == {"01_fails.ipynb", "02_param.ipynb"} and float(cases["02_param.ipynb"].get("time")) > 0
    fail = cases["01_fails.ipynb"].find("failure")
    assert fail.get("type") == "RuntimeError" and fail.get("message").endswith("RuntimeError: boom")
    assert fail.get("message").startswith("cell [") and "raise RuntimeError('boom')" in fail.text
    assert "\x1b[" not in fail.text  # colour codes stripped
    assert cases["02_param.ipynb"].find("failure") is None
    assert {p.get("name") for p in suite.iter("property")} >= {"device", "torch", "hip", "cuda"}

    doc = json.loads((out / "summary.json").read_text())
    assert doc["machine"]["torch"] and doc["machine"]["backend"] in {"cpu", "cuda", "rocm", "mps"}
    assert doc["params"].endswith("params.yaml")
    assert doc["notebooks"]["02_param"]["metrics"] == {"speed": {"value": 12.5, "unit": "items/s", "better": "higher"}}
    assert doc["notebooks"]["01_fails"]["status"] == "fail" and doc["notebooks"]["02_param"]["status"] == "pass"


def test_a_parameter_the_notebook_does_not_define_stops_the_run(tmp_path):
    notebook(tmp_path / "01_a.ipynb", "open('ran.txt', 'w')")
    typo = "01_a.ipynb defines no parameter VALEU (its parameters cell has: VALUE)"
    for text, hint in [("01_a:\n  VALUE: 1\n  VALEU: 2\n", typo),
                       ("all:\n  EPOCHS: 1\n", "01_a.ipynb defines no parameter EPOCHS"),
                       ("01_b:\n  VALUE: 1\n", "no notebook named 01_b"),
                       ("VALUE: 7\n", "must map notebook names")]:  # fmt: skip
        (tmp_path / "p.yaml").write_text(text)
        r = runner("--params", tmp_path / "p.yaml", "--out", tmp_path / "build", tmp_path / "01_a.ipynb", cwd=tmp_path)
        assert r.returncode == 2 and hint in r.stderr and "Traceback" not in r.stderr, (text, r.stderr)
        assert not (tmp_path / "build").exists()  # nothing ran


def test_the_shipped_profiles_fit_the_notebooks():
    from tools.run_notebooks import load_params

    notebooks = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    for profile in ("smoke", "full"):
        params = load_params(ROOT / "params" / f"{profile}.yaml", notebooks)
        assert set(params) == {nb.stem for nb in notebooks}, f"{profile}.yaml: every notebook, even with no knobs"


@pytest.mark.parametrize(
    "text, hint",
    [("- just\n- a list\n", "must map notebook names"), ("a: [1\n", "cannot read parameters file"),
     ("01_a: [1, 2]\n", "must map notebook names"), (None, "cannot read parameters file")],
)  # fmt: skip
def test_runner_rejects_a_bad_parameters_file(tmp_path, text, hint):
    notebook(tmp_path / "01_a.ipynb", "pass")
    if text is not None:
        (tmp_path / "bad.yaml").write_text(text)
    r = runner("--params", tmp_path / "bad.yaml", "--out", tmp_path / "build", tmp_path / "01_a.ipynb", cwd=tmp_path)
    assert r.returncode == 2 and hint in r.stderr and "Traceback" not in r.stderr, r.stderr


def test_runner_rejects_a_missing_notebook(tmp_path):
    r = cli("--out", tmp_path / "build", tmp_path / "nope.ipynb", cwd=tmp_path)
    assert r.returncode == 2 and r.stderr.startswith("error: no such notebook:") and "nope.ipynb" in r.stderr
    assert runner("--out", tmp_path / "build", tmp_path / "nope.ipynb", cwd=tmp_path).returncode == 2
