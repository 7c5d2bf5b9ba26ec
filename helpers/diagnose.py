"""Explain a PyTorch-on-ROCm error: what it means, why it happens, what to do.

Give it an exception, or the text of an error or a whole log pasted from a terminal. The rules are
tried in order of *root cause* first (a missing GPU binary before the "No HIP GPUs" it leads to), so
a traceback is classified by its cause, not by a later symptom. Imports no torch: use it anywhere.

    >>> from helpers.diagnose import diagnose
    >>> diagnose("RuntimeError: No HIP GPUs are available").category
    'device_permissions'

Command line: ``python -m helpers.diagnose [FILE|-] [--json]`` (stdin when no file is given).
In a notebook, ``helpers.diagnose.install()`` prints the diagnosis under every traceback.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import traceback
from dataclasses import asdict, dataclass, field

# Two strings; helpers.device imports torch only inside its functions, so this module stays torch-free.
from helpers.device import DOCKER_GPU_FLAGS, ROCM_WHEEL_INDEX

HIP_DOCS = "https://pytorch.org/docs/stable/notes/hip.html"
ROCM_INSTALL = "https://rocm.docs.amd.com/projects/install-on-linux/en/latest/install/3rd-party/pytorch-install.html"
ROCM_DOCKER = "https://rocm.docs.amd.com/projects/install-on-linux/en/latest/how-to/docker.html"
ROCM_GPUS = "https://rocm.docs.amd.com/projects/install-on-linux/en/latest/reference/system-requirements.html"


@dataclass(frozen=True)
class Diagnosis:
    category: str
    title: str
    cause: str
    fix: list[str] = field(default_factory=list)
    source: str = ""
    matched: str = ""  # the line of the input that decided it ("" for unknown)


@dataclass(frozen=True)
class Rule:
    category: str
    patterns: tuple[str, ...]  # case-insensitive regular expressions, searched anywhere in the text
    title: str
    cause: str
    fix: tuple[str, ...]
    source: str


# Ordered: root causes first. The first rule with a match anywhere in the text wins.
RULES = (
    Rule(
        "illegal_instruction",
        (r"illegal instruction", r"SIGILL"),
        "A binary uses instructions this CPU or GPU does not have",
        "torch (or an extension) was built for a newer CPU (e.g. AVX) or for a GPU target this card lacks.",
        (
            "Check the CPU flags: grep -o -w 'avx2\\|avx512f' /proc/cpuinfo | sort -u",
            "Install a wheel built for this machine (PyTorch's own index), not a third-party build",
            "On a consumer GPU with HSA_OVERRIDE_GFX_VERSION set: unset it and use a build that lists the GPU",
        ),
        ROCM_GPUS,
    ),
    Rule(
        "wrong_wheel",
        (
            r"Torch not compiled with CUDA enabled",
            r"torch\.version\.hip is None",
            r"Found no NVIDIA driver",
            r"libcudart\.so[.\d]*: cannot open",
        ),
        "This torch is a CPU or CUDA build, not a ROCm build",
        "The installed wheel has no ROCm support (torch.version.hip is None), so it cannot use an AMD GPU. "
        "`pip install torch` from PyPI installs a CUDA build; inside a rocm/pytorch image it replaces the image's own.",
        (
            'python -c "import torch; print(torch.__version__, torch.version.hip)"',
            "In a rocm/pytorch container: start a fresh container from the image (never `pip install torch` in it; "
            "install other packages with a constraints file that pins its torch)",
            f"On bare metal: pip install torch torchvision --index-url {ROCM_WHEEL_INDEX}",
        ),
        ROCM_INSTALL,
    ),
    Rule(
        "arch_not_supported",
        (
            r"hipErrorNoBinaryForGpu",
            r"Unable to find code object for all current devices",
            r"invalid device function",
            r"hipErrorInvalidDeviceFunction",
            r"HSA_OVERRIDE_GFX_VERSION",
        ),
        "The torch build has no GPU code for this GPU's architecture (gfx target)",
        "Kernels are compiled per gfx target; this GPU's target is not in the build "
        "(or HSA_OVERRIDE_GFX_VERSION points at the wrong one).",
        (
            'python -c "import torch; print(torch.cuda.get_arch_list())"  # targets in the build',
            "rocminfo | grep -m1 -o 'gfx[0-9a-f]*'  # the GPU's target",
            "Install a build that lists the target; for your own extensions set PYTORCH_ROCM_ARCH=<gfx target>",
            "HSA_OVERRIDE_GFX_VERSION (e.g. 11.0.0) only as a last resort on consumer GPUs; unset it on Instinct GPUs",
        ),
        ROCM_GPUS,
    ),
    Rule(
        "device_permissions",
        (
            r"No HIP GPUs are available",
            r"Unable to open /dev/kfd",
            r"/dev/(kfd|dri)\S*.*(Permission denied|No such file)",
            r"hipErrorNoDevice",
            r"no ROCm-capable device is detected",
        ),
        "The ROCm runtime sees no usable GPU",
        "/dev/kfd or /dev/dri is not passed into the container, the user is not in the render/video groups, "
        "or the GPU is not supported by this ROCm.",
        (
            "ls -l /dev/kfd /dev/dri; id   # devices present? user in render and video?",
            f"docker run {DOCKER_GPU_FLAGS} ...",
            "sudo usermod -aG render,video $USER   # then log in again",
            "python -m helpers.doctor",
        ),
        ROCM_DOCKER,
    ),
    Rule(
        "out_of_memory",
        (r"out of memory", r"OutOfMemoryError", r"hipErrorOutOfMemory"),
        "The GPU ran out of memory",
        "The model, activations and optimizer state do not fit in free device memory at this batch size.",
        (
            "Reduce the batch size; use bf16 autocast (lesson 02) or activation checkpointing",
            "export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True   # fragmentation (read on ROCm too)",
            "amd-smi monitor (or rocm-smi): is another process holding memory?",
            "torch.cuda.empty_cache() only between phases, not inside the training loop",
        ),
        "https://pytorch.org/docs/stable/notes/cuda.html#memory-management",
    ),
    Rule(
        "distributed_backend",
        (
            r"Invalid backend",
            r"Unknown backend type",
            r"backend[=\s:'\"]+rccl",
            r"\bHCCL",
            r"NCCL (error|WARN)",
            r"ncclSystemError|ncclInternalError|ncclUnhandledCudaError|ncclInvalidUsage",
            r"ProcessGroupNCCL",
            r"Watchdog caught collective operation timeout",
            r"DistBackendError",
        ),
        "A torch.distributed backend error (NCCL, which is RCCL on ROCm)",
        'On ROCm the backend is still called "nccl" and is RCCL; there is no "rccl" backend, and HCCL is '
        "Huawei Ascend's library. RCCL reads the NCCL_* variables.",
        (
            'dist.init_process_group(backend="nccl")   # RCCL on ROCm; "gloo" on CPU',
            "NCCL_DEBUG=INFO torchrun ...   # RCCL logs its transport and topology",
            "NCCL_SOCKET_IFNAME=<interface> for multi-node; TORCH_NCCL_ASYNC_ERROR_HANDLING=1 to fail instead of hang",
        ),
        "https://pytorch.org/docs/stable/distributed.html",
    ),
    Rule(
        "dtype_unsupported",
        (
            r"not implemented for '(BFloat16|Half|Float8\w*)'",
            r"float8_e4m3fn\b",
            r"e4m3fnuz|e5m2fnuz",
            r"(unsupported|not supported).{0,40}(bfloat16|float16|half|fp8|float8)",
            r"(bfloat16|float16|fp8|float8).{0,40}(unsupported|not supported)",
        ),
        "This dtype is not supported for this op on this device",
        "Not every op has a bfloat16/float16/fp8 kernel on every device. fp8: MI300 (gfx942) implements the "
        "FNUZ variants (float8_e4m3fnuz), not the OCP float8_e4m3fn that NVIDIA Hopper uses.",
        (
            "Probe what runs: helpers.precision.probe_dtypes(device) (lesson 02)",
            "Use autocast instead of casting the model; fall back to float32 on the CPU",
            "fp8 on MI300: torch.float8_e4m3fnuz / torch.float8_e5m2fnuz",
        ),
        "https://rocm.docs.amd.com/en/latest/reference/precision-support.html",
    ),
    Rule(
        "attention_kernel",
        (
            r"No available kernel\. Aborting execution",
            r"No viable backend for scaled_dot_product_attention",
            r"(Flash|Mem Efficient) attention was not compiled for current AMD GPU architecture",
            r"attention on Current AMD GPU is still experimental",
            r"Torch was not compiled with (flash|memory efficient) attention",
            r"FlashAttention only supports Ampere GPUs or newer",
            r"(FlashAttention|CK)( forward| backward)? only supports head dimension at most",
            r"No operator found for `memory_efficient_attention_(forward|backward)`",
            r"xFormers wasn't build with CUDA support",
        ),
        "An attention kernel refused this GPU, dtype or shape",
        "Fused attention kernels (flash-attn, xformers, SDPA's flash and memory-efficient backends) exist only for "
        "some GPU architectures, dtypes (fp16/bf16) and head sizes. On ROCm, PyTorch's come from AOTriton, built "
        "for a list of gfx targets; flash-attn and xformers need their ROCm builds.",
        (
            "Call torch.nn.functional.scaled_dot_product_attention without forcing a backend: it picks one that runs "
            "here, down to the math kernel (lesson 08)",
            "Check q, k, v: (B, H, S, D) for SDPA, one dtype (fp16/bf16 for the fused kernels), head dim <= 256",
            "GPUs PyTorch marks experimental (torch 2.14: gfx1101, gfx1102, gfx1150, gfx1151, gfx1200): "
            "export TORCH_ROCM_AOTRITON_ENABLE_EXPERIMENTAL=1",
        ),
        "https://pytorch.org/docs/stable/generated/torch.nn.functional.scaled_dot_product_attention.html",
    ),
    Rule(
        "missing_extension",
        (
            r"No module named '(apex|bitsandbytes|flash_attn|xformers|cupy|pycuda|tensorrt|triton)",
            r"No module named '(flash_attn_2_cuda|fused_layer_norm_cuda|amp_C|fused_adam_cuda)'",
            r"requires cuda extensions",
            r"no kernel image is available",
            r"CUDA_HOME environment variable is not set",
            r"nvcc(: not found| not found|: command not found)",
            r"undefined symbol: .*cuda",
            r"(CUDA|ROCm) Setup failed despite",
            r"libbitsandbytes_\w+\.so",
            r"bitsandbytes was compiled without GPU support",
            r"bitsandbytes native library functionality",
            r"NVML Shared Library Not Found",
        ),
        "A CUDA-only extension or kernel is missing on this machine",
        "The package or kernel was built for NVIDIA GPUs only (or for other GPU targets).",
        (
            "PyTorch's own equivalent: F.scaled_dot_product_attention (flash-attn, xformers), torch.amp (apex.amp), "
            "torch.optim.AdamW(fused=True) (FusedAdam), nn.LayerNorm/nn.RMSNorm; amdsmi for pynvml (lesson 08)",
            "or the ROCm build of the package (flash-attention, bitsandbytes >= 0.49, xformers, ROCm/apex)",
            "Rebuild your own .cu extensions with torch.utils.cpp_extension: it hipifies them on ROCm (lesson 05)",
        ),
        "https://pytorch.org/docs/stable/cpp_extension.html",
    ),
    Rule(
        "device_mismatch",
        (
            r"Expected all tensors to be on the same device",
            r"Attempting to deserialize object on (a )?CUDA device",
            r"Input type \(.*\) and weight type \(.*\) should be the same",
            r"Expected (object of )?device type",
            r"is not on the expected device",
            r"Placeholder storage has not been allocated on MPS device",
            r"is on \S+ but expected (it )?(to be )?on",
        ),
        "Tensors (or a checkpoint) on different devices",
        "Part of the computation is on the GPU and part on the CPU, or a checkpoint saved on a GPU is loaded "
        "where that GPU does not exist. On ROCm the GPU still prints as cuda:N.",
        (
            "Move the model and every input with .to(device); create tensors with device=device",
            "torch.load(path, map_location=device)",
        ),
        "https://pytorch.org/docs/stable/generated/torch.load.html",
    ),
    Rule(
        "miopen_kdb",
        (r"Missing system database file",),
        "MIOpen's precompiled kernel database for this GPU target is not installed",
        "MIOpen ships a kernel database (.kdb) per GPU target in a separate package. Without it, MIOpen compiles the "
        "kernels it needs at first use: the first run of each shape is slower, results are the same.",
        (
            "apt-get install miopen-hip-<target>kdb   # e.g. miopen-hip-gfx942kdb for MI300X (rocminfo | grep gfx)",
            "or ignore it: only start-up time is affected, and the compiled kernels are cached in ~/.cache/miopen",
        ),
        "https://rocm.docs.amd.com/projects/MIOpen/en/latest/install/install.html",
    ),
    Rule(
        "miopen",
        (r"MIOpen", r"miopenStatus", r"MIOPEN_"),
        "MIOpen (ROCm's cuDNN) failed or is slow",
        "MIOpen searches convolution kernels per shape and caches them; a search can be slow, a cache "
        "directory unwritable, or a kernel missing for this target.",
        (
            "export MIOPEN_FIND_MODE=FAST   # skip the long first-run search",
            "export MIOPEN_USER_DB_PATH=/tmp/miopen-$USER   # a writable cache directory",
            "torch.backends.cudnn.benchmark = False (the default): True triggers exhaustive searches per shape",
        ),
        "https://rocm.docs.amd.com/projects/MIOpen/en/latest/",
    ),
)

UNKNOWN = Diagnosis(
    "unknown",
    "Not a known ROCm porting error",
    "None of the known patterns matched.",
    [
        "python -m helpers.doctor   # is the machine set up?",
        "AMD_SERIALIZE_KERNEL=3 python your_script.py   # synchronous launches: the error points at its real line",
        "Search the exact message in the ROCm and PyTorch issue trackers",
    ],
    HIP_DOCS,
)


def _text(error) -> str:
    if isinstance(error, BaseException):
        return "".join(traceback.format_exception(type(error), error, error.__traceback__))
    if isinstance(error, bytes):
        return error.decode("utf-8", "replace")
    return str(error)


def diagnose(error) -> Diagnosis:
    """Classify an exception or an error text; never raises."""
    try:
        text = _text(error)
    except Exception:  # an exception whose __str__ fails, for instance
        return UNKNOWN
    for rule in RULES:
        for pattern in rule.patterns:
            m = re.search(pattern, text, re.IGNORECASE)
            if m:
                start = text.rfind("\n", 0, m.start()) + 1
                end = text.find("\n", m.end())
                line = text[start : end if end != -1 else len(text)].strip()[:300]
                return Diagnosis(rule.category, rule.title, rule.cause, list(rule.fix), rule.source, line)
    return UNKNOWN


def format_diagnosis(d: Diagnosis) -> str:
    lines = [f"[{d.category}] {d.title}"]
    if d.matched:
        lines.append(f"  matched: {d.matched}")
    lines.append(f"  cause:   {d.cause}")
    lines.append("  fix:")
    lines += [f"    {i}. {step}" for i, step in enumerate(d.fix, 1)]
    lines.append(f"  source:  {d.source}")
    return "\n".join(lines)


def install() -> bool:
    """In IPython/Jupyter: print the diagnosis under every traceback. Returns False outside IPython."""
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    ip = get_ipython()
    if ip is None:
        return False

    def handler(shell, etype, value, tb, tb_offset=None):
        shell.showtraceback((etype, value, tb), tb_offset=tb_offset)
        d = diagnose(value)
        if d.category != "unknown":
            print("\nhelpers.diagnose:\n" + format_diagnosis(d))

    ip.set_custom_exc((Exception,), handler)
    return True


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m helpers.diagnose", description="Explain a PyTorch/ROCm error.")
    ap.add_argument("file", nargs="?", default="-", help="file holding the error or log (default: stdin)")
    ap.add_argument("--json", action="store_true", help="print the diagnosis as JSON")
    a = ap.parse_args(argv)
    try:
        if a.file == "-":
            text = sys.stdin.buffer.read()
        else:
            with open(a.file, "rb") as f:
                text = f.read()
    except OSError as e:
        print(f"error: cannot read {a.file}: {e.strerror}", file=sys.stderr)
        return 2
    d = diagnose(text)
    print(json.dumps(asdict(d), indent=2) if a.json else format_diagnosis(d))
    return 0


if __name__ == "__main__":
    sys.exit(main())
