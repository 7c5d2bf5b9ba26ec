"""PC102-PC114: PyTorch and environment APIs that are deprecated, misleading or absent on ROCm (Python code)."""

from __future__ import annotations

import ast
import re

from ..model import Rule
from ..pyast import dotted

RULES = [
    Rule("PC102", "warning", "torch.cuda.amp still works (with a FutureWarning), on ROCm too",
         "torch.cuda.amp is deprecated and ties the code to 'cuda'",
         "torch.autocast(device.type, dtype=...) and torch.amp.GradScaler(device.type)",
         "scaler = torch.cuda.amp.GradScaler()"),
    Rule("PC103", "warning", "runs; the scaler does nothing useful for bf16",
         "GradScaler used alongside bfloat16 autocast: bf16 needs no scaler",
         "torch.amp.GradScaler(device.type, enabled=(dtype == torch.float16))",
         "with torch.autocast('cuda', dtype=torch.bfloat16):\n    loss = model(x)\n"
         "scaler = torch.amp.GradScaler('cuda')"),
    Rule("PC104", "warning", "fails only where the checkpoint's device is missing (often a CPU checkpoint: fine)",
         "torch.load without map_location: GPU checkpoints fail to load on other machines",
         "torch.load(path, map_location=device)", "state = torch.load('model.pt')"),
    Rule("PC105", "warning", "runs, but answers True on ROCm whatever the GPU can do",
         "torch.cuda.is_bf16_supported() is True unconditionally on ROCm: not a hardware check",
         "run a tiny bf16 op on the device and catch the error (helpers.precision.probe_dtypes)",
         "use_bf16 = torch.cuda.is_bf16_supported()"),
    Rule("PC106", "warning", "None on ROCm: the test takes the wrong branch (parsed as a version, it raises)",
         "torch.version.cuda used as the GPU test: it is None on ROCm builds",
         "torch.cuda.is_available() (any GPU) or torch.version.hip (AMD)",
         "if torch.version.cuda:\n    model = model.cuda()"),
    Rule("PC107", "warning", "runs, but compares gfx numbers with NVIDIA compute capabilities",
         "get_device_capability() compared as a tensor-core test: AMD reports gfx numbers",
         "probe the dtype you need, or check torch.version.hip / gcnArchName",
         "fast = torch.cuda.get_device_capability() >= (8, 0)"),
    Rule("PC108", "warning", "runs; MIOpen then searches every new input shape (slow first steps)",
         "cudnn.benchmark = True: MIOpen searches exhaustively per input shape on ROCm",
         "leave it False (the default), or set MIOPEN_FIND_MODE=FAST and measure",
         "torch.backends.cudnn.benchmark = True"),
    Rule("PC109", "error", "init_process_group raises: torch has no such backend",
         "there is no 'rccl' backend, and HCCL is Huawei Ascend's library (and Intel Gaudi's)",
         "init_process_group(backend='nccl') (RCCL on ROCm); configure RCCL with NCCL_* variables",
         "dist.init_process_group(backend='rccl')"),
    Rule("PC110", "warning", "MI300 (gfx942) computes fp8 in the fnuz variants only; gfx950 adds OCP fp8",
         "float8_e4m3fn/e5m2 are OCP fp8: MI300 (gfx942) implements the fnuz variants",
         "pick torch.float8_e4m3fnuz on gfx942 (check torch.version.hip and the arch)",
         "w8 = w.to(torch.float8_e4m3fn)"),
    Rule("PC111", "info", "HIP honours CUDA_VISIBLE_DEVICES too",
         "CUDA_VISIBLE_DEVICES only: HIP honours it, but HIP_VISIBLE_DEVICES is the ROCm name",
         "document HIP_VISIBLE_DEVICES (or ROCR_VISIBLE_DEVICES) for AMD users",
         "os.environ['CUDA_VISIBLE_DEVICES'] = '0'"),
    Rule("PC112", "warning", "the command or library is missing on an AMD machine: the call fails, torch does not",
         "nvidia-smi / pynvml exist only on NVIDIA machines",
         "torch.cuda.mem_get_info() / torch.cuda APIs, or amd-smi (rocm-smi) on AMD",
         "subprocess.run(['nvidia-smi', '-L'])"),
    Rule("PC113", "warning", "each has a ROCm option, or a torch replacement: the message names it",
         "CUDA-only package", "see the message for its ROCm option", "import cupy"),
    Rule("PC114", "warning", "runs; ROCm ignores the variable, so the tuning it meant is lost",
         "CUDA-only tuning variable: ROCm ignores it",
         "set the ROCm counterpart in the message too (lesson 07)", "os.environ['CUDA_LAUNCH_BLOCKING'] = '1'"),
]  # fmt: skip

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
CUDA_ONLY_PACKAGES = {
    "cupy": "CuPy's ROCm support is experimental: AMD's amd-cupy wheels (pypi.amd.com) or a source build with "
    "CUPY_INSTALL_USE_HIP=1 (PyPI's cupy-rocm-* wheels stop at 13.3); or torch tensors",
    "pycuda": "no ROCm version: use torch.utils.cpp_extension or HIP Python",
    "tensorrt": "MIGraphX (or torch.compile / ONNX Runtime with the MIGraphX provider)",
    "pynvml": "amdsmi (the amd-smi Python API), or torch.cuda.mem_get_info()",
}
VERSION_PARSERS = {"parse", "Version", "LooseVersion", "StrictVersion", "parse_version", "int", "float"}


