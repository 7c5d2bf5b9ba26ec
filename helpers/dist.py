"""torch.distributed on CUDA, ROCm and CPU: the backend name, and running torchrun from Python.

On ROCm the collective library is RCCL, and PyTorch still calls its backend ``"nccl"``; there is no
``"rccl"`` backend (https://pytorch.org/docs/stable/distributed.html#backends). CPU uses ``"gloo"``.

    >>> import torch
    >>> from helpers.dist import dist_backend
    >>> dist_backend(torch.device("cpu"))
    'gloo'
"""

from __future__ import annotations

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
    return "nccl" if getattr(device, "type", str(device)).startswith("cuda") else "gloo"


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


def run_torchrun(script: str, args=(), nproc: int = 2, timeout: float = 300, env=None) -> TorchrunResult:
    """``torchrun --standalone --nproc-per-node N script args`` as a child process group.

    Runs ``python -m torch.distributed.run`` (what the ``torchrun`` command runs) in a new session,
    and kills the whole group afterwards, so no worker outlives the call, even on failure or timeout.
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
        _kill_group(proc.pid, signal.SIGTERM)
        try:
            out, _ = proc.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            _kill_group(proc.pid, signal.SIGKILL)
            out, _ = proc.communicate()
    finally:
        _kill_group(proc.pid, signal.SIGKILL)  # stragglers of the group, if any
    return TorchrunResult(proc.returncode, out or "", timed_out)


def _kill_group(pgid: int, sig) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass
