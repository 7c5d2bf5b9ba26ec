"""Mixed precision that runs everywhere: which dtype, autocast, and a scaler only for float16.

The portable replacements of the deprecated ``torch.cuda.amp`` API are plain PyTorch:
``torch.autocast(device.type, dtype=...)`` and ``torch.amp.GradScaler(device.type)``
(https://pytorch.org/docs/stable/amp.html). This module only decides *which* dtype.

    >>> import torch
    >>> from helpers.precision import choose_amp_dtype, autocast, make_grad_scaler
    >>> dtype, why = choose_amp_dtype(torch.device("cpu"))
    >>> with autocast(torch.device("cpu"), dtype):
    ...     y = torch.nn.Linear(4, 4)(torch.ones(2, 4))
"""

from __future__ import annotations

import re
from collections.abc import Callable

import torch

LOW_PRECISION = (torch.bfloat16, torch.float16)


def _matmul(device: torch.device) -> None:
    a = torch.randn(16, 16, device=device)
    (a @ a).sum().item()


def _conv(device: torch.device) -> None:
    x = torch.randn(1, 3, 8, 8, device=device)
    torch.nn.functional.conv2d(x, torch.randn(4, 3, 3, 3, device=device)).sum().item()


def probe_dtypes(device: torch.device, ops: tuple[Callable, ...] = (_matmul, _conv)) -> dict:
    """{dtype: True/False}: does a matmul and a convolution really run under autocast in that dtype?

    Runs tiny ops and catches the error; ``torch.cuda.is_bf16_supported()`` is no substitute
    (it returns True unconditionally on ROCm builds).
    """
    works = {torch.float32: True}
    for dtype in LOW_PRECISION:
        try:
            with torch.autocast(device_type=device.type, dtype=dtype):
                for op in ops:
                    op(device)
            works[dtype] = True
        except (RuntimeError, TypeError, NotImplementedError, AssertionError):
            works[dtype] = False
    return works


def cpu_has_native_bf16() -> bool | None:
    """Does the CPU have bf16 instructions (x86: AVX512-BF16 or AMX; Arm: the BF16 feature)?

    Read from /proc/cpuinfo; None where that file does not exist (macOS, Windows): unknown.
    """
    try:
        with open("/proc/cpuinfo") as f:
            info = f.read()
    except OSError:
        return None
    return bool(re.search(r"\b(avx512_bf16|amx_bf16)\b", info) or re.search(r"^Features\s*:.*\bbf16\b", info, re.M))


def recommend_amp_dtype(backend: str, works: dict, cpu_bf16: bool | None = False, cuda_major: int | None = None):
    """The decision, as a pure function: (dtype or None, reason). ``None`` means stay in float32.

    backend: "rocm", "cuda", "mps" or "cpu" (as ``helpers.device.detect().backend``).
    """
    if backend in ("rocm", "cuda", "mps"):
        bf16_fast = backend == "rocm" or backend == "mps" or (cuda_major or 0) >= 8  # NVIDIA: Ampere and newer
        if works.get(torch.bfloat16) and bf16_fast:
            return torch.bfloat16, "bfloat16 runs on this GPU: float32's range, no GradScaler needed"
        if works.get(torch.float16):
            return torch.float16, "no fast bfloat16 here: float16 with a GradScaler"
        return None, "no low-precision dtype runs here: stay in float32"
    if works.get(torch.bfloat16) and cpu_bf16:
        return torch.bfloat16, "CPU with AVX512-BF16/AMX: bfloat16 autocast"
    return None, "CPU without bf16 instructions: float32 (low precision would be emulated and slower)"


def choose_amp_dtype(device: torch.device):
    """(dtype or None, reason) for this device, from a real probe of what runs."""
    from helpers.device import detect

    backend = device.type
    cuda_major = None
    if device.type == "cuda":
        backend = detect().backend
        cuda_major = torch.cuda.get_device_capability(device)[0] if backend == "cuda" else None
    return recommend_amp_dtype(backend, probe_dtypes(device), cpu_has_native_bf16(), cuda_major)


def autocast(device: torch.device, dtype: torch.dtype | None):
    """``torch.autocast`` for ``device``; a no-op context when dtype is None or float32."""
    enabled = dtype in LOW_PRECISION
    return torch.autocast(device_type=device.type, dtype=dtype if enabled else None, enabled=enabled)


def make_grad_scaler(device: torch.device, dtype: torch.dtype | None) -> torch.amp.GradScaler:
    """``torch.amp.GradScaler``, enabled only for float16 (bfloat16 has float32's exponent range)."""
    return torch.amp.GradScaler(device.type, enabled=dtype == torch.float16)
