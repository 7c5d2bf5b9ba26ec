"""helpers.record: a number recorded in a notebook is found again in the executed notebook, exactly."""

import math

import nbformat
import pytest
from nbclient import NotebookClient
from nbformat.v4 import new_code_cell, new_notebook

from helpers.record import MIME, collect, record


def test_record_in_a_real_kernel_is_collected_from_the_executed_notebook():
    nb = new_notebook(cells=[
        new_code_cell("from helpers.record import record\nrecord('images_per_s/fp32', 812.4, 'images/s', 'higher')"),
        new_code_cell("print('noise')\nrecord('loss', 0.25, better='lower')\nrecord('loss', 0.5, better='lower')"),
    ])  # fmt: skip
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    NotebookClient(nb, timeout=120, kernel_name="python3").execute()
    out = nb.cells[0].outputs[0]
    assert out["output_type"] == "display_data"
    assert out["data"]["text/plain"] == ""  # the lesson shows nothing: plumbing for make run
    assert out["data"][MIME] == {"name": "images_per_s/fp32", "value": 812.4, "unit": "images/s", "better": "higher"}
    roundtrip = nbformat.reads(nbformat.writes(nb), as_version=4)  # what papermill writes, read back
    assert collect(roundtrip) == {
        "images_per_s/fp32": {"value": 812.4, "unit": "images/s", "better": "higher"},
        "loss": {"value": 0.5, "unit": "", "better": "lower"},  # the later record wins
    }


def test_record_outside_a_notebook_prints(capsys):
    assert record("seconds", 3, "s", "lower") is None  # nothing to echo at the end of a cell
    assert capsys.readouterr().out == "recorded seconds = 3 s\n"


@pytest.mark.parametrize(
    "name, value, better, hint",
    [("", 1.0, None, "non-empty name"), (None, 1.0, None, "non-empty name"), ("x", math.nan, None, "finite number"),
     ("x", math.inf, None, "finite number"), ("x", "12", None, "finite number"), ("x", True, None, "finite number"),
     ("x", 1.0, "up", "better must be")],
)  # fmt: skip
def test_record_rejects_garbage(name, value, better, hint):
    with pytest.raises(ValueError, match=hint):
        record(name, value, better=better)


def test_collect_ignores_other_outputs_and_malformed_data():
    cells = [
        {"cell_type": "markdown", "source": "x"},
        {"cell_type": "code", "outputs": [{"output_type": "stream", "text": "recorded a = 1"}]},
        {"cell_type": "code", "outputs": [{"output_type": "display_data", "data": {MIME: ["not", "a", "dict"]}}]},
        {"cell_type": "code", "outputs": [{"output_type": "display_data", "data": {MIME: {"value": 1}}}]},
        {"cell_type": "code", "outputs": None},
    ]
    assert collect({"cells": cells}) == {} and collect({}) == {}
