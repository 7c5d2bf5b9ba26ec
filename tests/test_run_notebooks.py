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


def test_defined_parameters_reads_every_assignment_form(tmp_path):
    from tools.run_notebooks import defined_parameters

    nb = new_notebook(
        cells=[new_code_cell("x = 1"), new_code_cell("A = 1\nB: int = 2\nC, D = 3, 4\nE = F = 5\nprint(A)")]
    )
    nb.cells[1].metadata["tags"] = ["parameters"]
    nbformat.write(nb, tmp_path / "p.ipynb")
    assert defined_parameters(tmp_path / "p.ipynb") == ["A", "B", "C", "D", "E", "F"]
    nbformat.write(new_notebook(cells=[new_code_cell("A = 1")]), tmp_path / "none.ipynb")
    assert defined_parameters(tmp_path / "none.ipynb") == []  # no parameters cell: nothing can be set


def test_load_params_merges_all_with_each_notebook(tmp_path):
    from tools.run_notebooks import load_params

    for name in ("01_a", "02_b", "03_c"):
        notebook(tmp_path / f"{name}.ipynb", "pass")
    (tmp_path / "p.yaml").write_text("all:\n  VALUE: 1\n02_b:\n  VALUE: 2\n03_c:\n")
    run = [tmp_path / "01_a.ipynb", tmp_path / "02_b.ipynb"]
    assert load_params(tmp_path / "p.yaml", run) == {"02_b": {"VALUE": 2}, "03_c": {}, "01_a": {"VALUE": 1}}
    (tmp_path / "empty.yaml").write_text("")
    assert load_params(tmp_path / "empty.yaml", run) == {"01_a": {}, "02_b": {}}


def test_failure_from_papermill_and_from_anything_else():
    from papermill.exceptions import PapermillExecutionError

    from tools.run_notebooks import failure

    tb = ["\x1b[31mTraceback\x1b[0m", "ZeroDivisionError"]
    e = PapermillExecutionError(cell_index=3, exec_count=4, source="1/0", ename="ZeroDivisionError",
                                evalue="division by zero", traceback=tb)  # fmt: skip
    assert failure(e) == {"message": "cell [4]: ZeroDivisionError: division by zero", "type": "ZeroDivisionError",
                          "traceback": "Traceback\nZeroDivisionError"}  # fmt: skip
    text = (
        "A cell timed out while it was being executed, after 3 seconds.\nThe message was: Cell execution timed out."
        "\nHere is a preview of the cell contents:\n-------------------\n['time.sleep(60)']\n-------------------\n"
    )
    f = failure(TimeoutError(text))  # nbclient's CellTimeoutError says this
    assert f == {"message": "TimeoutError: A cell timed out while it was being executed, after 3 seconds.",
                 "type": "TimeoutError", "traceback": text}  # fmt: skip
    assert failure(RuntimeError())["message"] == "RuntimeError: "
    assert len(failure(RuntimeError("x" * 900))["message"]) == 500


def test_junit_and_markdown_documents():
    from tools.run_notebooks import junit, markdown

    info = {"device": "cpu (CPU)", "backend": "cpu", "torch": "2.14.1+cpu", "hip": None, "cuda": None,
            "python": "3.11.7", "host": "ci-7"}  # fmt: skip
    results = {
        "01_a": {
            "status": "pass",
            "seconds": 1.25,
            "error": None,
            "metrics": {"speed": {"value": 12345.678, "unit": "items/s", "better": "higher"}},
        },  # fmt: skip
        "02_b": {
            "status": "fail",
            "seconds": 2.0,
            "error": {"message": "cell [1]: E: " + "m" * 200, "type": "E", "traceback": "tb"},
            "metrics": {},
        },  # fmt: skip
    }
    root = junit(results, info, 3.14159).getroot()
    assert (root.tag, root.get("name"), root.get("tests"), root.get("failures")) == ("testsuites", "course notebooks",
                                                                                     "2", "1")  # fmt: skip
    suite = root.find("testsuite")
    assert {k: suite.get(k) for k in ("name", "tests", "failures", "errors", "skipped", "time", "hostname")} == {
        "name": "notebooks", "tests": "2", "failures": "1", "errors": "0", "skipped": "0", "time": "3.1",
        "hostname": "ci-7"}  # fmt: skip
    assert suite.get("timestamp").endswith("+00:00")
    assert {p.get("name"): p.get("value") for p in suite.iter("property")} == {
        "device": "cpu (CPU)",
        "backend": "cpu",
        "torch": "2.14.1+cpu",
        "hip": "",
        "cuda": "",
        "python": "3.11.7",
    }
    a, b = suite.findall("testcase")
    assert (a.get("classname"), a.get("name"), a.get("time"), a.find("failure")) == ("notebooks", "01_a.ipynb", "1.2",
                                                                                     None)  # fmt: skip
    fail = b.find("failure")
    assert (fail.get("type"), fail.text, b.get("time")) == ("E", "tb", "2.0") and fail.get("message").startswith("cell")
    assert markdown(results, info).splitlines() == [
        "| notebook | status | seconds | device | torch |",
        "| --- | --- | ---: | --- | --- |",
        "| 01_a.ipynb | pass | 1.2 | cpu (CPU) | 2.14.1+cpu |",
        f"| 02_b.ipynb | FAIL: {('cell [1]: E: ' + 'm' * 200)[:120]} | 2.0 | cpu (CPU) | 2.14.1+cpu |",
        "",
        "| notebook | measured | value | unit |",
        "| --- | --- | ---: | --- |",
        "| 01_a | speed | 1.235e+04 | items/s |",
    ]
    assert [p.get("name") for p in suite.find("properties")] == ["device", "backend", "torch", "hip", "cuda", "python"]
    assert junit({"01_a": results["01_a"]}, info, 1.0).getroot().get("failures") == "0"  # not the passes counted
    no_metrics = {"01_a": {**results["01_a"], "metrics": {}}}
    assert markdown(no_metrics, info).count("\n") == 3  # no empty metrics table


