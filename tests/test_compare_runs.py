"""tools/compare_runs.py: status changes and moved numbers between two `make run` summaries, and its exit code."""

import copy
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent
from tools.compare_runs import compare


def metric(value, better, unit="images/s"):
    return {"value": value, "unit": unit, "better": better}


OLD = {
    "schema": 1,
    "machine": {"device": "cuda (AMD Instinct MI300X)", "torch": "2.14.1", "hip": "7.14", "cuda": None},
    "notebooks": {
        "01_device_mapping": {"status": "pass", "seconds": 9.0, "error": None, "metrics": {}},
        "02_mixed_precision": {"status": "pass", "seconds": 40.0, "error": None, "metrics": {
            "images_per_s/fp32": metric(1000.0, "higher"), "images_per_s/bf16": metric(2000.0, "higher"),
            "loss": metric(0.5, "lower", ""), "batches": metric(10, None, "")}},
        "04_troubleshooting": {"status": "fail", "seconds": 5.0, "error": {"message": "x"}, "metrics": {}},
    },
}  # fmt: skip


def test_identical_runs_have_no_changes():
    assert compare(OLD, copy.deepcopy(OLD)) == ([], [])


def test_a_notebook_that_now_fails_is_a_regression_with_its_error():
    new = copy.deepcopy(OLD)
    new["notebooks"]["01_device_mapping"].update(status="fail", error={"message": "cell [7]: AssertionError: trains"})
    bad, info = compare(OLD, new)
    assert bad == ["01_device_mapping: pass -> fail (cell [7]: AssertionError: trains)"] and info == []


def test_fixed_new_and_missing_notebooks():
    new = copy.deepcopy(OLD)
    new["notebooks"]["04_troubleshooting"].update(status="pass", error=None)
    new["notebooks"]["07_performance_tuning"] = {"status": "pass", "seconds": 1, "error": None, "metrics": {}}
    del new["notebooks"]["01_device_mapping"]
    bad, info = compare(OLD, new)
    assert bad == ["01_device_mapping: missing from the new run (was pass)"]
    assert info == ["04_troubleshooting: fail -> pass", "07_performance_tuning: new notebook (pass)"]


def test_numbers_moving_the_wrong_way_beyond_the_threshold_are_regressions():
    new = copy.deepcopy(OLD)
    m = new["notebooks"]["02_mixed_precision"]["metrics"]
    m["images_per_s/fp32"]["value"] = 850.0  # -15 %: slower
    m["images_per_s/bf16"]["value"] = 1900.0  # -5 %: within the threshold
    m["loss"]["value"] = 0.25  # -50 % on a lower-is-better number: better
    m["batches"]["value"] = 20  # no direction: reported only
    bad, info = compare(OLD, new, threshold=0.10)
    assert bad == ["02_mixed_precision: images_per_s/fp32 1000 -> 850 images/s (-15%)"]
    assert info == ["02_mixed_precision: batches 10 -> 20 (+100%)", "02_mixed_precision: loss 0.5 -> 0.25 (-50%)"]
    assert compare(OLD, new, threshold=0.20)[0] == []  # a looser threshold lets it pass
    m["loss"]["value"] = 0.6  # +20 % on lower-is-better: worse
    assert "02_mixed_precision: loss 0.5 -> 0.6 (+20%)" in compare(OLD, new)[0]


def run(tmp_path, old, new, *args):
    (tmp_path / "old.json").write_text(old if isinstance(old, str) else json.dumps(old))
    (tmp_path / "new.json").write_text(new if isinstance(new, str) else json.dumps(new))
    return subprocess.run([sys.executable, str(ROOT / "tools" / "compare_runs.py"), str(tmp_path / "old.json"),
                           str(tmp_path / "new.json"), *args], capture_output=True, text=True, timeout=60)  # fmt: skip


def test_cli_exit_codes_and_output(tmp_path):
    r = run(tmp_path, OLD, OLD)
    assert r.returncode == 0 and "0 regression(s), 0 other change(s) beyond 10%" in r.stdout
    new = copy.deepcopy(OLD)
    new["machine"]["torch"] = "2.15.0"
    new["notebooks"]["02_mixed_precision"]["metrics"]["images_per_s/bf16"]["value"] = 1000.0
    r = run(tmp_path, OLD, new)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "note: torch differs: 2.14.1 -> 2.15.0" in r.stdout
    assert "REGRESSION 02_mixed_precision: images_per_s/bf16 2000 -> 1000 images/s (-50%)" in r.stdout
    assert run(tmp_path, OLD, new, "--threshold", "0.6").returncode == 0


@pytest.mark.parametrize("text", ["not json", "[1, 2]", '{"notebooks": {"a": 1}}', '{"schema": 1}'])
def test_cli_rejects_files_that_are_not_summaries(tmp_path, text):
    r = run(tmp_path, OLD, text)
    assert r.returncode == 2 and r.stderr.startswith("error: ") and "Traceback" not in r.stderr


def test_cli_rejects_a_percent_threshold(tmp_path):
    r = run(tmp_path, OLD, OLD, "--threshold", "15")
    assert r.returncode == 2 and "fraction" in r.stderr
