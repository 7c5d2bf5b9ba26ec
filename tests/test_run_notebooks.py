"""`make run`'s runner: runs every notebook even after a failure, passes parameters, writes the summary."""

import subprocess
import sys
from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

ROOT = Path(__file__).parent.parent


def notebook(path: Path, code: str):
    params = new_code_cell("VALUE = 1")
    params.metadata["tags"] = ["parameters"]
    nb = new_notebook(cells=[new_markdown_cell("# t"), new_code_cell("import os"), params, new_code_cell(code)])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, path)


def test_runner_keeps_going_and_reports(tmp_path):
    notebook(tmp_path / "01_fails.ipynb", "raise RuntimeError('boom')")
    notebook(tmp_path / "02_param.ipynb", "assert VALUE == 7, VALUE\nopen('written.txt', 'w').write('x')")
    (tmp_path / "params.yaml").write_text("VALUE: 7\n")
    out = tmp_path / "build"
    r = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "run_notebooks.py"), "--params", str(tmp_path / "params.yaml"),
         "--out", str(out), "--cell-timeout", "120",
         str(tmp_path / "01_fails.ipynb"), str(tmp_path / "02_param.ipynb")],
        capture_output=True, text=True, timeout=300, cwd=tmp_path,
    )  # fmt: skip
    assert r.returncode == 1, r.stdout + r.stderr
    summary = (out / "summary.md").read_text()
    assert "| 01_fails.ipynb | FAIL" in summary and "boom" in summary
    assert "| 02_param.ipynb | pass |" in summary  # ran after the failure, with VALUE from the YAML file
    assert (out / "executed" / "02_param.ipynb").exists() and (out / "html" / "02_param.html").exists()
    assert not (tmp_path / "written.txt").exists()  # notebooks run in a temporary directory


def test_runner_rejects_a_bad_parameters_file(tmp_path):
    (tmp_path / "bad.yaml").write_text("- just\n- a list\n")
    r = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "run_notebooks.py"), "--params", str(tmp_path / "bad.yaml"), "x.ipynb"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 2 and "mapping" in r.stderr and "Traceback" not in r.stderr
