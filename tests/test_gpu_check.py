"""make gpu-check runs the lessons in their strict, GPU-expecting mode (COURSE_EXPECT_GPU=1)."""

import os
from pathlib import Path

import nbformat
import pytest
import torch
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

ROOT = Path(__file__).parent.parent
from tools import gpu_check


def test_prepare_env_turns_on_the_strict_mode(tmp_path, monkeypatch):
    monkeypatch.setattr(gpu_check, "ROOT", tmp_path)  # no carried wheels to install here
    monkeypatch.delenv("COURSE_EXPECT_GPU", raising=False)
    gpu_check.prepare_env()
    assert os.environ["COURSE_EXPECT_GPU"] == "1"
    monkeypatch.setenv("COURSE_EXPECT_GPU", "0")  # a person can still turn it off
    gpu_check.prepare_env()
    assert os.environ["COURSE_EXPECT_GPU"] == "0"


@pytest.mark.skipif(torch.cuda.is_available() or torch.backends.mps.is_available(), reason="needs no GPU")
def test_lesson_00_fails_without_a_gpu_in_strict_mode(monkeypatch):
    monkeypatch.setenv("COURSE_EXPECT_GPU", "1")
    nb = nbformat.read(ROOT / "notebooks" / "00_check_your_setup.ipynb", as_version=4)
    with pytest.raises(CellExecutionError, match="no GPU in use|the doctor reports a FAIL"):
        NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(ROOT)}}).execute()
