"""make gpu-check runs the lessons in their strict, GPU-expecting mode (COURSE_EXPECT_GPU=1)."""

import os
import re
import sys
import time
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


def test_a_job_past_the_deadline_shows_what_it_waited_for_and_leaves_nothing_running(tmp_path, monkeypatch):
    """The hang lesson 05 had on a lent GPU (a build cell that never returned) must explain itself next time."""
    for name in ("PYTHONPATH", "COURSE_EXPECT_GPU", "IPYTHONDIR", "GPU_CHECK_STACKS"):
        monkeypatch.setenv(name, "")  # restored after the test; prepare_env sets them
    monkeypatch.setattr(gpu_check, "ROOT", tmp_path)
    monkeypatch.setattr("sys.path", list(sys.path))
    gpu_check.prepare_env()
    cell = nbformat.v4.new_code_cell('import subprocess\nsubprocess.run(["sleep", "613"])')
    nb = nbformat.v4.new_notebook(cells=[cell])
    nbformat.write(nb, tmp_path / "hangs.ipynb")
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--nbval-lax",
           "--nbval-current-env", str(tmp_path / "hangs.ipynb")]  # fmt: skip
    status, _ = gpu_check.run(cmd, tmp_path / "log.txt", time.monotonic() + 25)
    log = (tmp_path / "log.txt").read_text()
    assert status.startswith("FAIL (stopped at the")
    assert "ran past the deadline" in log and "sleep 613" in log, log  # the process tree, down to the kernel's child
    stacks = log.split("(faulthandler):", 1)[-1]  # the kernel's main thread: the cell's line 2, in subprocess.run
    in_cell = r'subprocess\.py", line \d+ in run\n +File "[^"]*ipykernel_\d+/\d+\.py", line 2 in <module>'
    assert re.search(in_cell, stacks), log
    assert not [cmd for _, cmd in gpu_check.processes().values() if cmd.endswith("sleep 613")], "orphans left"


def test_build_locks_left_by_a_stopped_run_are_removed(tmp_path, monkeypatch):
    from torch.utils import cpp_extension

    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    (tmp_path / "course-fused-ops-2.14.1" / "cpu").mkdir(parents=True)
    (tmp_path / "course-fused-ops-2.14.1" / "cpu" / "lock").write_text("")
    if hasattr(cpp_extension, "FileLock"):  # this torch locks with flock: nothing to remove
        assert gpu_check.clear_build_locks() == []
        (tmp_path / "course-fused-ops-2.14.1" / "cpu" / "lock").unlink()
        monkeypatch.delattr(cpp_extension, "FileLock")  # now as torch 2.11 (FileBaton), the lent H200's
    (tmp_path / "course-fused-ops-2.11.0+cu130" / "cpu").mkdir(parents=True)
    (tmp_path / "course-fused-ops-2.11.0+cu130" / "cpu" / "lock").write_text("")
    (tmp_path / "course-fused-ops-2.11.0+cu130" / "cpu" / "fused_ops_cpu.so").write_text("")
    assert [p.name for p in gpu_check.clear_build_locks()] == ["lock"]
    assert [p.name for p in tmp_path.rglob("*") if p.is_file()] == ["fused_ops_cpu.so"]


def test_lessons_that_assert_gpu_speed_have_the_gpu_to_themselves():
    """02 and 03 assert speed ratios: each is timed while no other notebook runs (another notebook's kernels on the
    same GPU would slow one side of the ratio); only lesson 05's compilers run beside (unit tests train on a GPU)."""
    names = ["unit tests", "00_check_your_setup.ipynb", "02_mixed_precision.ipynb", "03_resnet_port.ipynb",
             "05_custom_kernels_hipify.ipynb", "06_multi_gpu_rccl.ipynb", "08_porting_dependencies.ipynb"]  # fmt: skip
    first, rest = gpu_check.phases(names, workers=4)
    assert first == [["02_mixed_precision.ipynb", "03_resnet_port.ipynb"], ["05_custom_kernels_hipify.ipynb"]]
    assert rest == [["unit tests"], ["00_check_your_setup.ipynb"], ["06_multi_gpu_rccl.ipynb"],
                    ["08_porting_dependencies.ipynb"]]  # fmt: skip
    assert gpu_check.phases(["05_custom_kernels_hipify.ipynb"], workers=4) == [[["05_custom_kernels_hipify.ipynb"]]]
    assert gpu_check.phases(names, workers=1) == [[[n] for n in names]]


def test_a_job_after_the_budget_is_spent_is_not_started(tmp_path):
    status, secs = gpu_check.run(["false"], tmp_path / "log.txt", time.monotonic() + 1)
    assert status == "FAIL (not started: budget spent)" and secs == 0.0
    assert "not started" in (tmp_path / "log.txt").read_text()
