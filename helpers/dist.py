"""torch.distributed on CUDA, ROCm and CPU: the backend name, and running torchrun from Python.

On ROCm the collective library is RCCL, and PyTorch still calls its backend ``"nccl"``; there is no
``"rccl"`` backend (https://pytorch.org/docs/stable/distributed.html#backends). CPU uses ``"gloo"``.

    >>> import torch
    >>> from helpers.dist import dist_backend
    >>> dist_backend(torch.device("cpu"))
    'gloo'
"""

from __future__ import annotations

import glob
import os
import signal
import subprocess
import sys
from dataclasses import dataclass

BACKENDS = ("nccl", "gloo")  # the two that exist on ROCm builds ("nccl" = RCCL there)
WRONG = {
    "rccl": 'there is no "rccl" backend: on ROCm the backend is "nccl", and it is RCCL',
    "hccl": 'HCCL is Huawei Ascend\'s library, not AMD\'s: use "nccl" (RCCL on ROCm) or "gloo" on CPU',
}


def dist_backend(device) -> str:
    """``"nccl"`` for GPUs of either vendor (NCCL on NVIDIA, RCCL on AMD), ``"gloo"`` for everything else."""
    return "nccl" if str(device).startswith("cuda") else "gloo"  # str(torch.device("cuda", 0)) == "cuda:0"


def check_backend(name: str) -> str:
    """Return ``name`` if it is a backend this course supports, else raise a one-line ValueError."""
    key = str(name).strip().lower()
    if key in WRONG:
        raise ValueError(f"backend {name!r}: {WRONG[key]}")
    if key not in BACKENDS:
        raise ValueError(f"unknown backend {name!r}: use one of {', '.join(BACKENDS)}")
    return key


@dataclass
class TorchrunResult:
    returncode: int
    output: str  # stdout and stderr of all ranks, interleaved
    timed_out: bool


GRACE_S = 10  # after SIGTERM, how long torchrun gets to stop its workers before everything is killed


def run_torchrun(script: str, args=(), nproc: int = 2, timeout: float = 300, env=None) -> TorchrunResult:
    """``torchrun --standalone --nproc-per-node N script args`` as a child process, bounded by ``timeout``.

    Runs ``python -m torch.distributed.run`` (what the ``torchrun`` command runs). torchrun starts each worker in
    a session of its own and stops them when it gets SIGTERM; a worker that ignores SIGTERM (stuck in a collective,
    in a kernel) is killed here after ``GRACE_S`` seconds, with its process group. No worker outlives the call, on
    success, failure, timeout or an interrupt (Ctrl-C, the notebook's stop button).
    """
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc-per-node={nproc}", script]
    proc = subprocess.Popen(
        cmd + [str(a) for a in args],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, **(env or {})},
        start_new_session=True,
    )
    timed_out = False
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        out = _stop(proc)
    finally:
        if proc.poll() is None:  # interrupted: stop torchrun and its workers before the exception goes on
            _stop(proc)
    return TorchrunResult(proc.returncode, out or "", timed_out)


def _stop(proc: subprocess.Popen) -> str:
    """SIGTERM to torchrun (it forwards it to its workers); after GRACE_S, SIGKILL to it and to each worker's group."""
    workers = _children(proc.pid)  # each leads its own process group (torch elastic's SubprocessHandler)
    _kill_group(proc.pid, signal.SIGTERM)
    try:
        return proc.communicate(timeout=GRACE_S)[0]
    except subprocess.TimeoutExpired:
        for pid in [proc.pid, *workers]:
            _kill_group(pid, signal.SIGKILL)
        return proc.communicate()[0]  # the pipe closes once the last worker is gone


def _children(pid: int) -> list[int]:
    """PIDs whose parent is ``pid``, from /proc (Linux; an empty list elsewhere)."""
    found = []
    for stat in glob.glob("/proc/[0-9]*/stat"):
        try:
            with open(stat) as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])  # "pid (comm) state ppid ..."
        except (OSError, IndexError, ValueError):
            continue
        if ppid == pid:
            found.append(int(stat.split("/")[2]))
    return found


def _kill_group(pgid: int, sig) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass
