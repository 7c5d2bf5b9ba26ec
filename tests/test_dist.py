import os
import re
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
import torch

from helpers.dist import check_backend, dist_backend, run_torchrun

SCRIPT = str(Path(__file__).parent.parent / "notebooks" / "assets" / "ddp_train.py")


def running_with(marker: str) -> list[int]:
    """PIDs of live processes whose command line contains marker."""
    pids = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                if marker.encode() in (d / "cmdline").read_bytes():
                    pids.append(int(d.name))
            except OSError:
                pass
    return pids


@pytest.mark.parametrize("device, want", [("cuda", "nccl"), ("cuda:1", "nccl"), ("cpu", "gloo"), ("mps", "gloo")])
def test_dist_backend(device, want):
    assert dist_backend(torch.device(device)) == want
    assert dist_backend(device) == want  # a device string works too


@pytest.mark.parametrize(
    "name, words",
    [("rccl", ['no "rccl" backend', "RCCL"]), ("HCCL", ["Huawei"]), ("mpi4", ["unknown backend", "nccl, gloo"])],
)
def test_wrong_backend_names_are_clear(name, words):
    with pytest.raises(ValueError) as e:
        check_backend(name)
    assert "\n" not in str(e.value) and all(w in str(e.value) for w in words)
    assert check_backend(" NCCL ") == "nccl" and check_backend("gloo") == "gloo"


def test_ddp_script_two_cpu_ranks(tmp_path):
    ckpt = tmp_path / f"ddp-{uuid.uuid4().hex}.pt"
    r = run_torchrun(
        SCRIPT,
        ["--model", "mlp", "--epochs", "2", "--checkpoint", ckpt],
        nproc=2,
        timeout=300,
        env={"CUDA_VISIBLE_DEVICES": "-1", "HIP_VISIBLE_DEVICES": "-1"},  # hides GPUs on every stack
    )
    assert r.returncode == 0, r.output
    for rank in (0, 1):
        assert re.search(rf"\[rank {rank}\] epoch 2: trained on 719 samples", r.output), r.output
    m = re.search(r"self-check passed: parameter checksums \[(\S+), (\S+)\] \(identical\)", r.output)
    assert m and m.group(1) == m.group(2)
    assert "backend 'gloo'" in r.output and ckpt.exists()
    state = torch.load(ckpt, map_location="cpu")
    assert not any(k.startswith("module.") for k in state)
    assert running_with(ckpt.name) == []


def test_wrong_backend_fails_clearly_and_leaves_no_process(tmp_path):
    marker = f"ddp-{uuid.uuid4().hex}.pt"
    r = run_torchrun(
        SCRIPT,
        ["--model", "mlp", "--backend", "rccl", "--checkpoint", tmp_path / marker],
        nproc=2,
        timeout=300,
        env={"CUDA_VISIBLE_DEVICES": "-1", "HIP_VISIBLE_DEVICES": "-1"},  # hides GPUs on every stack
    )
    assert r.returncode != 0 and 'no "rccl" backend' in r.output
    assert running_with(marker) == []


def test_timeout_reaps_every_worker(tmp_path):
    marker = f"sleeper-{uuid.uuid4().hex}"
    script = tmp_path / f"{marker}.py"
    script.write_text("import time\nprint('worker up', flush=True)\ntime.sleep(600)\n")
    r = run_torchrun(str(script), nproc=2, timeout=8)
    assert r.timed_out and r.returncode != 0
    assert running_with(marker) == []
    assert r.output.count("worker up") == 2  # what the workers printed before the timeout is kept


