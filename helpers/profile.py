"""Read a ``torch.profiler`` run: the top operators and GPU kernels as a table and a bar chart (lesson 07).

    >>> import torch
    >>> from torch.profiler import profile, ProfilerActivity
    >>> with profile(activities=[ProfilerActivity.CPU]) as prof:
    ...     y = torch.randn(256, 256) @ torch.randn(256, 256)
    >>> rows = top(prof, n=8)           # by self time; on a GPU run also top(prof, kernels=True)
    >>> "aten::mm" in [r.name for r in rows]
    True
    >>> print(table(rows).splitlines()[0])  # a markdown table; figure(rows, "one matmul") draws the bars
    | name | calls | self ms | share of these | total ms |

``kernel_library(name)`` tells which library a GPU kernel comes from by its name: MIOpen and rocBLAS/hipBLASLt
on ROCm, cuDNN and cuBLAS on CUDA, Triton kernels from ``torch.compile``, PyTorch's own ATen kernels.
``conv_layout(device, dtype, env)`` profiles one channels_last convolution in a fresh process (lesson 02).
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass

from torch.autograd import DeviceType

# First match wins: the specific libraries before the generic "gemm" of the BLAS libraries.
KERNEL_LIBRARIES = (
    (re.compile(r"miopen|naive_conv|ConvHip|igemm|gridwise_conv|MIOpenBatchNorm|MIOpenConv", re.I), "MIOpen"),
    (re.compile(r"(^|_)Cijk_"), "rocBLAS / hipBLASLt (Tensile)"),
    # CK names longer than 1024 characters stay mangled in the profiler (kineto's demangler skips them): _ZN2ck...
    (re.compile(r"\bck(_tile)?::|^_ZN(2ck|7ck_tile)\d|device_gemm_xdl|kernel_gemm_xdl|^Fmha"), "Composable Kernel"),
    (re.compile(r"rocblas|hipblas", re.I), "rocBLAS / hipBLASLt"),
    (re.compile(r"^triton_|^triton__"), "Triton (torch.compile)"),
    (re.compile(r"attn_fwd|attn_bwd|aotriton", re.I), "AOTriton (SDPA)"),
    (re.compile(r"flash_fwd|flash_bwd|fmha_", re.I), "flash / memory-efficient attention"),
    (re.compile(r"cudnn|xmma_(fprop|dgrad|wgrad)|implicit_convolve|winograd", re.I), "cuDNN"),
    (re.compile(r"gemm|gemv|cublas|cutlass|nvjet", re.I), "cuBLAS / cuBLASLt"),
    (re.compile(r"at::native|elementwise_kernel|reduce_kernel|vectorized_|batch_norm|softmax", re.I), "PyTorch (ATen)"),
)


def kernel_library(name: str) -> str:
    """The library a GPU kernel name comes from, or "other"."""
    return next((lib for rx, lib in KERNEL_LIBRARIES if rx.search(name)), "other")


@dataclass(frozen=True)
class Row:
    name: str
    calls: int
    self_ms: float  # time in this op or kernel itself, children excluded
    total_ms: float


def top(prof, n: int = 10, kernels: bool = False) -> list[Row]:
    """The ``n`` operators (CPU side) or GPU kernels (``kernels=True``) with the most self time."""
    rows = []
    for e in prof.key_averages():
        if (e.device_type != DeviceType.CPU) != kernels:  # GPU kernels are CUDA-type events on ROCm too
            continue
        if getattr(e, "is_user_annotation", False):  # GPU-side copies of record_function ranges: not kernels
            continue
        self_us = _device_self(e) if kernels else e.self_cpu_time_total
        total_us = getattr(e, "device_time_total", 0) if kernels else e.cpu_time_total
        rows.append(Row(e.key, e.count, self_us / 1e3, total_us / 1e3))
    return sorted(rows, key=lambda r: -r.self_ms)[:n]


def _device_self(e) -> float:
    """Self device time in us (``self_device_time_total``; ``self_cuda_time_total`` before torch 2.4)."""
    return getattr(e, "self_device_time_total", None) or getattr(e, "self_cuda_time_total", 0) or 0


def table(rows: list[Row], libraries: bool = False) -> str:
    """A markdown table; ``libraries=True`` adds the library column for GPU kernels."""
    total = sum(r.self_ms for r in rows) or 1.0
    head = "| name | calls | self ms | share of these | total ms |" + (" library |" if libraries else "")
    lines = [head, "| --- | ---: | ---: | ---: | ---: |" + (" --- |" if libraries else "")]
    for r in rows:
        name = r.name if len(r.name) <= 70 else r.name[:67] + "..."
        lib = f" {kernel_library(r.name)} |" if libraries else ""
        lines.append(f"| `{name}` | {r.calls} | {r.self_ms:.2f} | {r.self_ms / total:.0%} | {r.total_ms:.2f} |{lib}")
    return "\n".join(lines)


def figure(rows: list[Row], title: str):
    """A horizontal bar chart of self time, the largest on top."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 0.4 + 0.35 * len(rows)))
    names = [r.name if len(r.name) <= 45 else r.name[:42] + "..." for r in rows][::-1]
    ax.barh(names, [r.self_ms for r in rows][::-1], color="#2c7fb8")
    ax.set_xlabel("self time (ms)")
    ax.set_title(title)
    fig.tight_layout()
    plt.close(fig)  # the notebook shows it with display(fig)
    return fig


def conv_layout(device: str, dtype: str = "float32", env: dict | None = None, timeout: float = 300) -> dict:
    """Lesson 02: one channels_last convolution, profiled in a fresh Python with ``env`` added to this one's.

    Returns ``{"copies": n, "output_channels_last": bool, "kernels": [names]}``: the layout copies torch made around
    the convolution (``aten::copy_`` ops), whether its output kept the layout, and its GPU kernels. A fresh process,
    because torch 2.5-2.8 read ``PYTORCH_MIOPEN_SUGGEST_NHWC`` once, at the first convolution; 2.9 and newer on every
    call (ATen/native/ConvUtils.h). Where it is off, ROCm builds hand MIOpen NCHW tensors: the input and weight are
    copied into NCHW first and the output comes back NCHW.
    """
    from helpers.bench import run_json

    return run_json(["-m", "helpers.profile", device, dtype], what="the profiling process", env=env, timeout=timeout)


def _profile_one_conv(device: str, dtype: str) -> dict:
    import torch
    from torch.profiler import ProfilerActivity, profile

    dev, dt = torch.device(device), getattr(torch, dtype)
    x = torch.randn(4, 64, 28, 28, device=dev, dtype=dt).to(memory_format=torch.channels_last)
    w = torch.randn(64, 64, 3, 3, device=dev, dtype=dt).to(memory_format=torch.channels_last)
    torch.nn.functional.conv2d(x, w)  # the first call: MIOpen's find step, kernel loading
    gpu = dev.type == "cuda"
    with profile(activities=[ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if gpu else [])) as prof:
        y = torch.nn.functional.conv2d(x, w)
        if gpu:
            torch.cuda.synchronize(dev)
    return {
        "copies": sum(e.count for e in prof.key_averages() if e.key == "aten::copy_"),
        "output_channels_last": y.is_contiguous(memory_format=torch.channels_last),
        "kernels": [row.name for row in top(prof, n=4, kernels=True)] if gpu else [],
    }


if __name__ == "__main__":  # the process conv_layout() starts: python -m helpers.profile DEVICE DTYPE
    print(json.dumps(_profile_one_conv(sys.argv[1], sys.argv[2])))
