"""Scan a PyTorch project for what breaks or misleads on ROCm, the way a linter does.

    python -m helpers.portcheck PATH... [--format text|json|sarif] [--select PC101,PC2] [--ignore PC111]
                                [--exclude GLOB] [--changed REV] [--stdin NAME]

Python files are parsed with ``ast`` (never imported or run); CUDA/C++ sources and build files are
matched line by line. Output: ``path:line:col: RULE severity message`` (sorted by file and line), then a
summary by rule. Exit code 0 when no finding has severity ``error``, 1 when one does, 2 on usage errors.
A line ending in ``# portcheck: ignore`` (``// portcheck: ignore`` in C++) is skipped; so are only the
listed rules with ``# portcheck: ignore=PC101,PC104``. Imports no torch.

JSON (``--json``, schema 1)::

    {"schema": 1, "files_scanned": int, "lines_scanned": int,
     "findings": [{"path", "line", "col", "rule", "severity", "message", "fix"}],
     "errors": [{"path", "error"}], "summary": {"PC101": int, ...}}
"""

from __future__ import annotations

import argparse
import ast
import fnmatch
import functools
import json
import os
import re
import subprocess
import sys
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass, replace


@dataclass(frozen=True)
class Rule:
    id: str
    severity: str  # "error": breaks on ROCm or CPU; "warning": deprecated, misleading or slow; "info"
    message: str
    fix: str


RULES = {
    r.id: r
    for r in (
        Rule("PC101", "error", "hard-coded CUDA device without a fallback: fails on CPU-only machines",
             "device = torch.accelerator.current_accelerator(check_available=True) or torch.device('cpu') "
             "(torch >= 2.7; older: torch.device('cuda' if torch.cuda.is_available() else 'cpu')), then .to(device)"),
        Rule("PC102", "warning", "torch.cuda.amp is deprecated and ties the code to 'cuda'",
             "torch.autocast(device.type, dtype=...) and torch.amp.GradScaler(device.type)"),
        Rule("PC103", "warning", "GradScaler used alongside bfloat16 autocast: bf16 needs no scaler",
             "torch.amp.GradScaler(device.type, enabled=(dtype == torch.float16))"),
        Rule("PC104", "warning", "torch.load without map_location: GPU checkpoints fail to load on other machines",
             "torch.load(path, map_location=device)"),
        Rule("PC105", "warning", "torch.cuda.is_bf16_supported() is True unconditionally on ROCm: not a hardware check",
             "run a tiny bf16 op on the device and catch the error (helpers.precision.probe_dtypes)"),
        Rule("PC106", "warning", "torch.version.cuda used as the GPU test: it is None on ROCm builds",
             "torch.cuda.is_available() (any GPU) or torch.version.hip (AMD)"),
        Rule("PC107", "warning", "get_device_capability() compared as a tensor-core test: AMD reports gfx numbers",
             "probe the dtype you need, or check torch.version.hip / gcnArchName"),
        Rule("PC108", "warning", "cudnn.benchmark = True: MIOpen searches exhaustively per input shape on ROCm",
             "leave it False (the default), or set MIOPEN_FIND_MODE=FAST and measure"),
        Rule("PC109", "error", "there is no 'rccl' backend, and HCCL is Huawei Ascend's library (and Intel Gaudi's)",
             "init_process_group(backend='nccl') (RCCL on ROCm); configure RCCL with NCCL_* variables"),
        Rule("PC110", "warning", "float8_e4m3fn/e5m2 are OCP fp8: MI300 (gfx942) implements the fnuz variants",
             "pick torch.float8_e4m3fnuz on gfx942 (check torch.version.hip and the arch)"),
        Rule("PC111", "info", "CUDA_VISIBLE_DEVICES only: HIP honours it, but HIP_VISIBLE_DEVICES is the ROCm name",
             "document HIP_VISIBLE_DEVICES (or ROCR_VISIBLE_DEVICES) for AMD users"),
        Rule("PC112", "warning", "nvidia-smi / pynvml exist only on NVIDIA machines",
             "torch.cuda.mem_get_info() / torch.cuda APIs, or amd-smi (rocm-smi) on AMD"),
        Rule("PC113", "warning", "CUDA-only package", "see the message for its ROCm option"),
        Rule("PC114", "warning", "CUDA-only tuning variable: ROCm ignores it",
             "set the ROCm counterpart in the message too (lesson 07)"),
        Rule("PC301", "error", "flash-attn is a CUDA extension: it imports only where a build for this GPU exists",
             "F.scaled_dot_product_attention on (B, H, S, D): transpose flash-attn's (B, S, H, D) in and out; fewer "
             "key/value heads than query heads (GQA): enable_gqa=True; causal with fewer queries than keys (decoding, "
             "chunked prefill): flash-attn aligns the mask bottom-right and is_causal top-left, so pass "
             "attn_mask=causal_lower_right(q_len, k_len) from torch.nn.attention.bias (lesson 08)"),
        Rule("PC302", "error", "xformers ops need an xformers build for this GPU",
             "F.scaled_dot_product_attention(attn_mask=bias) on (B, H, S, D), transposed from xformers' (B, M, H, K) "
             "(lesson 08)"),
        Rule("PC303", "error", "NVIDIA apex: CUDA extensions (and apex.amp, removed from apex in 2025)",
             "torch.amp, torch.optim.AdamW(fused=True), nn.LayerNorm / nn.RMSNorm, torch DDP (lesson 08)"),
        Rule("PC304", "warning", "bitsandbytes runs on ROCm from 0.49 on (PyPI wheels for CDNA gfx90a/gfx942/gfx950 "
             "and RDNA 3/4): older releases and other GPUs need their own build",
             "bitsandbytes>=0.49 and `python -m bitsandbytes` on the GPU, or torch.optim.AdamW (4x the optimizer-state "
             "memory) (lesson 08)"),
        Rule("PC305", "error", "NVIDIA-only code in a Triton kernel",
             "plain tl operations; triton.language.extra.libdevice picks the CUDA or HIP library (lesson 08)"),
        Rule("PC306", "warning", "warp size 32 hard-coded next to Triton code: CDNA wavefronts have 64 lanes",
             "triton.runtime.driver.active.get_current_target().warp_size"),
        Rule("PC307", "error", "there is no pytorch-rocm or torch-rocm package: pip finds no such distribution",
             "pip install torch --index-url https://download.pytorch.org/whl/rocmX.Y (or AMD's index, or the "
             "rocm/pytorch image: lesson 00, section 3)"),
        Rule("PC201", "error", "warp size of 32 hard-coded: AMD CDNA wavefronts have 64 lanes",
             "use warpSize (device code) or at::cuda::warp_size() (host code)"),
        Rule("PC202", "error", "32-bit lane mask: AMD wavefronts have 64 lanes",
             "in a torch extension, ATen's WARP_SHFL_* helpers (ATen/cuda/DeviceUtils.cuh); elsewhere 64-bit masks "
             "(unsigned long long) on ROCm"),
        Rule("PC203", "error", "inline PTX assembly does not compile for AMD GPUs",
             "use a CUDA/HIP intrinsic or plain C++"),
        Rule("PC204", "warning", "CUDA-only library", "see the message for its ROCm equivalent"),
        Rule("PC205", "warning", "TORCH_CUDA_ARCH_LIST without PYTORCH_ROCM_ARCH: ROCm builds ignore it",
             'also set PYTORCH_ROCM_ARCH="gfx942;gfx90a" (your gfx targets)'),
        Rule("PC206", "warning", "this setup.py builds GPU code with CUDA_HOME / nvcc only: on a ROCm torch "
             "CUDA_HOME is None and there is no nvcc, so the extension is skipped or the build fails",
             "branch on IS_HIP_EXTENSION (torch.utils.cpp_extension): CUDAExtension then builds with hipcc "
             "(ROCM_HOME), and PYTORCH_ROCM_ARCH picks the GPU targets"),
        Rule("PC900", "error", "file could not be parsed", "fix the syntax error or the encoding"),
    )
}  # fmt: skip

# CUDA-only dependencies with a portable PyTorch replacement: package -> (rule, {symbol: replacement}).
DEPENDENCIES = {
    "flash_attn": ("PC301", {
        "flash_attn_func": "F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), "
        "dropout_p=p if training else 0.0, is_causal=causal, scale=softmax_scale).transpose(1, 2)",
        "flash_attn_qkvpacked_func": "q, k, v = qkv.unbind(dim=2), then as flash_attn_func",
        "flash_attn_varlen_func": "pad to (B, H, S, D) with a key-padding attn_mask, then SDPA",
    }),
    "xformers": ("PC302", {
        "memory_efficient_attention": "F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), "
        "v.transpose(1, 2), attn_mask=bias).transpose(1, 2)",
        "LowerTriangularMask": "is_causal=True",
    }),
    "apex": ("PC303", {
        "initialize": "torch.autocast(device.type, dtype=...) around the forward pass",
        "scale_loss": "scaler = torch.amp.GradScaler(device.type); scaler.scale(loss).backward()",
        "FusedAdam": "torch.optim.AdamW(params, fused=True) (torch.optim.Adam for adam_w_mode=False)",
        "FusedLayerNorm": "torch.nn.LayerNorm",
        "FusedRMSNorm": "torch.nn.RMSNorm (torch >= 2.4)",
        "DistributedDataParallel": "torch.nn.parallel.DistributedDataParallel",
    }),
    "bitsandbytes": ("PC304", {
        "Adam8bit": "torch.optim.AdamW, or bitsandbytes>=0.49 (ROCm wheels) to keep 8-bit states",
        "AdamW8bit": "torch.optim.AdamW, or bitsandbytes>=0.49 (ROCm wheels) to keep 8-bit states",
        "PagedAdamW8bit": "torch.optim.AdamW, or bitsandbytes>=0.49 (ROCm wheels) to keep 8-bit states",
        "Linear8bitLt": "bitsandbytes>=0.49 (ROCm wheels), or nn.Linear in bf16",
        "Linear4bit": "bitsandbytes>=0.49 (ROCm wheels), or nn.Linear in bf16",
    }),
}  # fmt: skip
# Tuning variables that NVIDIA's stack reads and ROCm's ignores: name -> (ROCm counterpart, names that show it is set).
CUDA_ONLY_VARS = {
    "NVIDIA_TF32_OVERRIDE": ("TF32 on MI300: torch.backends.cuda.matmul.allow_tf32", ("allow_tf32", "fp32_precision")),
    "TORCH_CUDNN_V8_API_ENABLED": ("MIOpen: MIOPEN_FIND_MODE, MIOPEN_FIND_ENFORCE", ("MIOPEN_",)),
    "TORCH_CUDNN_V8_API_LRU_CACHE_LIMIT": ("MIOpen: MIOPEN_FIND_MODE, MIOPEN_FIND_ENFORCE", ("MIOPEN_",)),
    "TORCH_CUDNN_SDPA_ENABLED": ("AOTriton or CK: torch.backends.cuda.preferred_rocm_fa_library()", ("rocm_fa",)),
    "CUDA_DEVICE_MAX_CONNECTIONS": (
        "the HIP runtime does not read it; the nearest knob is GPU_MAX_HW_QUEUES",
        ("GPU_MAX_HW_QUEUES",),
    ),
    "CUDA_LAUNCH_BLOCKING": (
        "the HIP runtime does not read it: AMD_SERIALIZE_KERNEL=3 (or HIP_LAUNCH_BLOCKING=1)",
        ("AMD_SERIALIZE_KERNEL", "HIP_LAUNCH_BLOCKING"),
    ),
}
CUDA_ONLY_VAR = re.compile(r"\b(" + "|".join(CUDA_ONLY_VARS) + r")\b")
# An install line for a PyTorch package that does not exist (the seed of many porting guides' errors): PC307
NO_SUCH_PACKAGE = re.compile(
    r"\b(?:pip3?|conda|mamba)\b[^#\n]*\binstall\b[^#\n]*?(?<![\w.-])(pytorch-rocm|torch-rocm)(?![\w.-])"
)
CUDA_ONLY_PACKAGES = {
    "cupy": "CuPy's ROCm support is experimental: AMD's amd-cupy wheels (pypi.amd.com) or a source build with "
    "CUPY_INSTALL_USE_HIP=1 (PyPI's cupy-rocm-* wheels stop at 13.3); or torch tensors",
    "pycuda": "no ROCm version: use torch.utils.cpp_extension or HIP Python",
    "tensorrt": "MIGraphX (or torch.compile / ONNX Runtime with the MIGraphX provider)",
    "pynvml": "amdsmi (the amd-smi Python API), or torch.cuda.mem_get_info()",
}
CUDA_LIBS = (
    (re.compile(r"cublasLt|cublas_v2\.h.*Lt"), "cuBLASLt -> hipBLASLt"),
    (re.compile(r"\bcutlass\b", re.I), "CUTLASS -> Composable Kernel (CK)"),
    (re.compile(r"cudnn_frontend"), "cuDNN frontend -> MIOpen"),
    (re.compile(r"#\s*include\s*<mma\.h>"), "WMMA (<mma.h>, nvcuda::wmma) has no HIP header -> rocWMMA (rocwmma::)"),
)
VERSION_PARSERS = {"parse", "Version", "LooseVersion", "StrictVersion", "parse_version", "int", "float"}
CPP_SUFFIXES = (".cu", ".cuh", ".cpp", ".cc", ".cxx", ".h", ".hpp")
BUILD_NAMES = ("setup.py", "CMakeLists.txt", "Makefile", "Dockerfile", "build.sh")
BUILD_SUFFIXES = (".cmake", ".sh", ".mk")
SKIP_DIRS = {
    ".git",
    ".hg",
    ".svn",
    ".venv",
    "venv",
    "env",
    "node_modules",
    "build",
    "dist",
    "__pycache__",
    ".tox",
    ".nox",
    ".mypy_cache",
    ".ruff_cache",
    ".pytest_cache",
    "site-packages",
    ".ipynb_checkpoints",
    "mutants",
}  # fmt: skip  (mutants: mutmut's copy of a project)
GUARD = re.compile(
    r"is_available|cuda_available|device_count|current_accelerator|\.type\s*==\s*['\"]cuda|\bis_cuda\b|==\s*['\"]nccl"
)
# An if-test that a user asked for GPUs: more than one (`num_gpus > 1`: the multi-GPU branch; `torch.device("cuda",
# rank) if num_gpus > 1 else None`), any (`if cfg.NUM_GPUS:`, `num_gpus > 0`, also `and` another test: a config's GPU
# count, 0 for a CPU run) or a switch to use one (`if self.use_gpu:`). Its branch runs only with GPUs; its else is the
# path a CPU-only run takes, so that stays unguarded.
GPU_COUNT = re.compile(r"(num|n)_?gpus?", re.I)
GPU_INDEX = re.compile(r"(local_)?gpus?(_ids?|_index)?", re.I)  # args.gpu: the GPU a user picked, None (or -1) for none
GPU_SWITCH = re.compile(r"(use|on|to|copy_to|move_to|run_on|enable)_(gpu|cuda)s?", re.I)  # cfg.USE_CUDA, copy_to_gpu
# A function named for the GPU (move_to_cuda, collect_results_gpu, cuda_forward): putting things on the GPU is what
# it is for, and its callers choose whether to call it; not one that picks, tests or falls back (cpu_or_gpu, has_gpu,
# get_gpu_count, maybe_cuda, to_cuda_if_available)
GPU_NAMED = re.compile(
    r"^(?!.*(cpu|(^|_)(or|has|is|get|maybe|check|num|count)(_|$)|available|count))\w*?(^|_)(cuda|gpus?)(_|$)", re.I
)
# Modules without parameters or buffers, made with no argument that could give them one: nn.CrossEntropyLoss() and
# nn.Softmax(dim=1) hold no tensor, so .cuda() moves nothing and runs on any machine (a class weight is a buffer)
PARAMETER_FREE = re.compile(
    r"(L1|MSE|CrossEntropy|NLL|BCE|KLDiv|Huber|SmoothL1|SoftMargin|CosineEmbedding|MarginRanking|HingeEmbedding"
    r"|TripletMargin|PoissonNLL|GaussianNLL|CTC)Loss|(Log)?Softmax|Softmin|ReLU6?|LeakyReLU|GELU|SiLU|Mish|Sigmoid|Tanh"
    r"|Hardtanh|Hardswish|Hardsigmoid|S?ELU|CELU|Dropout([123]d)?|Identity|Flatten|(Adaptive)?(Max|Avg)Pool[123]d"
)
SAFE_OPTIONS = {"reduction", "ignore_index", "label_smoothing", "dim", "inplace", "p", "negative_slope", "beta",
                "delta", "margin", "eps", "log_target", "full", "approximate", "kernel_size", "stride", "padding",
                "output_size", "blank", "zero_infinity", "alpha", "start_dim", "end_dim", "size_average", "reduce",
                "swap"}  # fmt: skip


def _asked_gpu(test, switches: set[str]) -> bool:
    """A test that a user asked for GPUs: a count (`num_gpus > 1`: the multi-GPU branch; `if cfg.NUM_GPUS:`, `> 0`,
    `>= 1`, `!= 0`: any, a config's count that is 0 for a CPU run) or a switch (`if self.use_gpu:`, `cfg.USE_CUDA`,
    `copy_to_gpu`), in an `and` too, or in every part of an `or`; not one the code sets itself (``switches``: use_gpu =
    True). Its branch runs only with GPUs; its else is the path a CPU-only run takes, so that stays unguarded."""
    if isinstance(test, ast.BoolOp):
        parts = [_asked_gpu(v, switches) for v in test.values]
        return any(parts) if isinstance(test.op, ast.And) else all(parts)
    name = test.left if isinstance(test, ast.Compare) else test
    if not isinstance(name, ast.Name | ast.Attribute) or _dotted(name) in switches:
        return False
    last = _dotted(name).split(".")[-1]
    if isinstance(name, ast.Attribute) and f"*.{last}" in switches:
        return False  # a class's constant, read through an instance
    if not isinstance(test, ast.Compare):  # if cfg.NUM_GPUS: / if self.use_gpu:
        return bool(GPU_COUNT.fullmatch(last) or GPU_SWITCH.fullmatch(last))
    op, right = test.ops[0], test.comparators[0]
    if len(test.ops) == 1 and isinstance(op, ast.Eq) and re.fullmatch(r"\w*(device|accelerator)\w*", last, re.I):
        chosen = right.args[0] if isinstance(right, ast.Call) and _dotted(right.func).endswith("device") and (
            right.args) else right  # fmt: skip  # device == torch.device("cuda") / args.device == "cuda"
        gpu = "accelerator" in last.lower() and isinstance(chosen, ast.Constant) and chosen.value == "gpu"
        return gpu or bool(_is_cuda_str(chosen))  # (the user's choice; one the code sets is in ``switches``)
    if len(test.ops) == 1 and GPU_INDEX.fullmatch(last):  # args.gpu is not None, gpu_id >= 0, gpu_id != -1
        value = -1 if ast.unparse(right) == "-1" else right.value if isinstance(right, ast.Constant) else ""
        return (isinstance(op, ast.IsNot) and value is None) or (isinstance(op, ast.GtE) and value == 0) or (
            isinstance(op, ast.NotEq) and value == -1)  # fmt: skip
    if len(test.ops) > 1 or not isinstance(right, ast.Constant) or type(right.value) is not int:
        return False
    above = (isinstance(op, ast.Gt) and right.value >= 0) or (isinstance(op, ast.GtE) and right.value >= 1)
    return bool(GPU_COUNT.fullmatch(last)) and (above or (isinstance(op, ast.NotEq) and right.value == 0))


IGNORE = re.compile(r"(?:#|//)\s*portcheck:\s*ignore(?:=([\w,\s]+))?")

WARP32 = re.compile(
    r"#\s*define\s+\w*WARP\w*\s+32[uU]?\b"
    r"|\b\w*(?:[wW]arp|WARP)\w*\s*=\s*32[uU]?\b"  # int warp = 32; constexpr int WARP_SIZE = 32; enum {WARP = 32}
    r"|threadIdx\.[xyz]\s*(?:%\s*32|&\s*31|>>\s*5|/\s*32)[uU]?\b|\blane\w*\s*&\s*31\b|<<<[^>]*\b32\s*>>>"
    r"|for\s*\(\s*int\s+\w+\s*=\s*16\s*;\s*\w+\s*>\s*0"  # a shuffle reduction starting at 16: 32 lanes
)
_MASK = r"(?:0x[fF]{8}(?:[uU]?[lL]{0,2})?\b|~0[uU]?\b|u?int32_t\s*\(\s*-1\s*\))"  # all 32 lanes, in the usual spellings
MASK32 = re.compile(
    rf"#\s*define\s+\w*MASK\w*\s+{_MASK}"
    rf"|__(?:shfl\w*_sync|ballot_sync|any_sync|all_sync|match\w*_sync)\s*\(\s*{_MASK}|__activemask\s*\("
)
SOURCE = re.compile(r"[\w./-]+\.(?:cu|cuh|cpp|cc|cxx|c|h|hpp)")  # a C++/CUDA file named in setup.py
PTX = re.compile(r"\b(?:__asm__|asm)\s*(?:(?:__volatile__|volatile)\s*)?\(")


@dataclass(frozen=True)
class Finding:
    path: str
    line: int
    col: int
    rule: str
    severity: str
    message: str
    fix: str


def _dotted(node) -> str:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
    elif isinstance(node, ast.Call):
        parts.append(_dotted(node.func) + "()")
    return ".".join(reversed(parts))


def _is_cuda_str(node) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str) and re.fullmatch(r"cuda(:\d+)?", node.value)


def _modules(node) -> list[str]:
    """The modules an import statement names ("flash_attn", "xformers.ops", ...)."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    return [node.module] if isinstance(node, ast.ImportFrom) and node.module else []


def _catches_import_error(handler: ast.ExceptHandler) -> bool:
    names = {_dotted(t) for t in (handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type])}
    return handler.type is None or bool(names & {"ImportError", "ModuleNotFoundError", "Exception", "BaseException"})


# torch.distributed's tensor collectives; the short names also name torch.gather and tensor methods (dists.gather), so
# those count only when called through a distributed module (dist.broadcast, torch.distributed.reduce,
# distributed_utils.gather).
_COLLECTIVES = {"all_reduce", "all_gather", "all_gather_into_tensor", "reduce_scatter", "reduce_scatter_tensor",
                "all_to_all", "all_to_all_single"}  # fmt: skip
_DIST_ONLY = {"broadcast", "reduce", "gather", "scatter", "send", "recv", "isend", "irecv"}


_COLLECTIVE_WORD = re.compile(r"\b(?:{})\s*\(".format("|".join(sorted(_COLLECTIVES | _DIST_ONLY))))


def _collective(name: str) -> bool:
    *module, last = name.split(".")
    return last in _COLLECTIVES or (last in _DIST_ONLY and any(m == "dist" or "distributed" in m for m in module))


KERNEL_LANGUAGES = {"triton", "tilelang"}  # Python packages that write GPU kernels (for NVIDIA and AMD GPUs)
# Python packages that run on a GPU only: TensorRT, PyCUDA and MS-AMP on NVIDIA's; Transformer Engine on NVIDIA's and
# AMD's (ROCm/TransformerEngine). A module that cannot import without one runs nowhere else.
GPU_ONLY_PACKAGES = {"tensorrt", "pycuda", "msamp", "transformer_engine"}
# A branch for another vendor's accelerator (Intel Gaudi's "hpu", Huawei Ascend's "npu", Intel's "xpu", ...)
OPTION_NAMES = {"args", "opt", "opts", "options", "config", "cfg", "flags", "FLAGS", "hparams", "params"}
OTHER_VENDOR = re.compile(r"\b(hpu|npu|xpu|mlu|habana\w*|gaudi|ascend)\b", re.I)
# A test of the machine (not of a tensor): does it have a GPU, how many
MACHINE = re.compile(r"is_available|cuda_available|device_count")
# A test of the GPU itself (not of torch.distributed, MPS or an Accelerator's process): for flags read from other
# modules, functions that return a test, and `if not ...: return`
GPU_CHECK = (
    r"cuda\.is_available|cuda\.device_count|accelerator\.(is_available|device_count)|cuda_available|\bdevice_count\("
)


def _gpu_skip(node, machine: re.Pattern) -> bool:
    """A marker that skips a test where no GPU is: unittest.skipIf(not torch.cuda.is_available(), ...),
    unittest.skipUnless(torch.cuda.is_available(), ...), pytest.mark.skipif(...), a list of them, or a marker named
    for a GPU (pytest.mark.requires_cuda, transformers' require_torch_gpu). ``machine`` matches a machine check."""
    if isinstance(node, ast.List | ast.Tuple):
        return any(_gpu_skip(e, machine) for e in node.elts)
    name = _dotted(node.func if isinstance(node, ast.Call) else node).split(".")[-1].lower()
    if re.fullmatch(r"requires?_(torch_)?(cuda|gpu|multi_gpu|accelerator)\w*", name):
        return True
    conds = [*(node.args[:1] if isinstance(node, ast.Call) else []),
             *(k.value for k in getattr(node, "keywords", []) if k.arg == "condition")]  # fmt: skip
    if name not in ("skipif", "skipunless") or not conds or not machine.search(cond := ast.unparse(conds[0])):
        return False
    negated = cond.startswith("not ") or bool(re.search(r"device_count\(\)\s*(==\s*0|<)", cond))
    return negated if name == "skipif" else not negated


def _no_gpu(test, gpu: re.Pattern) -> bool:
    """A test that is true where there is no GPU: not torch.cuda.is_available(), not use_cuda, device_count() < 2, or
    one of them in an `or` (in an `and`, a machine without a GPU can take the other way). ``gpu``: a GPU test."""
    if isinstance(test, ast.BoolOp):
        return isinstance(test.op, ast.Or) and any(_no_gpu(v, gpu) for v in test.values)
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return bool(gpu.search(ast.unparse(test.operand)))
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.comparators[0], ast.Constant):
        op, value = test.ops[0], test.comparators[0].value
        below = isinstance(op, ast.Lt) or (isinstance(op, ast.Eq | ast.LtE) and value == 0)
        return below and bool(gpu.search(ast.unparse(test.left)))
    return False


def _needs_gpu(test, gpu: re.Pattern) -> bool:
    """A test that is false wherever there is no GPU, so an assert of it stops a CPU-only run: is_available(),
    device_count() > rank, rank < device_count(); in an `and` one such part is enough, in an `or` every part must be
    one (`assert args.cpu or torch.cuda.is_available()` lets a CPU run through)."""
    if isinstance(test, ast.BoolOp):
        parts = [_needs_gpu(v, gpu) for v in test.values]
        return any(parts) if isinstance(test.op, ast.And) else all(parts)
    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        op, left, right = test.ops[0], ast.unparse(test.left), ast.unparse(test.comparators[0])
        return bool((isinstance(op, ast.Gt | ast.GtE) and gpu.search(left) and not gpu.search(right))
                    or (isinstance(op, ast.Lt | ast.LtE) and gpu.search(right) and not gpu.search(left)))  # fmt: skip
    return not isinstance(test, ast.UnaryOp) and bool(gpu.search(ast.unparse(test)))


def _is_main(node) -> bool:
    """if __name__ == "__main__": (the block a script runs)"""
    test = node.test if isinstance(node, ast.If) else None
    return (
        isinstance(test, ast.Compare)
        and isinstance(test.ops[0], ast.Eq)
        and {ast.unparse(test.left), ast.unparse(test.comparators[0])} == {"__name__", "'__main__'"}
    )


def _leaves(stmt) -> bool:
    """return, raise, sys.exit(...), exit(...), quit(...): the rest of the block does not run."""
    if isinstance(stmt, ast.Return | ast.Raise):
        return True
    call = stmt.value if isinstance(stmt, ast.Expr) else None
    return isinstance(call, ast.Call) and _dotted(call.func) in ("sys.exit", "exit", "quit", "os._exit", "pytest.skip")


def _starts_nccl(call: ast.Call) -> bool:
    """dist.init_process_group("nccl") / (backend="nccl"): a process group whose collectives need GPU tensors."""
    backend = [k.value for k in call.keywords if k.arg == "backend"] + call.args[:1]
    return (
        _dotted(call.func).split(".")[-1] == "init_process_group"
        and bool(backend)
        and isinstance(backend[0], ast.Constant)
        and backend[0].value == "nccl"
    )


def _option(add_argument: ast.Call) -> tuple[str, str]:
    """parser.add_argument("-g", "--gpu-id", ...) -> ("--gpu-id", "gpu_id"): its longest flag and the attribute that
    holds its value (``dest=`` when given)."""
    flags = [a.value for a in add_argument.args if isinstance(a, ast.Constant) and str(a.value).startswith("-")]
    flag = max(flags, key=len, default="")
    dests = [k.value.value for k in add_argument.keywords if k.arg == "dest" and isinstance(k.value, ast.Constant)]
    return flag, dests[0] if dests else flag.lstrip("-").replace("-", "_")


def _is_cpu(node) -> bool:
    """Is the expression a CPU device: "cpu", torch.device("cpu")?"""
    if isinstance(node, ast.Call) and _dotted(node.func).split(".")[-1] == "device" and node.args:
        node = node.args[0]
    return isinstance(node, ast.Constant) and node.value == "cpu"


def _tensor_names(node) -> list[str]:
    """The plain names an expression's value is made of: x and pad in torch.cat((x, pad)), not the objects whose
    attributes or methods it uses (model in model.weight, torch in torch.cat)."""
    bases = {id(x.value) for x in ast.walk(node) if isinstance(x, ast.Attribute)}
    return [x.id for x in ast.walk(node) if isinstance(x, ast.Name) and id(x) not in bases]


def _gpu_actor(node) -> bool:
    """@ray.remote(num_gpus=1): Ray starts the actor or task only on a worker that has a GPU for it."""
    return isinstance(node, ast.Call) and _dotted(node.func).split(".")[-1] == "remote" and any(
        k.arg == "num_gpus" and isinstance(k.value, ast.Constant) and type(k.value.value) in (int, float)
        and k.value.value > 0 for k in node.keywords
    )  # fmt: skip


def _is_gpu_test(node) -> bool:
    """An expression true only where there is a GPU: torch.cuda.is_available() (and ...), device_count() > 0; not one
    that picks a device string, tests MPS or a process, or has another way to be true (`or os.environ[...]`)."""
    if isinstance(node, ast.BoolOp):
        parts = [_is_gpu_test(v) for v in node.values]
        return any(parts) if isinstance(node.op, ast.And) else all(parts)
    if isinstance(node, ast.UnaryOp):  # not ...: true where there is none
        return False
    strings = {x.value for x in ast.walk(node) if isinstance(x, ast.Constant) and isinstance(x.value, str)}
    return bool(re.search(GPU_CHECK, ast.unparse(node))) and not strings & {"cuda", "cpu"}


def _own_flags(tree, names=None) -> set[str]:
    """The names a module defines at its top as a test for the GPU: FLAG = torch.cuda.is_available() and ..., or a
    function that returns one (def has_gpu(): return torch.cuda.device_count() > 0). ``names``: only functions of
    these names are read (the ones a test uses)."""
    out = set()
    for n in getattr(tree, "body", []):
        if isinstance(n, ast.Assign) and _is_gpu_test(n.value):
            out |= {t.id for t in n.targets if isinstance(t, ast.Name)}
        elif isinstance(n, ast.FunctionDef) and (names is None or n.name in names):
            returns = [r.value for r in ast.walk(n) if isinstance(r, ast.Return) and r.value is not None]
            out |= {n.name} if returns and all(_is_gpu_test(r) for r in returns) else set()
    return out


@functools.cache
def _resolve(folder: str, module: str, level: int) -> str | None:
    """The file of `from <module> import ...` written in a file of ``folder``: relative to it (level dots), or, for
    an absolute import, where Python finds it when the project runs: in a script's folder, then the one above (the
    project's root); in a package, in the folder above its top package (a project's root, its src/) first, then in the
    package's own folders (a module of it run as a script)."""
    bases = [folder]
    for _ in range(max(level - 1, 0)):
        bases = [os.path.dirname(bases[0])]
    while not level and os.path.isfile(os.path.join(bases[-1], "__init__.py")) and len(bases) < 12:
        bases.append(os.path.dirname(bases[-1]))
    if not level and len(bases) == 1:  # a script's folder (scripts/, examples/): the project's root above it too
        bases.append(os.path.dirname(folder))
    elif not level:  # in a package, Python finds `import utils` at the root (the package's own folder: run as a script)
        bases = [bases[-1], *bases[:-1]]
    for base in bases:
        stem = os.path.join(base, *module.split("."))
        for file in (stem + ".py", os.path.join(stem, "__init__.py")):
            if os.path.isfile(file):
                return file
    return None


def _nccl_functions(tree, known: frozenset[str] = frozenset()) -> frozenset[str]:
    """The functions a module defines at its top that start an NCCL process group in their own body, outside any
    branch (def init_distributed_mode(args): ...; dist.init_process_group(backend="nccl", ...)), or call one that does
    (def main(args): init_distributed_mode(args); ...; ``known``: such functions imported): whoever calls one runs with
    NCCL from then on."""
    functions = {name: node for name, node in _bindings(tree).items() if isinstance(node, ast.FunctionDef)}
    found, callers = set(known), defaultdict(list)  # callee -> the functions that call it first thing
    todo = []
    for name, fn in functions.items():
        if fn.decorator_list:  # (@contextmanager: a call runs none of it)
            continue
        for s in fn.body:  # the calls made before a `return` can leave (sys.exit() ends the run: nothing follows)
            call = s.value if isinstance(s, ast.Expr) and isinstance(s.value, ast.Call) else None
            if call and _starts_nccl(call):
                todo.append(name)
            elif call:
                callers[_dotted(call.func)].append(name)
            if any(isinstance(x, ast.Return) for x in ast.walk(s)):
                break
    todo += [name for callee in found for name in callers[callee]]
    while todo:  # main() calls setup(), which calls init_process_group: each function once, so linear
        name = todo.pop()
        if name not in found:
            found.add(name)
            todo += callers[name]
    return frozenset(found & set(functions))


def _bindings(tree) -> dict:
    """The statement that binds each name at a module's top last (a def, a class, an import, an assignment): the one
    Python uses when the module has run."""
    out = {}
    for n in getattr(tree, "body", []):
        if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            out[n.name] = n
        elif isinstance(n, ast.Import | ast.ImportFrom):
            out.update({a.asname or a.name.split(".")[0]: n for a in n.names})
        elif isinstance(n, ast.Assign | ast.AnnAssign):
            targets = n.targets if isinstance(n, ast.Assign) else [n.target]
            out.update({t.id: n for t in targets if isinstance(t, ast.Name)})
    return out


@functools.cache  # (small results: a few names per module)
def _module(file: str) -> tuple[frozenset[str], dict, frozenset[str]]:
    """A module's flags, what it imports at its top (local name -> (module, level, name)), its NCCL functions."""
    try:
        with open(file, "rb") as f:
            tree = ast.parse(f.read())
        flags, nccl = frozenset(_own_flags(tree)), _nccl_functions(tree)
    except (OSError, SyntaxError, ValueError, RecursionError, MemoryError):  # (deeply nested generated code)
        return frozenset(), {}, frozenset()
    imports = {a.asname or a.name: (n.module, n.level, a.name) for n in tree.body
               if isinstance(n, ast.ImportFrom) and n.module for a in n.names}  # fmt: skip
    return flags, imports, nccl


def _is_flag(folder: str, module: str, level: int, name: str, hops: int = 1) -> bool:
    """Is ``name``, imported from ``module`` in a file of ``folder``, a flag there (or re-exported from one)?"""
    file = _resolve(folder, module, level)
    flags, imports, _ = _module(file) if file else (frozenset(), {}, frozenset())
    if name in flags:
        return True
    return hops > 0 and name in imports and _is_flag(os.path.dirname(file), *imports[name], hops - 1)


def _where(path: str, root: str | None = None) -> str:
    """A file's place in its project, for _is_test_path: its path from the current folder when it is inside it (a
    project scanned from its root, as CI, pre-commit and --changed do), else its path inside the scanned folder
    ``root``, else its name. The folders above the project (a CI workspace named test) never count."""
    full, here = os.path.abspath(path), os.getcwd()
    if full.startswith(os.path.join(here, "")):
        return os.path.relpath(full, here)
    return os.path.relpath(path, root) if root is not None else os.path.basename(path)


def _is_test_path(path: str) -> bool:
    """tests/..., test/..., test_*.py, *_test.py, conftest.py: a project's tests, not the code its users run."""
    *folders, name = os.path.normpath(path).replace("\\", "/").split("/")
    return (
        bool({"tests", "test"} & set(folders))
        or name.startswith("test_")
        or name.endswith("_test.py")
        or (name == "conftest.py")
    )


def _is_benchmark_path(path: str) -> bool:
    """benchmarks/..., bench/..., benchmark_*.py, bench_*.py: a project's timing suite, which measures GPUs."""
    *folders, name = os.path.normpath(path).replace("\\", "/").split("/")
    stem = name.rsplit(".", 1)[0]
    return bool({"benchmarks", "benchmark", "bench"} & set(folders)) or bool(
        re.fullmatch(r"(bench|benchmark)_\w+|\w+_(bench|benchmark)", stem)
    )


class _PyScan:
    def __init__(self, path: str, source: str, tree: ast.AST):
        self.path, self.source, self.tree = path, source, tree
        self.nodes = nodes = list(ast.walk(tree))  # walked once, read by every check below
        self.found: list[tuple] = []  # line, col, rule, extra message, severity (None: the rule's)
        # def f(device=torch.device("cuda")): a default that callers can (and usually do) override
        self.defaults = {
            id(sub)
            for fn in nodes
            if isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef)
            for d in fn.args.defaults + [k for k in fn.args.kw_defaults if k]
            for sub in ast.walk(d)
        }

        # and a parameter's default set in the body: `device if device is not None else torch.device("cuda")`, `if
        # device is None: device = "cuda"` (StyleGAN's MetricOptions): callers that pass one never reach it
        def is_none(test, params) -> tuple[str, bool] | None:  # `p is None`: (p, True); `p is not None`: (p, False)
            if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.left, ast.Name):
                none = ast.unparse(test.comparators[0]) == "None" and test.left.id in params
                return (test.left.id, isinstance(test.ops[0], ast.Is)) if none and isinstance(
                    test.ops[0], ast.Is | ast.IsNot) else None  # fmt: skip
            return None

        for fn in (n for n in nodes if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)):
            params = {a.arg for a in fn.args.args + fn.args.kwonlyargs}
            for n in (n for n in ast.walk(fn) if isinstance(n, ast.IfExp | ast.If)):
                if not (found := is_none(n.test, params)):
                    continue
                name, when_none = found
                if isinstance(n, ast.IfExp):
                    self.defaults |= {id(sub) for sub in ast.walk(n.body if when_none else n.orelse)}
                elif when_none and not n.orelse:
                    self.defaults |= {id(sub) for st in n.body if isinstance(st, ast.Assign)
                                      and ast.unparse(st.targets[0]) in (name, f"self.{name}")
                                      for sub in ast.walk(st.value)}  # fmt: skip

        # and the fields of an nn.Module written as a dataclass or attrs class: its constructor's parameters
        # (device: torch.device = attr.ib(default=torch.device("cuda")) in GLIDE's TextEmbedding(nn.Module)); only a
        # value that is a default (a constant, torch.device(...), attr.ib/field(default=...)), not code that runs at
        # import (torch.ones(1).cuda() in a class body fails there)
        def field_class(cls) -> bool:
            decorators = {_dotted(d.func if isinstance(d, ast.Call) else d).split(".")[-1] for d in cls.decorator_list}
            module = any(_dotted(b) in ("nn.Module", "torch.nn.Module", "Module") for b in cls.bases)
            return module and bool(decorators & {"dataclass", "s", "attrs", "define", "frozen", "mutable"})

        def a_default(value) -> bool:
            name = _dotted(value.func).split(".")[-1] if isinstance(value, ast.Call) else ""
            return isinstance(value, ast.Constant) or name in ("device", "ib", "attrib", "field")

        self.defaults |= {
            id(sub)
            for cls in nodes
            if isinstance(cls, ast.ClassDef) and field_class(cls)
            for field in cls.body
            if isinstance(field, ast.AnnAssign) and field.value is not None and a_default(field.value)
            for sub in ast.walk(field.value)
        }
        flags = {
            _dotted(t)
            for n in nodes
            if isinstance(n, ast.Assign) and GUARD.search(ast.unparse(n.value))
            for t in n.targets
            if isinstance(t, ast.Name | ast.Attribute)
        }  # use_cuda = args.cuda and torch.cuda.is_available(); self.cuda = torch.cuda.is_available()
        # and the functions and imported names that tests use, where they are GPU checks: def has_gpu(): ...,
        # from torchtune.utils._import_guard import _SUPPORTS_FLEX_ATTENTION (set from torch.cuda.is_available())
        tests = [n.test for n in nodes if isinstance(n, ast.If | ast.IfExp | ast.While | ast.Assert)]
        tests += [d for n in nodes if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
                  for d in n.decorator_list]  # fmt: skip
        tests += [n.value for n in nodes if isinstance(n, ast.Assign)
                  and (any(_dotted(t) == "pytestmark" for t in n.targets)
                       or isinstance(n.value, ast.Call) and "skip" in _dotted(n.value.func).lower())]  # fmt: skip
        used = {x.id for t in tests for x in ast.walk(t) if isinstance(x, ast.Name)}
        folder = os.path.dirname(os.path.abspath(path))
        flags |= _own_flags(tree, used) | {
            a.asname or a.name
            for n in nodes
            if isinstance(n, ast.ImportFrom) and n.module
            for a in n.names
            if (a.asname or a.name) in used and _is_flag(folder, n.module, n.level, a.name)
        }
        # (only flags set from a test of the GPU itself count in `if not X: return`)
        strict = {_dotted(t) for n in nodes if isinstance(n, ast.Assign) and _is_gpu_test(n.value) for t in n.targets}
        strict |= flags - {_dotted(t) for n in nodes if isinstance(n, ast.Assign) for t in n.targets}  # (imported)
        named = "".join(rf"|\b{re.escape(f)}\b" for f in sorted(flags) if f)
        guard = re.compile(GUARD.pattern + named)
        gpu = re.compile(GPU_CHECK + "".join(rf"|\b{re.escape(f)}\b" for f in sorted(strict) if f))
        tests = {id(n): ast.unparse(n.test) for n in nodes if isinstance(n, ast.If | ast.IfExp | ast.While)}
        # An `if` guards its branch that runs with a GPU: the body, or the else of a test for none (`if not
        # torch.cuda.is_available(): ... else: ...`); a loop or a conditional expression, all of it.
        self.guards, self.guard_ids = [], set()
        for n in (n for n in nodes if id(n) in tests and guard.search(tests[id(n)])):
            branch = (n.orelse if _no_gpu(n.test, gpu) else n.body) if isinstance(n, ast.If) else [n]
            self.guards += [(branch[0].lineno, branch[-1].end_lineno)] if branch else []
        assigns = [(t, n.value) for n in nodes if isinstance(n, ast.Assign | ast.AnnAssign) and n.value is not None
                   for t in (n.targets if isinstance(n, ast.Assign) else [n.target])]  # fmt: skip
        # use_gpu = True (also in a class body), USE_CUDA: bool = True at module level: set in the code, asked by no
        # user (not a dataclass field, use_gpu: bool = False, which a user sets)
        module = {id(t) for a in self.tree.body if isinstance(a, ast.AnnAssign) for t in [a.target]}
        classes = [c for c in nodes if isinstance(c, ast.ClassDef)]
        in_any_class = {id(t) for c in classes for a in c.body if isinstance(a, ast.Assign) for t in a.targets}
        switches = {_dotted(t) for n in nodes if isinstance(n, ast.Assign) and isinstance(n.value, ast.Constant)
                    for t in n.targets if id(t) not in in_any_class}  # fmt: skip
        switches |= {_dotted(t) for t, v in assigns if id(t) in module and isinstance(v, ast.Constant)}
        # and a GPU index option that picks a GPU unless the user says otherwise (--gpu default=0, store_true), or a
        # switch option that is on unless the user turns it off (--use_cuda default=True or 1, action="store_false"),
        # read as args.X, self.args.X, hp.X, ...
        options = set()
        for c in (c for c in nodes if isinstance(c, ast.Call) and _dotted(c.func).endswith("add_argument")):
            _, dest = _option(c)
            options.add(dest)
            kw = {k.arg: k.value for k in c.keywords}
            picks = "default" in kw and ast.unparse(kw["default"]) not in ("None", "-1")
            action = ast.unparse(kw.get("action", ast.Constant("")))
            default = kw["default"].value if isinstance(kw.get("default"), ast.Constant) else None
            on = GPU_SWITCH.fullmatch(dest) and (action == "'store_false'" or default not in (None, False, 0, ""))
            if on:
                switches.add(f"*.{dest}")
            elif GPU_INDEX.fullmatch(dest) and (picks or action in ("'store_true'", "'store_false'")):
                switches |= {f"{name}.{dest}" for name in OPTION_NAMES | {"opt", "args"}}
        # and a plain class's constant that turns it on (class Config: USE_CUDA = True, read as cfg.USE_CUDA) that
        # nothing else sets and no option is named for (not a config node's default, _C.USE_CUDA = True, which a
        # user's config file overrides)
        fields = re.compile(r"dataclass|attr|define|frozen|pydantic|struct", re.I)  # classes whose fields a user sets
        in_class = {id(t) for c in classes if not any(fields.search(_dotted(d.func if isinstance(d, ast.Call) else d))
                    for d in c.decorator_list) for a in c.body if isinstance(a, ast.Assign | ast.AnnAssign)
                    for t in (a.targets if isinstance(a, ast.Assign) else [a.target])}  # fmt: skip
        others = {
            _dotted(t).split(".")[-1]
            for t, v in assigns
            if not (isinstance(v, ast.Constant) and v.value is True and id(t) in in_class)
        } | options
        switches |= {f"*.{t.id}" for t, v in assigns if id(t) in in_class and isinstance(t, ast.Name)
                     and isinstance(v, ast.Constant) and v.value is True and t.id not in others}  # fmt: skip
        for n in (n for n in nodes if id(n) in tests and not isinstance(n, ast.While)):
            if _asked_gpu(n.test, switches):  # if args.num_gpus > 1: (not its else)
                if isinstance(n, ast.If):
                    self.guards.append((n.body[0].lineno, n.body[-1].end_lineno))
                else:
                    self.guard_ids |= {id(x) for x in ast.walk(n.body)}
        # Tests that run only where a GPU is: a skip marker on a test function, or on a class (its methods), or a
        # module's pytestmark (its functions); so do a Ray actor's methods, or a Ray task, that ask for a GPU. What
        # runs at import or collection (module and class bodies, default values) runs on a CPU-only machine too, so it
        # stays unguarded.
        machine = re.compile(MACHINE.pattern + "".join(rf"|\b{re.escape(f)}\b" for f in sorted(flags) if f))
        markers = {_dotted(t) for n in nodes if isinstance(n, ast.Assign) and _gpu_skip(n.value, machine)
                   for t in n.targets}  # fmt: skip  # gpu_test = unittest.skipUnless(torch.cuda.is_available(), ...)
        functions = [n for n in nodes if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]
        for d in (n for n in nodes if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)):
            if any(_gpu_skip(dec, machine) or _dotted(dec) in markers or _gpu_actor(dec) for dec in d.decorator_list):
                fns = [d] if not isinstance(d, ast.ClassDef) else [f for f in d.body if f in functions]
                self.guards += [(f.body[0].lineno, f.end_lineno) for f in fns]
        for stmt in getattr(tree, "body", []):  # pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), ...)
            if isinstance(stmt, ast.Assign) and any(_dotted(t) == "pytestmark" for t in stmt.targets):
                if _gpu_skip(stmt.value, machine):
                    self.guards += [(f.body[0].lineno, f.end_lineno) for f in functions]
        for block in (getattr(n, f, None) for n in nodes for f in ("body", "orelse", "finalbody")):
            for stmt in block if isinstance(block, list) else ():  # assert torch.cuda.device_count() > rank, "..."
                if isinstance(stmt, ast.Assert) and _needs_gpu(stmt.test, machine):  # guards the rest
                    self.guards.append((stmt.end_lineno + 1, block[-1].end_lineno))
        for fn in (n for n in nodes if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)):
            if fn.name in ("cuda", "to"):  # a class's own .cuda()/.to(): moving to the GPU is its job
                self.guards.append((fn.lineno, fn.end_lineno))
        named = [(fn.lineno, fn.end_lineno, fn.name) for fn in functions if GPU_NAMED.search(fn.name)]
        # `if not torch.cuda.is_available(): return` (raise, sys.exit(...), quit()) guards the rest of the function, or
        # at a module's top the rest of the module (after `if torch.cuda.is_available(): return`, nothing is guarded)
        mains = [n for n in getattr(tree, "body", []) if _is_main(n)]
        for scope in [tree, *mains, *(n for n in nodes if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef))]:
            for stmt in getattr(scope, "body", []):
                if isinstance(stmt, ast.If) and not stmt.orelse and _no_gpu(stmt.test, gpu) and _leaves(stmt.body[-1]):
                    self.guards.append((stmt.end_lineno + 1, scope.body[-1].end_lineno))
        # A block (a function's body, a branch, a module run as a script) that starts an NCCL process group runs where
        # each process has a GPU: init_process_group("nccl") in it, unconditionally. PC101 there is a warning.
        # The block runs with NCCL from its start, or from after the last statement before the call that can leave
        # it (a branch that returns first runs without). A script that starts NCCL in its run (the module's body, its
        # __main__ block) with no way out before is NCCL code as a whole.
        # So does a call of a project function that starts one (utils.init_distributed_mode(args)), read one hop away.
        self.nccl: list[tuple[int, int, int]] = []
        starts = set(_nccl_functions(tree))  # f(...) of this module, or imported: f(...), module.f(...)
        called = {_dotted(s.value.func) for s in nodes if isinstance(s, ast.Expr) and isinstance(s.value, ast.Call)}
        heads, bound = {c.split(".")[0] for c in called}, _bindings(tree)
        for n in (n for n in getattr(tree, "body", []) if isinstance(n, ast.Import | ast.ImportFrom)):
            for a in (a for a in n.names if bound.get(a.asname or a.name.split(".")[0]) is n
                      and (a.asname or a.name.split(".")[0]) in heads):  # fmt: skip
                if isinstance(n, ast.Import):  # import pkg.utils (as u): u.f(...)
                    found = [(a.name, 0, f"{a.asname or a.name}.")]
                else:  # from pkg import utils: utils.f(...); from pkg.utils import f (as g): g(...)
                    found = [(".".join(filter(None, [n.module, a.name])), n.level, f"{a.asname or a.name}.")]
                    found += [(n.module, n.level, a.name)] if n.module else []
                for module, level, local in found:
                    file = _resolve(folder, module, level)
                    functions = _module(file)[2] if file else frozenset()
                    if local.endswith("."):
                        starts |= {local + f for f in functions}
                    elif local in functions:
                        starts.add(a.asname or a.name)
        starts |= _nccl_functions(tree, frozenset(starts))  # def main(): init_distributed_mode(args) -> main()

        def starts_nccl(stmt) -> bool:  # init_process_group("nccl"), or a call of a function that starts it
            call = stmt.value if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) else None
            return bool(call) and (_starts_nccl(call) or _dotted(call.func) in starts)

        for n in (n for n in nodes if not isinstance(n, ast.ClassDef)):
            for block in (b for f in ("body", "orelse") if isinstance(b := getattr(n, f, None), list)):
                for i, stmt in enumerate(block):
                    if starts_nccl(stmt):
                        exits = [s.end_lineno + 1 for s in block[:i] if any(
                            isinstance(x, ast.Return | ast.Raise) or _leaves(x) for x in ast.walk(s))]  # fmt: skip
                        whole = (n is tree or n in mains) and not exits
                        start = 1 if whole else max(exits, default=block[0].lineno)
                        end = len(source.splitlines()) if whole else block[-1].end_lineno
                        self.nccl.append((start, end, stmt.lineno))
                        break

        # (what a starter function runs before it starts NCCL runs without it, even when the whole script is NCCL code:
        # `def main(single): if single: model.cuda(); sys.exit()` then init_distributed_mode())
        starters = [fn for fn in nodes if isinstance(fn, ast.FunctionDef) and fn.name in starts]
        self.nccl_before = [(fn.body[0].lineno, next((st.lineno for st in fn.body if starts_nccl(st)), 0) - 1)
                            for fn in starters]  # fmt: skip
        # A value that a GPU check falls back from later: `if args.device == "cuda" and not torch.cuda.is_available():
        # args.device = "cpu"`, `torch.device(args.device if torch.cuda.is_available() else "cpu")`: the names and
        # attributes that such a test reassigns to a CPU device, or that its conditional expression sets against one.
        # (a plain name counts only in its own function: "device" is a common name)
        self.scope = [0] * (len(source.splitlines()) + 2)  # line -> the first line of its function or class (0: none)
        for n in sorted((n for n in nodes if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)),
                        key=lambda n: (n.lineno, -n.end_lineno)):  # fmt: skip  # (outer first, inner overwrite)
            self.scope[n.lineno : n.end_lineno + 1] = [n.lineno] * (n.end_lineno + 1 - n.lineno)
        self.classes = {n.lineno: n.end_lineno for n in nodes if isinstance(n, ast.ClassDef)}
        self.fallback: set[str] = set()
        for n in (n for n in nodes if isinstance(n, ast.If | ast.IfExp) and guard.search(tests[id(n)])):
            if isinstance(n, ast.IfExp):
                parts = [a for a, b in ((n.body, n.orelse), (n.orelse, n.body)) if _is_cpu(b)]
            else:
                parts = [t for stmt in n.body + n.orelse if isinstance(stmt, ast.Assign) and _is_cpu(stmt.value)
                         for t in stmt.targets]  # fmt: skip
            self.fallback |= {
                self._key(x) for p in parts for x in ast.walk(p) if isinstance(x, ast.Name | ast.Attribute)
            }
        # the names that hold parsed command-line options: args = parser.parse_args(), (opt, rest) = ...known_args()
        parsed = [n for n in nodes if isinstance(n, ast.Assign) and isinstance(n.value, ast.Call)
                  and _dotted(n.value.func).endswith(("parse_args", "parse_known_args"))]  # fmt: skip
        self.options = {ast.unparse(t.elts[0] if isinstance(t, ast.Tuple) else t) for n in parsed for t in n.targets}
        # A branch for another vendor's accelerator (Gaudi's "hccl" backend is right there)
        self.other_vendor = [(n.body[0].lineno, n.body[-1].end_lineno) for n in nodes
                             if isinstance(n, ast.If) and OTHER_VENDOR.search(tests[id(n)])
                             and not re.search(r"!=|\bnot\b", tests[id(n)])]  # fmt: skip

        # A function named for the GPU is GPU code by design, unless this module calls it where nothing tests for a GPU
        # (move_to_cuda(batch) in a training loop): then its GPU code fails there, and stays an error. Calls by name,
        # or self.name(...) for a method; a call inside another function named for the GPU is that one's business.
        def callee(c):
            f = c.func
            if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == "self":
                return f.attr
            return f.id if isinstance(f, ast.Name) else ""

        calls = [(callee(c), c) for c in nodes if isinstance(c, ast.Call)] if named else []
        inside = lambda c: any(a <= c.lineno <= b for a, b, _ in named)  # noqa: E731
        loose = {f for f, c in calls if f and not self.guarded(c) and not inside(c)}
        self.gpu_named = [(a, b, f) for a, b, f in named if f not in loose]
        self.compared = {id(x) for n in nodes if isinstance(n, ast.Compare) for x in [n.left, *n.comparators]}
        self.aliases: dict[str, str] = {}  # local name -> what it was imported as ("xops" -> "xformers.ops")
        # Imports with a fallback (try/except ImportError), in a branch (find_spec, a --quantize option) or lazy (in a
        # function body) are opt-in, each on its own: one optional import of a package excuses no other import of it.
        opt_in: set[int] = set()
        for n in nodes:
            if isinstance(n, ast.Import):
                self.aliases.update({a.asname or a.name.split(".")[0]: a.name if a.asname else a.name.split(".")[0]
                                     for a in n.names})  # fmt: skip
            elif isinstance(n, ast.ImportFrom) and n.module:
                self.aliases.update({a.asname or a.name: f"{n.module}.{a.name}" for a in n.names})
            elif isinstance(n, ast.Try) and any(_catches_import_error(h) for h in n.handlers):
                opt_in |= {id(stmt) for stmt in n.body if _modules(stmt)}
            elif isinstance(n, ast.If):
                opt_in |= {id(sub) for stmt in n.body + n.orelse for sub in ast.walk(stmt) if _modules(sub)}
            elif isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef):
                opt_in |= {id(sub) for sub in ast.walk(n) if _modules(sub)}
        self.opt_in_imports = opt_in
        imported = [(id(n), m.split(".")[0]) for n in nodes for m in _modules(n)]
        # packages this module only ever imports opt-in: their use is opt-in too (PC301's call sites)
        self.optional = {top for i, top in imported if i in opt_in} - {top for i, top in imported if i not in opt_in}
        self.triton = any(m.split(".")[0] == "triton" for n in nodes for m in _modules(n))
        # A module that times the GPU (torch.cuda.synchronize(), torch.cuda.Event) and tests for a GPU nowhere is GPU
        # code by design, a kernel benchmark or autotuner: its .cuda() calls are that design, not an oversight.
        timers = sorted(n.lineno for n in nodes if isinstance(n, ast.Call)
                        and _dotted(n.func).endswith(("cuda.synchronize", "cuda.Event")))  # fmt: skip
        # So is a module of GPU kernels written in a kernel language (Triton, TileLang), imported unconditionally at
        # its top: its kernels run on nothing else, so the tensors around them are on the GPU by design.
        top = [(n.lineno, m.split(".")[0]) for n in getattr(tree, "body", []) if not getattr(n, "level", 0)
               for m in _modules(n)]  # fmt: skip  # imported at the top, unconditionally
        kernels = [line for line, m in top if m in KERNEL_LANGUAGES]
        why = (f"times the GPU at line {timers[0]}" if timers
               else f"imports a GPU kernel language at line {kernels[0]}" if kernels else "")  # fmt: skip
        self.gpu_only = f"{why}, never tests for a GPU" if why and not GUARD.search(source) else ""
        # And a module that cannot even be imported without a library that runs on a GPU only, whatever it tests
        gpu_lib = next(((line, m) for line, m in top if m in GPU_ONLY_PACKAGES), None)
        self.gpu_only = (
            f"imports {gpu_lib[1]}, which runs on a GPU only, at line {gpu_lib[0]}" if gpu_lib else self.gpu_only
        )
        # x = t.cuda(); dist.all_reduce(x): NCCL (RCCL on ROCm) collectives need GPU tensors, so the .cuda() (or
        # device="cuda") is right under the nccl backend and fails only in a CPU-only run (gloo): a warning.
        self.collective: dict[int, str] = {}  # id of a node in what a collective receives -> that collective
        feeds = "cuda" in source and _COLLECTIVE_WORD.search(source)  # most modules: skip the walk
        for fn in (n for n in nodes if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)) if feeds else ():
            fed, last_line = {}, 0  # a name (x, self.buf, weight.data) passed to a collective -> that collective
            # (a collective only in a branch a GPU test or a request for GPUs guards does not make what it receives
            # GPU-only: `if num_gpus > 1: dist.broadcast(idx)` leaves idx = torch.randperm(n).cuda() a CPU run's error)
            for c in (n for n in ast.walk(fn) if isinstance(n, ast.Call) and _collective(self.expand(_dotted(n.func)))
                      and not self.guarded(n)):  # fmt: skip
                last = _dotted(c.func).split(".")[-1]
                args = [
                    *c.args,
                    *(k.value for k in c.keywords if k.arg not in ("group", "op", "async_op", "src", "dst")),
                ]
                fed.update({ast.unparse(a): last for a in args if isinstance(a, ast.Name | ast.Attribute)})
                fed.update({name: last for a in args for name in _tensor_names(a)})  # cat((x, pad))
                self.collective.update({id(s): last for a in args for s in ast.walk(a)})
                last_line = max(last_line, c.lineno)
            # back through assignments and appends before the last collective: x = torch.cat((x, pad)); pad =
            # torch.empty(n, device="cuda"), and tensors.append(torch.empty(n, device="cuda")) for a list it receives
            flows = [(a.targets, a.value) for a in ast.walk(fn) if isinstance(a, ast.Assign) and a.lineno <= last_line]
            pairs = [(tup.elts, value.elts) for targets, value in flows for tup in targets  # a, b = x, y
                     if isinstance(tup, ast.Tuple) and isinstance(value, ast.Tuple)
                     and len(tup.elts) == len(value.elts)]  # fmt: skip
            flows += [([t], v) for names, values in pairs for t, v in zip(names, values, strict=True)]
            flows += [([c.func.value], arg) for c in ast.walk(fn) if isinstance(c, ast.Call) and c.lineno <= last_line
                      and isinstance(c.func, ast.Attribute) and c.func.attr in ("append", "extend", "insert")
                      for arg in c.args[-1:]]  # fmt: skip
            into = defaultdict(list)  # a target's text -> the values assigned (appended) to it
            for targets, value in flows:
                for t in targets:
                    into[ast.unparse(t)].append(value)
            todo = list(fed)
            while todo:  # each name once: linear in the function's size
                name = todo.pop()
                for value in into.pop(name, ()):
                    self.collective.update({id(s): fed[name] for s in ast.walk(value)})
                    new = [x for x in _tensor_names(value) if x not in fed]
                    fed.update({x: fed[name] for x in new})
                    todo += new

    def expand(self, name: str) -> str:
        """A dotted name with its import alias resolved: xops.memory_efficient_attention -> xformers.ops.(same)."""
        first, _, rest = name.partition(".")
        full = self.aliases.get(first, first)
        return f"{full}.{rest}" if rest else full

    def add(self, node, rule, extra="", severity=None):
        if rule == "PC101" and id(node) in self.defaults:
            extra, severity = ": a parameter's default: callers that leave it out fail on CPU-only machines", "warning"
        if rule == "PC101" and severity in (None, "error") and id(node) in self.collective:
            extra += (f" (feeds {self.collective[id(node)]}: right under the nccl backend, RCCL on ROCm, whose "
                      "collectives need GPU tensors, but a CPU-only run (gloo) fails here; pick the device from "
                      "dist.get_backend() to run on both)")  # fmt: skip
            severity = "warning"
        nccl = next((line for a, b, line in self.nccl if a <= node.lineno <= b), None) if self.nccl else None
        nccl = None if any(a <= node.lineno <= b for a, b in self.nccl_before) else nccl
        if rule == "PC101" and severity in (None, "error") and nccl and id(node) not in self.collective:
            extra += (f" (the NCCL process group started at line {nccl} needs a GPU per process, RCCL on ROCm: right "
                      "there, but a CPU-only run, which takes gloo, fails here)")  # fmt: skip
            severity = "warning"
        named = next((f for a, b, f in self.gpu_named if a <= node.lineno <= b), None) if self.gpu_named else None
        if rule == "PC101" and severity in (None, "error") and named:
            extra += (f" (in {named}(), a function named for the GPU: putting things there is its job, so the caller "
                      "that runs it where no GPU is must test for one; or give it a device parameter)")  # fmt: skip
            severity = "warning"
        if rule == "PC101" and self.gpu_only:
            extra += f" (GPU-only by design: the module {self.gpu_only})"
            severity = "info"
        self.found.append((node.lineno, node.col_offset + 1, rule, extra, severity))

    def guarded(self, node) -> bool:
        if not hasattr(self, "_guarded"):  # line -> guarded, made once (a range test per finding is quadratic)
            self._guarded = bytearray(len(self.source.splitlines()) + 2)
            for a, b in self.guards:
                self._guarded[a : b + 1] = b"\x01" * (b + 1 - a)
        return id(node) in self.guard_ids or bool(self._guarded[node.lineno])

    def _key(self, node) -> str:
        """A name's key in self.fallback: an attribute as written (self.x: with its class), a plain name with the
        function or class it is in."""
        if isinstance(node, ast.Attribute) and not (isinstance(node.value, ast.Name) and node.value.id == "self"):
            return ast.unparse(node)
        if isinstance(node, ast.Attribute):  # self.device: in the class around the method
            cls = max((a for a, b in self.classes.items() if a <= node.lineno <= b), default=0)
            return f"{cls}:{ast.unparse(node)}"
        return f"{self.scope[node.lineno]}:{node.id}"

    def _other_vendor(self, node) -> bool:
        return any(a <= node.lineno <= b for a, b in self.other_vendor)

    def _falls_back(self, add_argument: ast.Call) -> bool:
        """parser.add_argument("--device", default="cuda") whose value a GPU check replaces later (args.device)."""
        _, dest = _option(add_argument)
        names = self.options or OPTION_NAMES  # (parsed in another function: `return parser.parse_args()`)
        return bool(dest) and any(f"{name}.{dest}" in self.fallback for name in names)

    def run(self):
        scalers, bf16_autocast = [], False
        for node in self.nodes:
            if isinstance(node, ast.Call):
                name = _dotted(node.func)
                self.call(node, name)
                if name.endswith("GradScaler") and not any(k.arg == "enabled" for k in node.keywords):
                    scalers.append(node)
                if name.endswith("autocast") and any(
                    k.arg == "dtype" and _dotted(k.value).endswith("bfloat16") for k in node.keywords
                ):
                    bf16_autocast = True
            elif isinstance(node, ast.Attribute):
                self.attribute(node)
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                self.imports(node)
            elif isinstance(node, ast.Assign | ast.AnnAssign):  # (AnnAssign: a dataclass field, device: str = "cuda")
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                if (
                    _is_cuda_str(node.value)
                    and not self.guarded(node)
                    and any(re.search("device", _dotted(t), re.I) for t in targets)
                    and not any(
                        self._key(t) in self.fallback for t in targets if isinstance(t, ast.Name | ast.Attribute)
                    )
                ):  # device = "cuda" as a module-level default or a config field
                    self.add(node.value, "PC101", f": {ast.unparse(node)[:60]}")
                if any(_dotted(t).endswith("cudnn.benchmark") for t in targets) and (
                    isinstance(node.value, ast.Constant) and node.value.value is True
                ):
                    self.add(node, "PC108")
                if self.triton and isinstance(node.value, ast.Constant) and node.value.value == 32:
                    if any(re.search("warp", _dotted(t), re.I) for t in targets):
                        self.add(node, "PC306", f": {ast.unparse(node)[:60]}")
            elif isinstance(node, ast.BinOp) and self.triton and isinstance(node.op, ast.Mult):
                sides = {ast.unparse(node.left), ast.unparse(node.right)}
                if "32" in sides and any("num_warps" in x for x in sides):
                    self.add(node, "PC306", f": {ast.unparse(node)[:60]} threads")
            elif isinstance(node, ast.Compare):
                operands = [node.left, *node.comparators]
                if any("get_device_capability" in _dotted(getattr(o, "value", o)) for o in operands):
                    self.add(node, "PC107")
            elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                self.string(node)
        if bf16_autocast:
            for s in scalers:
                self.add(s, "PC103")
        if "CUDA_VISIBLE_DEVICES" in self.source and "HIP_VISIBLE_DEVICES" not in self.source:
            for n in self.nodes:
                if isinstance(n, ast.Constant) and n.value == "CUDA_VISIBLE_DEVICES":
                    self.add(n, "PC111")
                    break
        return self.found

    def call(self, node, name):
        attr = node.func.attr if isinstance(node.func, ast.Attribute) else None
        if attr == "cuda" and not self.guarded(node):
            follows = node.args and isinstance(node.args[0], ast.Attribute) and node.args[0].attr == "device"
            made = node.func.value if isinstance(node.func.value, ast.Call) else None
            module = _dotted(made.func) if made else ""
            empty = made and module.startswith(("nn.", "torch.nn.")) and PARAMETER_FREE.fullmatch(module.split(".")[-1])
            if empty and all(k.arg in SAFE_OPTIONS for k in made.keywords) and all(
                    isinstance(a, ast.Constant) and not module.endswith("Loss") for a in made.args):  # fmt: skip
                pass  # nn.CrossEntropyLoss().cuda(): nothing to move, runs on any machine
            elif follows:  # .cuda(w.device): the GPU w is on; it fails only where w is on the CPU
                other = ast.unparse(node.args[0])[:40]
                self.add(node.func, "PC101", f": {ast.unparse(node)[:60]} follows {other}, which must be on a GPU; "
                         f".to({other}) works wherever it is", "warning")  # fmt: skip
            else:
                self.add(node.func, "PC101", f": {ast.unparse(node)[:60]}")
        elif name in ("torch.device", "device") and node.args and _is_cuda_str(node.args[0]) and not (
                self.guarded(node) or id(node) in self.compared):  # fmt: skip  # (a comparison moves nothing)
            self.add(node, "PC101", f": {ast.unparse(node)[:60]}")
        elif attr == "to" and node.args and _is_cuda_str(node.args[0]) and not self.guarded(node):
            self.add(node, "PC101", f": {ast.unparse(node)[:60]}")
        for k in node.keywords:
            if k.arg == "device" and _is_cuda_str(k.value) and not self.guarded(node):
                self.add(k.value, "PC101", f": device={k.value.value!r}")
            if k.arg == "default" and attr == "add_argument" and _is_cuda_str(k.value) and not self._falls_back(node):
                choices = [c.value for c in node.keywords if c.arg == "choices"]
                choices = [x.value for c in choices if isinstance(c, ast.List | ast.Tuple) for x in c.elts
                           if isinstance(x, ast.Constant)]  # fmt: skip
                flag, _ = _option(node)
                why = f"with 'cpu' among its choices: a run without {flag or 'it'} fails on a CPU-only machine"
                if "cpu" in choices:  # the script runs on a CPU, asked: a plain run still fails there
                    self.add(k.value, "PC101", f": a command-line default of {k.value.value!r}, {why}", "warning")
                else:
                    self.add(k.value, "PC101", f": a command-line default of {k.value.value!r}")
        if name == "torch.load" and len(node.args) < 2 and not any(k.arg == "map_location" for k in node.keywords):
            self.add(node, "PC104")
        full = self.expand(name)
        top, last = full.split(".")[0], full.split(".")[-1]
        if top in DEPENDENCIES and top not in self.optional and last in DEPENDENCIES[top][1] and (
                not self._inside_package(top)):  # fmt: skip
            self.add(node, DEPENDENCIES[top][0], f": {full}(...) -> {DEPENDENCIES[top][1][last]}")
        if self.triton and last == "inline_asm_elementwise":
            self.add(node, "PC305", ": inline assembly (PTX) in a Triton kernel does not compile for AMD GPUs")
        for arg in node.args[:1]:  # a command run: os.system("nvidia-smi -L"), subprocess.run(["nvidia-smi", ...])
            cmd = arg.elts[0] if isinstance(arg, (ast.List, ast.Tuple)) and arg.elts else arg
            if isinstance(cmd, ast.Constant) and str(cmd.value).split(" ", 1)[0] == "nvidia-smi":
                self.add(cmd, "PC112", ": nvidia-smi")
        backends = [k.value for k in node.keywords if k.arg in ("backend", "dist_backend")]
        if name.endswith("init_process_group") and node.args:
            backends.append(node.args[0])
        for b in backends:
            if isinstance(b, ast.Constant) and str(b.value).lower() in ("rccl", "hccl"):
                if str(b.value).lower() == "hccl" and self._other_vendor(b):
                    continue
                self.add(b, "PC109", f": backend={b.value!r}")

    def attribute(self, node):
        name = _dotted(node)
        if self.triton and self.expand(name).endswith("language.extra.cuda"):
            self.add(node, "PC305", f": {name} is the NVIDIA backend's libdevice")
        if name in ("torch.cuda.amp.autocast", "torch.cuda.amp.GradScaler"):
            self.add(node, "PC102", f": {name}")
        elif name == "torch.cuda.is_bf16_supported":
            self.add(node, "PC105")
        elif name == "torch.version.cuda" and self._in_test(node):
            self.add(node, "PC106")
        elif name == "torch.version.cuda" and self._parsed(node):
            self.add(node, "PC106", ": here it is parsed as a version, which raises on ROCm")
        elif name in ("torch.float8_e4m3fn", "torch.float8_e5m2"):
            self.add(node, "PC110", f": {name}")

    def _parsed(self, target) -> bool:
        """torch.version.cuda parsed (parse(...), int(...)) or split, outside a branch that tests the build."""
        build_test = re.compile(r"version\.|hip|rocm|CUDA_HOME", re.I)
        for n in self.nodes:
            if isinstance(n, ast.If | ast.IfExp) and build_test.search(ast.unparse(n.test)):
                if any(c is target for c in ast.walk(n)):
                    return False
        for n in self.nodes:
            if isinstance(n, ast.Call) and (
                (any(a is target for a in n.args) and _dotted(n.func).rpartition(".")[2] in VERSION_PARSERS)
                or (isinstance(n.func, ast.Attribute) and n.func.value is target)
            ):
                return True
        return False

    def _in_test(self, target) -> bool:
        for n in self.nodes:
            if isinstance(n, (ast.If, ast.IfExp, ast.While, ast.Assert)):
                if any(c is target for c in ast.walk(n.test)):
                    return True
            elif isinstance(n, (ast.Compare, ast.BoolOp)) and any(c is target for c in ast.walk(n)):
                return True
        return False

    def imports(self, node):
        mods = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
        if isinstance(node, ast.ImportFrom) and node.module == "torch.cuda.amp":
            self.add(node, "PC102", ": from torch.cuda.amp import ...")
        for m in mods:
            top = m.split(".")[0]
            if id(node) in self.opt_in_imports:
                continue  # an optional import with a fallback: fine on every machine
            if top in DEPENDENCIES and not self._inside_package(top):
                self.add(node, DEPENDENCIES[top][0], f": import {m}")
            elif top in CUDA_ONLY_PACKAGES:
                self.add(node, "PC112" if top == "pynvml" else "PC113", f": {top} -> {CUDA_ONLY_PACKAGES[top]}")
            elif m.startswith("triton.language.extra.cuda"):
                self._nvidia_libdevice(node, m)

    def _nvidia_libdevice(self, node, module: str):
        """An import of Triton's NVIDIA libdevice: every Triton wheel ships both backends' language modules (its
        setup.py copies nvidia and amd), so the import itself works on ROCm; a kernel that calls it does not compile
        for an AMD GPU. Imported but never used here: a warning. (A plain `import triton.language.extra.cuda` binds
        `triton`: its use, triton.language.extra.cuda.x, is reported where it is written.)"""
        if isinstance(node, ast.Import) and not any(a.asname for a in node.names):
            return
        bound = {a.asname or a.name for a in node.names}
        exported = {e.value for n in self.nodes if isinstance(n, ast.Assign) and "__all__" in map(_dotted, n.targets)
                    and isinstance(n.value, ast.List | ast.Tuple) for e in n.value.elts if isinstance(e, ast.Constant)
                    }  # fmt: skip
        # used here, or handed on (`import *`, `__all__`) to kernels elsewhere
        if "*" in bound or bound & exported or any(isinstance(n, ast.Name) and n.id in bound for n in self.nodes):
            self.add(node, "PC305", f": {module} is the NVIDIA backend's libdevice")
        else:
            unused = ", imported but not used here (the import works on ROCm: Triton wheels ship both backends)"
            self.add(node, "PC305", f": {module} is the NVIDIA backend's libdevice{unused}", "warning")

    def _inside_package(self, package: str) -> bool:
        """Is this file part of a checkout of ``package``'s own project (a copy of apex that a project ships, with
        its setup.py: apex/tests/..., apex/examples/...)? Its own code, tests and examples import it: that is no
        dependency on it. (A folder merely named apex, such as a project's own integrations/apex/, is not one.)"""
        names = {package, package.replace("_", "-"), {"flash_attn": "flash-attention"}.get(package, package)}
        folder = os.path.dirname(os.path.abspath(self.path))
        while os.path.basename(folder):  # (apex/apex/parallel/...: the outer apex/ holds setup.py)
            if os.path.basename(folder) in names and any(
                    os.path.isfile(os.path.join(folder, f)) for f in ("setup.py", "pyproject.toml")):  # fmt: skip
                return True
            folder = os.path.dirname(folder)
        return False

    def string(self, node):
        v = node.value
        if re.fullmatch(r"HCCL_[A-Z_]+", v) and not self._other_vendor(node):
            self.add(node, "PC109", f": {v!r}")
        elif v in CUDA_ONLY_VARS and not any(k in self.source for k in CUDA_ONLY_VARS[v][1]):
            self.add(node, "PC114", f": {v} -> {CUDA_ONLY_VARS[v][0]}")


def _ignored(line: str, rule: str) -> bool:
    m = IGNORE.search(line)
    return bool(m) and (m.group(1) is None or rule in {r.strip() for r in m.group(1).split(",")})


def _finding(path, lines, line, col, rule, extra="", severity=None) -> Finding | None:
    text = lines[line - 1] if 0 < line <= len(lines) else ""
    if _ignored(text, rule):
        return None
    r = RULES[rule]
    return Finding(path, line, col, rule, severity or r.severity, r.message + extra, r.fix)


def _template(data: bytes) -> bool:
    """A file that parses once its template tags ({% if %} lines, {{ names }}) are blanked out: a template, not a
    broken file (an f-string's escaped braces alone are no template)."""
    if not re.search(rb"\{%|\{\{\s*[\w.]+\s*\}\}", data):
        return False
    blanked = re.sub(rb"\{\{.*?\}\}", b"X", re.sub(rb"(?m)^\s*\{%.*?%\}\s*$|\{%.*?%\}|\{#.*?#\}", b"", data))
    try:
        ast.parse(blanked)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


def scan_python(path: str, data: bytes) -> list[Finding]:
    """Findings of one Python file; a file that does not parse gives one PC900 finding."""
    try:
        tree = ast.parse(data, filename=path)
        source = data.decode("utf-8", "replace")
    except (SyntaxError, ValueError, UnicodeDecodeError, RecursionError, MemoryError) as e:  # (Recursion: too deep)
        line = getattr(e, "lineno", None) or 1
        if "{{" in path or _template(data):  # a Jinja or cookiecutter template: Python once rendered
            why = "a template (Jinja, cookiecutter): not Python until rendered, so not scanned"
            return [Finding(path, line, 1, "PC900", "info", why, "")]
        return [Finding(path, line, 1, "PC900", "error", f"file could not be parsed: {type(e).__name__}: {e}", "")]
    lines = source.splitlines()
    try:
        out = [_finding(path, lines, *f) for f in _PyScan(path, source, tree).run()]
    except RecursionError:  # (an expression nested thousands deep, such as f()()()...: parsed, too deep to walk)
        why = "file could not be scanned: RecursionError: an expression nested too deeply"  # (3.13+ parses it)
        return [Finding(path, 1, 1, "PC900", "error", why, "")]
    if os.path.basename(path) == "setup.py":
        out += scan_build(path, source) + _cuda_only_setup(path, lines, tree)
    return sorted({f for f in out if f}, key=lambda f: (f.line, f.col, f.rule))


def _cuda_only_setup(path: str, lines: list[str], tree: ast.AST) -> list[Finding]:
    """PC206, once per setup.py: the first use of CUDA_HOME or nvcc in a build of torch extensions that never mentions
    ROCm (ROCM_HOME, IS_HIP_EXTENSION, torch.version.hip, hipcc). torch.utils.cpp_extension sets CUDA_HOME only on
    CUDA builds of torch. An "nvcc" key of extra_compile_args is no finding: on ROCm those flags go to hipcc."""
    code = "\n".join(line.split("#", 1)[0] for line in lines)  # a comment that says "ROCm" ports nothing
    if "cpp_extension" not in code or re.search(r"rocm|IS_HIP_EXTENSION|version\.hip|hipcc", code, re.I):
        return []
    keys = {id(k) for n in ast.walk(tree) if isinstance(n, ast.Dict) for k in n.keys}
    uses = [
        n.lineno for n in ast.walk(tree)
        if (isinstance(n, ast.Name) and n.id == "CUDA_HOME")
        or (isinstance(n, ast.Constant) and id(n) not in keys and isinstance(n.value, str)
            and re.fullmatch(r"CUDA_HOME|nvcc( .*)?|\S*/bin/nvcc", n.value))
    ]  # fmt: skip
    if not uses:
        return []
    line = min(uses)
    return [f for f in [_finding(path, lines, line, 1, "PC206")] if f]