def test_timeout_kills_workers_that_ignore_sigterm(tmp_path, monkeypatch):
    """torchrun SIGTERMs its workers and waits 30 s before it kills them; the call must not wait for them (before this
    test it waited until the workers' own sleep ended: 600 s), and no worker may be left behind."""
    import helpers.dist

    monkeypatch.setattr(helpers.dist, "GRACE_S", 3)
    marker = f"stubborn-{uuid.uuid4().hex}"
    script = tmp_path / f"{marker}.py"
    script.write_text("import signal, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
                      "print('stubborn worker up', flush=True)\ntime.sleep(600)\n")  # fmt: skip
    t0 = time.monotonic()
    r = run_torchrun(str(script), nproc=2, timeout=6)
    # 6 s + GRACE_S (3 s) + reaping; waiting for torchrun's own 30 s grace instead would take 36 s or more
    assert r.timed_out and time.monotonic() - t0 < 25
    assert running_with(marker) == []
    assert r.output.count("stubborn worker up") == 2  # kept after the kill, too


def test_an_interrupt_stops_torchrun_and_its_workers(tmp_path, monkeypatch):
    """Ctrl-C (the notebook's stop button) while torchrun runs: the KeyboardInterrupt goes on, no worker stays."""
    import subprocess

    marker = f"interrupted-{uuid.uuid4().hex}"
    script = tmp_path / f"{marker}.py"
    script.write_text("import time\ntime.sleep(600)\n")
    real = subprocess.Popen.communicate
    calls = []

    def communicate(self, *args, **kwargs):
        calls.append(1)
        if len(calls) == 1:  # the first wait: interrupted once both workers run
            deadline = time.monotonic() + 60
            while len(running_with(marker)) < 2 and time.monotonic() < deadline:
                time.sleep(0.2)
            raise KeyboardInterrupt
        return real(self, *args, **kwargs)

    monkeypatch.setattr(subprocess.Popen, "communicate", communicate)
    with pytest.raises(KeyboardInterrupt):
        run_torchrun(str(script), nproc=2, timeout=300)
    # calls: the interrupted wait, then _stop's wait; a third when torchrun has not closed its output GRACE_S after the
    # SIGTERM and everything is killed (it happened once in make test). Either way no worker may stay.
    assert len(calls) >= 2 and running_with(marker) == []


def test_process_finder_really_finds_processes():
    # the reaping tests above would pass vacuously if running_with() never found anything
    import subprocess

    marker = f"marker-{uuid.uuid4().hex}"
    p = subprocess.Popen([sys.executable, "-c", "import time, sys; time.sleep(60)", marker])
    try:
        for _ in range(50):  # the child may still be starting
            if running_with(marker):
                break
            time.sleep(0.1)
        assert running_with(marker) == [p.pid]
    finally:
        p.kill()
        p.wait()
    assert running_with(marker) == []


def test_children_are_found_whatever_their_name(monkeypatch):
    """/proc/PID/stat is "pid (comm) state ppid ...", and comm may itself hold ") ": parse from the last one. A process
    that exits while /proc is read is skipped, not the end of the search."""
    import helpers.dist
    from helpers.dist import _children

    real_glob = helpers.dist.glob.glob
    monkeypatch.setattr(helpers.dist.glob, "glob", lambda pattern: ["/proc/0/gone/stat", *real_glob(pattern)])

    code = "open('/proc/self/comm', 'w').write('a) b) c'); print('named', flush=True); import time; time.sleep(60)"
    child = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline() == "named\n"
        assert child.pid in _children(os.getpid())
    finally:
        child.kill()
        child.wait()


def test_defaults_two_workers_with_this_environment_and_env_added(tmp_path):
    script = tmp_path / "show_env.py"
    # one os.write per worker: a single write to a pipe is atomic, print's pieces from two workers can interleave
    show = "os.write(1, f\"world {e['WORLD_SIZE']} {e['COURSE_MARK']} {'PATH' in e}\\n\".encode())"
    script.write_text(f"import os\ne = os.environ\n{show}\n")
    r = run_torchrun(str(script), env={"COURSE_MARK": "m1"})
    assert r.returncode == 0 and r.timed_out is False, r.output
    assert r.output.count("world 2 m1 True") == 2  # nproc=2 by default; os.environ plus env


def test_a_silent_run_has_empty_output(tmp_path):
    script = tmp_path / "quiet.py"
    script.write_text("pass\n")
    r = run_torchrun(str(script), nproc=1, timeout=120)
    assert (r.returncode, r.output, r.timed_out) == (0, "", False)
