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


# GPU targets with bf16 matrix instructions: AMD CDNA (MI100 gfx908, MI200 gfx90a, MI300 gfx942, MI350 gfx950) and
# RDNA3+ (gfx11xx WMMA, gfx12xx); not RDNA2 (gfx103x) or Vega (gfx906). NVIDIA: Ampere (sm_80) and newer.
AMD_BF16_MATRIX = ("gfx908", "gfx90a", "gfx94", "gfx95", "gfx11", "gfx12")


def has_bf16_matrix_units(arch: str | None) -> bool:
    """Does this GPU target ("gfx942", "sm_90", as ``helpers.device.detect().arch``) compute bf16 in hardware?"""
    if not arch:
        return False
    if arch.startswith("sm_"):
        return int("".join(ch for ch in arch[3:] if ch.isdigit())) >= 80
    return arch.startswith(AMD_BF16_MATRIX)


def asserts_amp_speedup(arch: str | None) -> bool:
    """Do lessons 02 and 03 *assert* that AMP beats float32 on a ResNet with this GPU target? Only where the
    convolution libraries have tuned low-precision kernels: NVIDIA from Ampere (sm_80), AMD Instinct MI200, MI300 and
    MI350. Radeon RDNA3/RDNA4 have bf16 matrix units too, but MIOpen may run their bf16 convolutions on slow generic
    kernels (ROCm/legacy-rocm-build#5191, an RX 7900 XTX): there the lessons measure and show, and do not assert."""
    if not arch or not has_bf16_matrix_units(arch):
        return False
    return arch.startswith("sm_") or arch.startswith(("gfx90a", "gfx94", "gfx95"))


# MIOpen's NHWC path (PYTORCH_MIOPEN_SUGGEST_NHWC=1): faster on Instinct, measured slower on Radeon RDNA3, which is why
# torch 2.11 made it opt-in again (pytorch#170764; pytorch#170947 proposed it for gfx90a, gfx942 and gfx950 only).
MIOPEN_NHWC = {"PYTORCH_MIOPEN_SUGGEST_NHWC": "1", "PYTORCH_MIOPEN_SUGGEST_NHWC_BATCHNORM": "1"}


def suggests_nhwc(arch: str | None) -> bool:
    """Do lessons 02 and 03 turn on MIOpen's NHWC path for this GPU target? On AMD Instinct (gfx90a, gfx94x, gfx95x)."""
    return bool(arch) and arch.startswith(("gfx90a", "gfx94", "gfx95"))


def recommend_amp_dtype(backend: str, works: dict, cpu_bf16: bool | None = False, arch: str | None = None):
    """The decision, as a pure function: (dtype or None, reason). ``None`` means stay in float32.

    backend: "rocm", "cuda", "mps" or "cpu" and arch: the GPU target, as ``helpers.device.detect()`` reports them.
    """
    if backend in ("rocm", "cuda", "mps"):
        bf16_fast = backend == "mps" or has_bf16_matrix_units(arch)
        if works.get(torch.bfloat16) and bf16_fast:
            return torch.bfloat16, "bfloat16 runs on this GPU: float32's range, no GradScaler needed"
        if works.get(torch.float16):
            why = f"{arch} has no bfloat16 matrix units" if arch and not bf16_fast else "no fast bfloat16 here"
            return torch.float16, f"{why}: float16 with a GradScaler"
        return None, "no low-precision dtype runs here: stay in float32"
    if works.get(torch.bfloat16) and cpu_bf16:
        return torch.bfloat16, "CPU with AVX512-BF16/AMX: bfloat16 autocast"
    return None, "CPU without bf16 instructions: float32 (low precision would be emulated and slower)"


def choose_amp_dtype(device: torch.device):
    """(dtype or None, reason) for this device, from a real probe of what runs.

    On a GPU the target is that of *this* GPU (helpers.device.device_arch): cuda:1 on a machine with an RX 7900
    (gfx1100) and an RX 6800 (gfx1030) is the gfx1030; a device without an index is torch's current GPU.
    """
    from helpers.device import device_arch

    backend = ("rocm" if torch.version.hip else "cuda") if device.type == "cuda" else device.type
    return recommend_amp_dtype(backend, probe_dtypes(device), cpu_has_native_bf16(), device_arch(device))


def autocast(device: torch.device, dtype: torch.dtype | None):
    """``torch.autocast`` for ``device``; a no-op context when dtype is None or float32."""
    enabled = dtype in LOW_PRECISION
    return torch.autocast(device_type=device.type, dtype=dtype if enabled else None, enabled=enabled)


def make_grad_scaler(device: torch.device, dtype: torch.dtype | None) -> torch.amp.GradScaler:
    """``torch.amp.GradScaler``, enabled only for float16 (bfloat16 has float32's exponent range)."""
    return torch.amp.GradScaler(device.type, enabled=dtype == torch.float16)