def _rocm_test(test: ast.expr) -> bool | None:
    """True when an ``if`` test holds only when building for ROCm (``IS_ROCM``, ``torch.version.hip is not None``,
    ``is_hip()``), False when only when not (``not IS_ROCM``, ``... and not IS_ROCM``), None when it says neither."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        r = _rocm_test(test.operand)
        return None if r is None else not r
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        said = {_rocm_test(v) for v in test.values} - {None}
        return said.pop() if len(said) == 1 else None
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], (ast.Is, ast.IsNot)):
        r = _rocm_test(test.left) if isinstance(test.comparators[0], ast.Constant) else None
        return None if r is None or test.comparators[0].value is not None else r == isinstance(test.ops[0], ast.IsNot)
    node = test.func if isinstance(test, ast.Call) else test
    name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""
    return True if re.search(r"(^|_)(rocm|hip)(_|$)", name.lower()) else None


def cuda_only_folders(path: str, tree: ast.AST) -> dict[str, int]:
    """The folders of C++/CUDA sources a setup.py builds only when not building for ROCm, when it builds other sources
    for ROCm (flash-attention: csrc/flash_attn for CUDA, csrc/flash_attn_ck for ROCm), each with the line of its
    ``if``. A folder is left out when a source named anywhere else in the file (a ROCm branch, or code both builds
    run) is in it, above or below it. A setup.py without ROCm sources gives nothing: it is no port yet."""
    branch: dict[int, tuple[bool, int]] = {}  # id of a node in a vendor-only branch -> (ROCm?, line of the `if`)
    for node in ast.walk(tree):
        rocm = _rocm_test(node.test) if isinstance(node, ast.If) else None
        if rocm is None:
            continue
        pure = not isinstance(node.test, ast.BoolOp)  # the `else` of `if A and not IS_ROCM` runs on CUDA and ROCm
        for body, on_rocm in [(node.body, rocm)] + ([(node.orelse, not rocm)] if pure else []):
            for n in (n for stmt in body for n in ast.walk(stmt)):
                branch.setdefault(id(n), (on_rocm, node.lineno))
    folders: dict[str, dict[str, int]] = {"cuda": {}, "rocm": {}, "both": {}}
    for n in ast.walk(tree):
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and SOURCE.fullmatch(n.value):
            on_rocm, line = branch.get(id(n), (None, 0))
            kind = "both" if on_rocm is None else "rocm" if on_rocm else "cuda"
            folder = os.path.normpath(os.path.join(os.path.dirname(path), os.path.dirname(n.value)))
            folders[kind].setdefault(folder, line)

    def related(a: str, b: str) -> bool:
        return a == b or a.startswith(b + os.sep) or b.startswith(a + os.sep)

    others = [*folders["rocm"], *folders["both"]]
    return {
        d: line for d, line in folders["cuda"].items() if folders["rocm"] and not any(related(d, o) for o in others)
    }


def _if_groups(lines: list[str], kind) -> list[list[tuple[int, int, object]]]:
    """Every #if ... #endif group of a C/C++ file, as its branches: (first line, line after it, kind(directive)), a
    directive continued with a backslash read whole. For the three readers below, which ask what a build compiles."""
    stack, groups, i = [], [], 0  # stack: per open #if, its branches as [first line, kind]
    while i < len(lines):
        first, d = i + 1, lines[i].strip()
        while d.endswith("\\") and i + 1 < len(lines):
            i += 1
            d = d[:-1] + " " + lines[i].strip()
        i += 1
        if re.match(r"#\s*if", d):
            stack.append([(first, kind(d))])
        elif re.match(r"#\s*(else|elif)", d) and stack:
            stack[-1].append((first, kind(d)))
        elif re.match(r"#\s*endif", d) and stack:
            branches = stack.pop()
            ends = [b for b, _ in branches[1:]] + [first]
            groups.append([(a, b, k) for (a, k), b in zip(branches, ends, strict=True)])
    return groups


def _lines_of(spans) -> set[int]:
    return {n for a, b in spans for n in range(a, b)}


def _cuda_arch_only(lines: list[str]) -> set[int]:
    """Line numbers of preprocessor branches HIP never compiles. HIP's compiler does not define __CUDA_ARCH__: a branch
    that requires it is compiled out when a later #elif/#else exists (that one is used), and after a branch that
    requires its absence (`#ifndef __CUDA_ARCH__`, `!defined(__CUDA_ARCH__)`), which HIP always takes, every later
    branch is."""

    def kind(d: str) -> str | None:
        if "__CUDA_ARCH__" not in d or re.match(r"#\s*else", d):
            return None
        return "neg" if re.match(r"#\s*ifndef", d) or re.search(r"!\s*defined", d) else "pos"

    return _lines_of(
        (a, b) for group in _if_groups(lines, kind) for n, (a, b, k) in enumerate(group)
        if (k == "pos" and n + 1 < len(group)) or any(k2 == "neg" for _, _, k2 in group[:n])
    )  # fmt: skip


ROCM_MACROS = r"(USE_ROCM|__HIP_PLATFORM_AMD__)"  # what torch's ROCm extension builds define for every file


def _rocm_excluded(lines: list[str]) -> set[int]:
    """Line numbers of preprocessor branches a ROCm build never compiles: `#ifndef USE_ROCM` (or `#if !defined(...)`,
    alone or joined to other terms by `&&` only) and whatever follows an `#ifdef USE_ROCM` branch (`#if defined(...)`
    alone), for the macros torch's ROCm extension builds define for C++ and HIP files alike (USE_ROCM,
    __HIP_PLATFORM_AMD__; not __HIPCC__, which a .cpp's host compiler lacks, nor __HIP_PLATFORM_HCC__, gone since
    ROCm 6.0). CUDA-only code kept out of the ROCm build (causal-conv1d's `#ifndef USE_ROCM` shuffle with a 32-bit
    mask, its `#else` HIP's) is no port bug."""

    def kind(d: str) -> str | None:
        cond = re.sub(r"/\*.*?\*/|//.*", "", d).strip()
        if re.fullmatch(rf"#\s*ifndef\s+{ROCM_MACROS}", cond):
            return "out"
        if re.fullmatch(rf"#\s*ifdef\s+{ROCM_MACROS}|#\s*(el)?if\s+defined\s*\(?\s*{ROCM_MACROS}\s*\)?", cond):
            return "taken"
        m = re.match(r"#\s*(el)?if\b(.*)", cond)
        terms = [t.strip() for t in m.group(2).split("&&")] if m and "||" not in cond else []
        negated = rf"!\s*defined\s*(\(\s*{ROCM_MACROS}\s*\)|\s{ROCM_MACROS})"
        return "out" if any(re.fullmatch(negated, t) for t in terms) else None  # (not `!(... && !defined(X))`)

    return _lines_of(
        (a, b) for group in _if_groups(lines, kind) for n, (a, b, k) in enumerate(group)
        if k == "out" or any(k2 == "taken" for _, _, k2 in group[:n])
    )  # fmt: skip


def _wave32_only(lines: list[str]) -> set[int]:
    """Line numbers of preprocessor branches compiled only for RDNA GPUs (`#elif defined(__gfx1100__) ||
    defined(__gfx1101__)`): gfx10, gfx11 and gfx12 run 32-wide wavefronts, so a warp size of 32 is right there. A branch
    whose condition is negated or names anything else (a gfx9 target, __HIP_PLATFORM_AMD__) is not one."""

    def rdna(d: str) -> bool:
        if not re.match(r"#\s*(if|ifdef|elif|elifdef)\b", d):  # (not #ifndef, #elifndef, #else)
            return False
        cond = re.sub(r"/\*.*?\*/|//.*", "", d)  # comments are not the condition
        names = [
            w for w in re.findall(r"[A-Za-z_]\w*", cond.split(None, 1)[1] if " " in cond else "") if w != "defined"
        ]
        return bool(names) and "!" not in cond and all(re.fullmatch(r"__gfx1[0-2]\w*__", w) for w in names)

    return _lines_of((a, b) for group in _if_groups(lines, rdna) for a, b, only in group if only)


def _without_block_comments(source: str) -> str:
    """The source with each /* ... */ comment blanked out, lines and columns kept: code in a comment is no code."""
    return re.sub(r"/\*.*?\*/", lambda m: re.sub(r"[^\n]", " ", m.group()), source, flags=re.S)


def scan_cpp(path: str, source: str) -> list[Finding]:
    lines, out = source.splitlines(), []  # (the original lines: suppression comments and messages quote them)
    code_lines = _without_block_comments(source).splitlines()
    compiled_out, wave32, not_rocm = _cuda_arch_only(code_lines), _wave32_only(code_lines), _rocm_excluded(code_lines)
    for i, raw in enumerate(code_lines, 1):
        if i in not_rocm:
            continue  # a branch the ROCm build never compiles (#ifndef USE_ROCM)
        code = raw.split("//", 1)[0]
        for rule, rx in (("PC201", WARP32), ("PC202", MASK32), ("PC203", PTX)):
            m = rx.search(code)
            if m and rule == "PC203" and i in compiled_out:
                continue  # inline PTX with a fallback for everything that is not NVIDIA device code
            if m and rule == "PC201" and i in wave32:
                continue  # a warp of 32 in code built only for RDNA (wave32) GPUs
            if m:
                out.append(_finding(path, lines, i, m.start() + 1, rule))
        if "#include" in code or "::" in code:
            for rx, equiv in CUDA_LIBS:
                m = rx.search(code)
                if m:
                    out.append(_finding(path, lines, i, m.start() + 1, "PC204", f": {equiv}"))
    return [f for f in out if f]


def scan_build(path: str, source: str) -> list[Finding]:
    lines, out = source.splitlines(), []
    if "TORCH_CUDA_ARCH_LIST" in source and "PYTORCH_ROCM_ARCH" not in source:
        i = next(n for n, line in enumerate(lines, 1) if "TORCH_CUDA_ARCH_LIST" in line)
        out.append(_finding(path, lines, i, lines[i - 1].index("TORCH_CUDA_ARCH_LIST") + 1, "PC205"))
    if not path.endswith(".py"):  # setup.py's strings are Python's (PC114 there comes from the ast scan)
        for i, line in enumerate(lines, 1):
            fake = NO_SUCH_PACKAGE.search(line.split("#", 1)[0])
            if fake:
                out.append(_finding(path, lines, i, fake.start(1) + 1, "PC307", f": {fake.group(1)}"))
            m = CUDA_ONLY_VAR.search(line.split("#", 1)[0])
            if m and not any(k in source for k in CUDA_ONLY_VARS[m.group(1)][1]):
                out.append(_finding(path, lines, i, m.start() + 1, "PC114", f": {m.group(1)} -> "
                                    f"{CUDA_ONLY_VARS[m.group(1)][0]}"))  # fmt: skip
    return [f for f in out if f]


def _kind(path: str) -> str | None:
    base = os.path.basename(path)
    if base.endswith(".py"):
        return "python"
    if base.endswith(CPP_SUFFIXES):
        return "cpp"
    if base in BUILD_NAMES or base.endswith(BUILD_SUFFIXES):
        return "build"
    return None


def iter_files(paths, exclude=()):
    """(file, where it is for _is_test_path) for every file to scan under ``paths``: skips VCS, virtualenv, build and
    cache folders; never follows directory symlinks (no loops)."""
    for p in paths:
        if os.path.isfile(p):
            yield p, _where(p)
            continue
        for root, dirs, files in os.walk(p, followlinks=False):
            dirs[:] = sorted(
                d for d in dirs
                if d not in SKIP_DIRS and not d.endswith(".egg-info")
                and not os.path.exists(os.path.join(root, d, "pyvenv.cfg"))
            )  # fmt: skip
            for name in sorted(files):
                full = os.path.join(root, name)
                rel = os.path.relpath(full, p)
                if _kind(full) and not any(fnmatch.fnmatch(rel, pat) for pat in exclude):
                    yield full, _where(full, p)


def scan_source(path: str, data: bytes) -> list[Finding]:
    """Findings of one file's contents; ``path`` decides the kind (Python, C++/CUDA or build file)."""
    kind = _kind(path) or "python"
    if kind == "python":
        return scan_python(path, data)
    text = data.decode("utf-8", "replace")
    return scan_cpp(path, text) if kind == "cpp" else scan_build(path, text)


def _downgrade_cuda_only(f: Finding, folders: dict[str, str]) -> Finding:
    """A finding in C++/CUDA code that the project's setup.py compiles only for CUDA becomes info: on ROCm that
    setup.py builds other sources, so this line is no porting bug until someone builds it for ROCm."""
    folder = os.path.dirname(os.path.normpath(f.path))
    where = next((w for d, w in folders.items() if folder == d or folder.startswith(d + os.sep)), None)
    if where is None or f.severity == "info" or _kind(f.path) != "cpp":
        return f
    note = f" (only built for CUDA: {where} builds other sources for ROCm)"
    return replace(f, severity="info", message=f.message + note)


def _is_extension_test(path: str, rel: str) -> bool:
    """test.py next to a setup.py whose code uses CUDAExtension, in a folder below the project's root: the test script
    of that extension's own kernels (the MSDeformAttn op that Deformable-DETR, Mask2Former and the rest of the DETR
    family copy, with its ops/test.py). A test.py at the root is the project's own script (often its evaluation)."""
    if os.path.basename(path) != "test.py" or not os.path.dirname(os.path.normpath(rel)):
        return False
    folder = os.path.dirname(os.path.abspath(path))  # and a project around that folder, whatever folder we run from
    above = [os.path.dirname(folder)]
    while os.path.dirname(above[-1]) != above[-1]:
        above.append(os.path.dirname(above[-1]))
    markers = (".git", "pyproject.toml", "setup.py", "setup.cfg", "requirements.txt", "README.md")
    if not any(os.path.exists(os.path.join(d, m)) for d in above for m in markers):
        return False
    try:
        with open(os.path.join(os.path.dirname(path), "setup.py"), "rb") as setup:
            tree = ast.parse(setup.read())
    except (OSError, SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return any(  # CUDAExtension(...), or `extension = CUDAExtension` then extension(...) (Deformable-DETR's)
        (isinstance(n, ast.Name) and n.id == "CUDAExtension" and isinstance(n.ctx, ast.Load))
        or (isinstance(n, ast.Attribute) and n.attr == "CUDAExtension")
        for n in ast.walk(tree)
    )


def _downgrade_test(f: Finding, rel: str, path: str = "") -> Finding:
    """PC101 in a project's tests or benchmarks is a warning: such a test fails a CPU-only test run, not a user's
    program, and the fix is a skip marker, not a device fallback; a benchmark suite exists to time GPUs."""
    if f.rule != "PC101" or f.severity != "error":
        return f
    if _is_extension_test(path, rel):
        note = " (the test of the CUDA extension that setup.py next to it builds: it tests that build's GPU kernels)"
    elif _is_test_path(rel):
        note = " (a test: skip it where no GPU is, @pytest.mark.skipif(not torch.cuda.is_available(), reason=...))"
    elif _is_benchmark_path(rel):
        note = " (a benchmark: it times the GPU; say so in its docs, or skip where no GPU is)"
    else:
        return f
    return replace(f, severity="warning", message=f.message + note)


def scan(paths, select=None, ignore=None, exclude=(), stdin: tuple[str, bytes] | None = None) -> dict:
    """Scan files and folders (and ``stdin``: a (name, contents) pair); returns the JSON-schema dict."""
    findings, errors, n_files, n_lines = [], [], 0, 0
    sources, rel_of = [], {}  # rel_of: a file's path inside the scanned folder (tests/...?)
    if stdin:
        rel_of[stdin[0]] = _where(stdin[0])
    for path, rel in iter_files(paths, exclude):
        rel_of[path] = rel
        try:
            if os.path.islink(path) and not os.path.exists(path):
                raise OSError("broken symbolic link")
            with open(path, "rb") as fh:
                sources.append((path, fh.read()))
        except OSError as e:
            errors.append({"path": path, "error": e.strerror or str(e)})
    cuda_only: dict[str, str] = {}  # folder -> "setup.py:LINE" that builds it for CUDA only
    for path, data in sources + ([stdin] if stdin else []):
        if b"\0" in data[:8192]:
            continue  # binary
        n_files += 1
        n_lines += data.count(b"\n")
        findings += [_downgrade_test(f, rel_of[path], path) for f in scan_source(path, data)]
        if os.path.basename(path) == "setup.py":
            try:
                folders = cuda_only_folders(path, ast.parse(data))
            except (SyntaxError, ValueError):
                folders = {}  # reported as PC900 by scan_source
            cuda_only.update({d: f"{path}:{line}" for d, line in folders.items()})
    findings = [_downgrade_cuda_only(f, cuda_only) for f in findings]
    keep = [
        f for f in findings
        if (not select or any(f.rule.startswith(s) for s in select))
        and not (ignore and any(f.rule.startswith(s) for s in ignore))
    ]  # fmt: skip
    summary: dict[str, int] = {}
    for f in keep:
        summary[f.rule] = summary.get(f.rule, 0) + 1
    return {
        "schema": 1,
        "files_scanned": n_files,
        "lines_scanned": n_lines,
        "findings": [asdict(f) for f in keep],
        "errors": errors,
        "summary": dict(sorted(summary.items())),
    }


def format_text(result: dict) -> str:
    """One line per finding; a rule's fix once per file, under its first finding there (the same fix twelve times
    says nothing new); then the rules found, each described in full, and the totals."""
    out, last, fixed = [], None, set()
    for f in result["findings"]:
        if f["path"] != last:
            if last is not None:
                out.append("")
            last, fixed = f["path"], set()
        out.append(f"{f['path']}:{f['line']}:{f['col']}: {f['rule']} {f['severity']} {f['message']}")
        if f["fix"] and (f["rule"], f["fix"]) not in fixed:
            out.append(f"    fix: {f['fix']}")
            fixed.add((f["rule"], f["fix"]))
    for e in result["errors"]:
        out.append(f"{e['path']}: could not read: {e['error']}")
    if out:
        out.append("")
    for rule, n in result["summary"].items():  # by the severity each finding got (a test's PC101 is a warning)
        got = Counter(f["severity"] for f in result["findings"] if f["rule"] == rule)
        how = ", ".join(f"{got[s]} {s}" for s in ("error", "warning", "info") if got[s])
        out.append(f"{n:5d}  {rule} ({how}) {RULES[rule].message}")
    n = len(result["findings"])
    errors = sum(f["severity"] == "error" for f in result["findings"])
    out.append(f"{n} finding{'s' * (n != 1)} in {result['files_scanned']} files ({result['lines_scanned']} lines), "
               f"{errors} at error severity")  # fmt: skip
    return "\n".join(out)


def to_sarif(result: dict) -> dict:
    """The result as SARIF 2.1.0 (GitHub code scanning, GitLab, Azure DevOps show it inline)."""
    from helpers import __version__

    level = {"error": "error", "warning": "warning", "info": "note"}
    rules = [{"id": r.id, "shortDescription": {"text": r.message}, "help": {"text": r.fix},
              "defaultConfiguration": {"level": level[r.severity]}} for r in RULES.values()]  # fmt: skip
    index = {r["id"]: i for i, r in enumerate(rules)}
    results = []
    for f in result["findings"]:
        uri = os.path.relpath(f["path"]).replace(os.sep, "/")
        results.append({
            "ruleId": f["rule"], "ruleIndex": index[f["rule"]], "level": level[f["severity"]],
            "message": {"text": f"{f['message']}. Fix: {f['fix']}" if f["fix"] else f["message"]},
            "locations": [{"physicalLocation": {"artifactLocation": {"uri": uri, "uriBaseId": "%SRCROOT%"},
                                                "region": {"startLine": f["line"], "startColumn": f["col"]}}}],
        })  # fmt: skip
    notes = [{"level": "error", "message": {"text": f"{e['path']}: could not read: {e['error']}"}}
             for e in result["errors"]]  # fmt: skip
    driver = {"name": "portcheck", "version": __version__, "rules": rules}
    return {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{"tool": {"driver": driver}, "results": results,
                  "invocations": [{"executionSuccessful": True, "toolExecutionNotifications": notes}]}],
    }  # fmt: skip


def changed_files(rev: str) -> list[str]:
    """Files changed since git revision ``rev`` (committed, staged or not), that still exist."""
    out = subprocess.run(["git", "diff", "--name-only", "--diff-filter=ACMR", rev, "--"], capture_output=True,
                         text=True, check=True).stdout  # fmt: skip
    top = subprocess.run(["git", "rev-parse", "--show-toplevel"], capture_output=True, text=True, check=True).stdout
    return [p for p in (os.path.join(top.strip(), line) for line in out.splitlines() if line) if os.path.isfile(p)]


def _rules_arg(value: str) -> list[str]:
    ids = [v.strip().upper() for v in value.split(",") if v.strip()]
    for i in ids:
        if not any(r.startswith(i) for r in RULES):
            raise argparse.ArgumentTypeError(f"unknown rule {i!r} (known: {', '.join(RULES)})")
    return ids


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="portcheck", description="Find what breaks or misleads on ROCm.")
    ap.add_argument("paths", nargs="*", help="files or folders to scan")
    ap.add_argument("--format", choices=["text", "json", "sarif"], default="text", help="output format")
    ap.add_argument("--json", action="store_const", const="json", dest="format", help="same as --format json")
    ap.add_argument("--select", type=_rules_arg, help="only these rules (ids or prefixes: PC101,PC2)")
    ap.add_argument("--ignore", type=_rules_arg, help="skip these rules")
    ap.add_argument("--exclude", action="append", default=[], help="glob of paths to skip, relative to PATH")
    ap.add_argument("--changed", metavar="REV", help="also scan the files changed since git revision REV")
    ap.add_argument("--stdin", metavar="NAME", help="scan standard input as a file called NAME (editors)")
    a = ap.parse_args(argv)
    missing = [p for p in a.paths if not os.path.exists(p)]
    if missing:
        print(f"portcheck: error: no such file or directory: {missing[0]}", file=sys.stderr)
        return 2
    paths = list(a.paths)
    if a.changed:
        try:
            paths += [p for p in changed_files(a.changed) if _kind(p)]
        except (OSError, subprocess.CalledProcessError) as e:
            err = getattr(e, "stderr", "") or str(e)
            print(f"portcheck: error: git cannot list the changes since {a.changed}: {err.strip()}", file=sys.stderr)
            return 2
    if not paths and not a.stdin and not a.changed:
        ap.print_usage(sys.stderr)
        print("portcheck: error: give files or folders, --changed REV or --stdin NAME", file=sys.stderr)
        return 2
    stdin = (a.stdin, sys.stdin.buffer.read()) if a.stdin else None
    result = scan(paths, a.select, a.ignore, a.exclude, stdin=stdin)
    if a.format == "json":
        print(json.dumps(result, indent=2))
    elif a.format == "sarif":
        print(json.dumps(to_sarif(result), indent=2))
    else:
        print(format_text(result))
    return 1 if any(f["severity"] == "error" for f in result["findings"]) else 0


if __name__ == "__main__":
    sys.exit(main())