def _in_test(m, target) -> bool:
    """torch.version.cuda in an if/while/assert test or a comparison."""
    for n in m.nodes:
        if isinstance(n, ast.If | ast.IfExp | ast.While | ast.Assert) and any(c is target for c in ast.walk(n.test)):
            return True
        if isinstance(n, ast.Compare | ast.BoolOp) and any(c is target for c in ast.walk(n)):
            return True
    return False


def _parsed(m, target) -> bool:
    """torch.version.cuda parsed (parse(...), int(...)) or split, outside a branch that tests the build."""
    build_test = re.compile(r"version\.|hip|rocm|CUDA_HOME", re.I)
    for n in m.nodes:
        if isinstance(n, ast.If | ast.IfExp) and build_test.search(ast.unparse(n.test)):
            if any(c is target for c in ast.walk(n)):
                return False
    return any(isinstance(n, ast.Call) and (
        (any(a is target for a in n.args) and dotted(n.func).rpartition(".")[2] in VERSION_PARSERS)
        or (isinstance(n.func, ast.Attribute) and n.func.value is target)) for n in m.nodes)  # fmt: skip


def _attribute(m, node) -> None:
    name = dotted(node)
    if name in ("torch.cuda.amp.autocast", "torch.cuda.amp.GradScaler"):
        m.add(node, "PC102", f": {name}")
    elif name == "torch.cuda.is_bf16_supported":
        m.add(node, "PC105")
    elif name == "torch.version.cuda" and _in_test(m, node):
        m.add(node, "PC106")
    elif name == "torch.version.cuda" and _parsed(m, node):
        m.add(node, "PC106", ": here it is parsed as a version, which raises on ROCm")
    elif name in ("torch.float8_e4m3fn", "torch.float8_e5m2"):
        m.add(node, "PC110", f": {name}")


def _call(m, node: ast.Call) -> None:
    name = dotted(node.func)
    if name == "torch.load" and len(node.args) < 2 and not any(k.arg == "map_location" for k in node.keywords):
        m.add(node, "PC104")
    for arg in node.args[:1]:  # a command run: os.system("nvidia-smi -L"), subprocess.run(["nvidia-smi", ...])
        cmd = arg.elts[0] if isinstance(arg, ast.List | ast.Tuple) and arg.elts else arg
        if isinstance(cmd, ast.Constant) and str(cmd.value).split(" ", 1)[0] == "nvidia-smi":
            m.add(cmd, "PC112", ": nvidia-smi")
    backends = [k.value for k in node.keywords if k.arg in ("backend", "dist_backend")]
    backends += node.args[:1] if name.endswith("init_process_group") else []
    for b in backends:
        value = str(b.value).lower() if isinstance(b, ast.Constant) else ""
        if value == "rccl" or (value == "hccl" and not m.in_other_vendor_branch(b)):
            m.add(b, "PC109", f": backend={b.value!r}")


def _import(m, node) -> None:
    if isinstance(node, ast.ImportFrom) and node.module == "torch.cuda.amp":
        m.add(node, "PC102", ": from torch.cuda.amp import ...")
    names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
    for top in {n.split(".")[0] for n in names} & set(CUDA_ONLY_PACKAGES):
        if id(node) not in m.opt_in_imports:
            m.add(node, "PC112" if top == "pynvml" else "PC113", f": {top} -> {CUDA_ONLY_PACKAGES[top]}")


def _string(m, node) -> None:
    v = node.value
    if re.fullmatch(r"HCCL_[A-Z_]+", v) and not m.in_other_vendor_branch(node):
        m.add(node, "PC109", f": {v!r} (an HCCL variable: ROCm's RCCL reads NCCL_* ones)", "hccl_variable")
    elif v in CUDA_ONLY_VARS and not any(k in m.source for k in CUDA_ONLY_VARS[v][1]):
        m.add(node, "PC114", f": {v} -> {CUDA_ONLY_VARS[v][0]}")


def _assign(m, node) -> None:
    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
    if any(dotted(t).endswith("cudnn.benchmark") for t in targets) and (
            isinstance(node.value, ast.Constant) and node.value.value is True):  # fmt: skip
        m.add(node, "PC108")


def check(m) -> None:
    scalers, bf16 = [], False
    for node in m.nodes:
        if isinstance(node, ast.Call):
            _call(m, node)
            name = dotted(node.func)
            if name.endswith("GradScaler") and not any(k.arg == "enabled" for k in node.keywords):
                scalers.append(node)
            bf16 |= name.endswith("autocast") and any(
                k.arg == "dtype" and dotted(k.value).endswith("bfloat16") for k in node.keywords)  # fmt: skip
        elif isinstance(node, ast.Attribute):
            _attribute(m, node)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            _import(m, node)
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            _assign(m, node)
        elif isinstance(node, ast.Compare) and any(
            "get_device_capability" in dotted(getattr(o, "value", o)) for o in [node.left, *node.comparators]
        ):
            m.add(node, "PC107")  # fmt: skip
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            _string(m, node)
    for s in scalers if bf16 else []:
        m.add(s, "PC103")
    if "CUDA_VISIBLE_DEVICES" in m.source and "HIP_VISIBLE_DEVICES" not in m.source:
        first = next((n for n in m.nodes if isinstance(n, ast.Constant) and n.value == "CUDA_VISIBLE_DEVICES"), None)
        if first is not None:
            m.add(first, "PC111")