def test_machine_describes_this_machine():
    import torch

    from tools.run_notebooks import machine

    m = machine()
    assert m["backend"] == "cpu" and m["gpu_count"] == 0 and m["gpu_arch"] is None and m["device"] == "cpu (CPU)"
    versions = (torch.__version__, torch.version.hip, torch.version.cuda)  # portcheck: ignore=PC106 (reported)
    assert (m["torch"], m["hip"], m["cuda"]) == versions
    assert m["python"].count(".") == 2 and m["host"]


def test_main_passes_defaults_prints_progress_and_writes_each_document(tmp_path, monkeypatch):
    """main() around a stand-in run_one: what it hands each notebook, what it prints, the three files it writes."""
    import time
    from datetime import UTC, datetime, timedelta

    from tools import run_notebooks as rn

    calls = []

    def run_one(nb, out, params, cell_timeout):
        calls.append((nb.name, params, cell_timeout))
        error = {"message": "cell [3]: ValueError: no", "type": "ValueError", "traceback": "tb"}
        return {"status": "fail" if nb.stem == "02_b" else "pass", "seconds": 0.5 if nb.stem == "02_b" else 0.25,
                "error": error if nb.stem == "02_b" else None, "metrics": {}}  # fmt: skip

    monkeypatch.setattr(rn, "run_one", run_one)
    for name in ("01_a", "02_b"):
        notebook(tmp_path / f"{name}.ipynb", "x = 1")
    out, t0 = tmp_path / "deep" / "build", time.monotonic()
    r = runner("--out", out, tmp_path / "01_a.ipynb", tmp_path / "02_b.ipynb", cwd=tmp_path)
    wall = time.monotonic() - t0
    assert r.returncode == 1 and calls == [("01_a.ipynb", {}, 600), ("02_b.ipynb", {}, 600)]  # no --params: {}
    assert "\n   pass in 0.25 s\n" in r.stdout and "\n   FAIL: cell [3]: ValueError: no in 0.5 s\n" in r.stdout
    assert r.stdout.endswith((out / "summary.md").read_text() + "\n")  # the summary it wrote, printed last
    raw = (out / "junit.xml").read_bytes()
    assert raw.lower().startswith(b"<?xml version='1.0' encoding='utf-8'?>")
    assert 0 <= float(ET.fromstring(raw).find("testsuite").get("time")) <= wall + 1
    text = (out / "summary.json").read_text()
    doc = json.loads(text)
    assert text.startswith('{\n "schema": 1,\n "finished": ') and doc["params"] is None
    finished = datetime.fromisoformat(doc["finished"])
    assert finished.utcoffset() == timedelta(0) and abs((datetime.now(UTC) - finished).total_seconds()) < 300


def test_machine_counts_the_gpus_of_a_gpu_machine(monkeypatch):
    import helpers.device
    from tools.run_notebooks import machine

    info = SimpleNamespace(backend="rocm", name="AMD Instinct MI300X", arch="gfx942", count=8)
    monkeypatch.setattr(helpers.device, "detect", lambda: info)
    monkeypatch.setattr(helpers.device, "pick_device", lambda: "cuda:0")
    m = machine()
    assert (m["device"], m["backend"], m["gpu_arch"], m["gpu_count"]) == ("cuda:0 (AMD Instinct MI300X)", "rocm",
                                                                          "gfx942", 8)  # fmt: skip


def test_run_one_when_papermill_fails_before_writing_anything(tmp_path, monkeypatch):
    from tools import run_notebooks as rn

    clock = iter([10.0, 11.26])
    monkeypatch.setattr(rn, "time", SimpleNamespace(perf_counter=lambda: next(clock)))

    def no_kernel(*args, **kwargs):
        raise RuntimeError("No such kernel named python3")

    monkeypatch.setattr(rn.papermill, "execute_notebook", no_kernel)
    notebook(tmp_path / "01_x.ipynb", "x = 1")
    r = rn.run_one(tmp_path / "01_x.ipynb", tmp_path, {}, 60)
    assert r == {"status": "fail", "seconds": 1.3, "error": rn.failure(RuntimeError("No such kernel named python3")),
                 "metrics": {}}  # fmt: skip


def test_load_params_messages_name_every_offender(tmp_path):
    from tools.run_notebooks import ParamsError, load_params

    notebook(tmp_path / "01_a.ipynb", "pass")
    nbformat.write(new_notebook(cells=[new_code_cell("pass")]), tmp_path / "02_plain.ipynb")
    two = new_notebook(cells=[new_code_cell("A = 1\nB = 2")])
    two.cells[0].metadata["tags"] = ["parameters"]
    nbformat.write(two, tmp_path / "03_two.ipynb")
    for text, message in [
        ("01_x:\n  A: 1\n01_y:\n  A: 1\n", "no notebook named 01_x, 01_y (sections are notebook names or `all`)"),
        ("01_a:\n  B: 1\n  C: 2\n", "01_a.ipynb defines no parameter B, C (its parameters cell has: VALUE)"),
        ("02_plain:\n  B: 1\n", "02_plain.ipynb defines no parameter B (its parameters cell has: none)"),
        ("03_two:\n  C: 1\n", "03_two.ipynb defines no parameter C (its parameters cell has: A, B)"),
    ]:
        (tmp_path / "p.yaml").write_text(text)
        with pytest.raises(ParamsError) as e:
            load_params(tmp_path / "p.yaml", [tmp_path / "01_a.ipynb", tmp_path / "02_plain.ipynb"])
        assert str(e.value) == f"{tmp_path / 'p.yaml'}: {message}"


def test_a_hanging_cell_times_out_quietly(tmp_path):
    notebook(tmp_path / "01_slow.ipynb", "import time\ntime.sleep(60)")
    r = runner("--out", tmp_path / "build", "--cell-timeout", "3", tmp_path / "01_slow.ipynb", cwd=tmp_path)
    doc = json.loads((tmp_path / "build" / "summary.json").read_text())["notebooks"]["01_slow"]
    assert r.returncode == 1 and doc["status"] == "fail" and "timed out" in doc["error"]["message"].lower()
    assert 3 <= doc["seconds"] < 60 and doc["metrics"] == {}
    assert "Executing" not in r.stderr  # no papermill progress bar in CI logs


def test_defaults_messages_and_a_second_run_into_the_same_folder(tmp_path, capsys):
    from tools.run_notebooks import main

    notebook(tmp_path / "01_ok.ipynb", "assert VALUE == 1")
    for _ in range(2):  # the output folders exist the second time
        r = runner(tmp_path / "01_ok.ipynb", cwd=tmp_path)  # no --out: ./build
        assert r.returncode == 0, r.stdout + r.stderr
        assert r.stdout.startswith("== 01_ok.ipynb on cpu (CPU)\n   pass in ") and r.stderr == ""
    assert (tmp_path / "build" / "summary.md").exists() and (tmp_path / "build" / "html" / "01_ok.html").exists()
    passed = json.loads((tmp_path / "build" / "summary.json").read_text())["notebooks"]["01_ok"]
    assert (passed["status"], passed["error"], passed["metrics"]) == ("pass", None, {})
    r = runner(tmp_path / "a.ipynb", tmp_path / "b.ipynb", cwd=tmp_path)
    assert r.stderr == f"error: no such notebook: {tmp_path / 'a.ipynb'}, {tmp_path / 'b.ipynb'}\n"
    with pytest.raises(SystemExit):
        main(["--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert (
        "Execute notebooks with papermill; write HTML, build/summary.md, build/junit.xml and build/summary.json."
        in text
    )
    assert " --params PARAMS YAML file: notebook name (or `all`) -> papermill parameters " in text
