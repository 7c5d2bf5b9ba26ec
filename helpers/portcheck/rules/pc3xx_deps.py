"""PC301-PC307: dependencies built for CUDA, NVIDIA-only Triton code, and install lines for packages that do not
exist. Each names the PyTorch replacement (lesson 08)."""

from __future__ import annotations

import ast
import os
import re

from ..model import Rule
from ..pyast import dotted

RULES = [
    Rule("PC301", "warning", "flash-attn 2 and 3 build for ROCm (composable_kernel and Triton backends): the import "
         "works where that build is installed and fails where a CUDA wheel is",
         "flash-attn is a compiled extension: on ROCm it needs flash-attn's ROCm build",
         "F.scaled_dot_product_attention on (B, H, S, D): transpose flash-attn's (B, S, H, D) in and out; fewer "
         "key/value heads than query heads (GQA): enable_gqa=True (torch >= 2.5); causal with fewer queries than keys "
         "(decoding, chunked prefill): flash-attn aligns the mask bottom-right and is_causal top-left, so pass "
         "attn_mask=causal_lower_right(q_len, k_len) from torch.nn.attention.bias (lesson 08)",
         "from flash_attn import flash_attn_func"),
    Rule("PC302", "warning", "xformers has ROCm wheels (experimental; download.pytorch.org/whl/rocmX.Y): the import "
         "works where one is installed and fails where a CUDA wheel is",
         "xformers ops need an xformers build for this GPU",
         "F.scaled_dot_product_attention(attn_mask=bias) on (B, H, S, D), transposed from xformers' (B, M, H, K) "
         "(lesson 08)", "import xformers.ops as xops"),
    Rule("PC303", "warning", "NVIDIA's apex builds no ROCm extensions; AMD's fork (ROCm/apex, shipped in the "
         "rocm/pytorch images) does: the import works where it is installed and fails where NVIDIA's build is",
         "NVIDIA apex: CUDA extensions (and apex.amp, removed from NVIDIA apex in 2025); on ROCm AMD's fork",
         "torch.amp, torch.optim.AdamW(fused=True), nn.LayerNorm / nn.RMSNorm, torch DDP (lesson 08)",
         "from apex.optimizers import FusedAdam"),
    Rule("PC304", "warning", "bitsandbytes 0.49+ ships ROCm wheels: it runs where the GPU is one of theirs",
         "bitsandbytes runs on ROCm from 0.49 on (PyPI wheels for CDNA gfx90a/gfx942/gfx950 and RDNA 3/4): older "
         "releases and other GPUs need their own build",
         "bitsandbytes>=0.49 and `python -m bitsandbytes` on the GPU, or torch.optim.AdamW (4x the optimizer-state "
         "memory) (lesson 08)", "import bitsandbytes as bnb"),
    Rule("PC305", "error", "the kernel does not compile for an AMD GPU",
         "NVIDIA-only code in a Triton kernel",
         "plain tl operations; triton.language.extra.libdevice picks the CUDA or HIP library (lesson 08)",
         "from triton.language.extra.cuda import libdevice\ny = libdevice.rsqrt(x)"),
    Rule("PC306", "warning", "Triton picks the wavefront itself; only the arithmetic around num_warps is off",
         "warp size 32 hard-coded next to Triton code: CDNA wavefronts have 64 lanes",
         "triton.runtime.driver.active.get_current_target().warp_size",
         "import triton\nWARP_SIZE = 32"),
    Rule("PC307", "error", "pip (conda) stops: there is no such distribution",
         "there is no pytorch-rocm or torch-rocm package: pip finds no such distribution",
         "pip install torch --index-url https://download.pytorch.org/whl/rocmX.Y (or AMD's index, or the "
         "rocm/pytorch image: lesson 00, section 3)", "pip install pytorch-rocm"),
    Rule("PC308", "error", "no ROCm build ships it: FA4 (flash_attn.cute, on NVIDIA's CuTe DSL) is CUDA-only, as "
         "are flash-attn's fused LayerNorm extension and xformers' 2:4 sparsity ops; flash-attn 1's "
         "flash_attn.flash_attention is gone from flash-attn 2",
         "a module that no ROCm build provides",
         "F.scaled_dot_product_attention (or flash-attn 2's flash_attn_func from its ROCm build) for FA4; "
         "torch.nn.LayerNorm or torch.nn.RMSNorm for the fused norms; dense weights for 2:4 sparsity (lesson 08)",
         "from flash_attn.cute import flash_attn_func"),
]  # fmt: skip
# Modules (and their submodules) that no ROCm build provides: PC308 instead of their package's rule.
# (Not NVIDIA's CuTe DSL, `cutlass`: like Triton, a kernel language; its modules are kernels a caller dispatches to.)
NO_ROCM_BUILD = ("flash_attn.cute", "dropout_layer_norm", "flash_attn.ops.layer_norm", "flash_attn.ops.rms_norm",
                 "xformers.ops.sp24", "flash_attn.flash_attention")  # fmt: skip

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
# An install line for a PyTorch package that does not exist (the seed of many porting guides' errors)
NO_SUCH_PACKAGE = re.compile(
    r"\b(?:pip3?|conda|mamba)\b[^#\n]*\binstall\b[^#\n]*?(?<![\w.-])(pytorch-rocm|torch-rocm)(?![\w.-])"
)


def inside_package(path: str, package: str) -> bool:
    """Is this file part of a checkout of ``package``'s own project (a copy of apex that a project ships, with its
    setup.py: apex/tests/...)? Its own code importing it is no dependency on it. (A folder merely named apex, such as a
    project's own integrations/apex/, is not one.)"""
    names = {package, package.replace("_", "-"), {"flash_attn": "flash-attention"}.get(package, package)}
    folder = os.path.dirname(os.path.abspath(path))
    while os.path.basename(folder):  # (apex/apex/parallel/...: the outer apex/ holds setup.py)
        if os.path.basename(folder) in names and any(
                os.path.isfile(os.path.join(folder, f)) for f in ("setup.py", "pyproject.toml")):  # fmt: skip
            return True
        folder = os.path.dirname(folder)
    return False


def _no_rocm_build(name: str) -> bool:
    return any(name == x or name.startswith(x + ".") for x in NO_ROCM_BUILD)


def _nvidia_libdevice(m, node, module: str) -> None:
    """An import of Triton's NVIDIA libdevice. Every Triton wheel ships both backends' language modules, so the import
    works on ROCm; a kernel that calls it does not compile for an AMD GPU. Imported but never used: a warning. (A
    plain `import triton.language.extra.cuda` binds `triton`: its use is reported where it is written.)"""
    if isinstance(node, ast.Import) and not any(a.asname for a in node.names):
        return
    bound = {a.asname or a.name for a in node.names}
    exported = {
        e.value
        for n in m.nodes
        if isinstance(n, ast.Assign)
        and "__all__" in map(dotted, n.targets)
        and isinstance(n.value, ast.List | ast.Tuple)
        for e in n.value.elts
        if isinstance(e, ast.Constant)
    }
    if "*" in bound or bound & exported or any(isinstance(n, ast.Name) and n.id in bound for n in m.nodes):
        m.add(node, "PC305", f": {module} is the NVIDIA backend's libdevice")
    else:
        unused = ", imported but not used here (the import works on ROCm: Triton wheels ship both backends)"
        m.add(node, "PC305", f": {module} is the NVIDIA backend's libdevice{unused}", "unused_import")


def _import(m, node) -> None:
    if id(node) in m.opt_in_imports:
        return  # an optional import with a fallback: fine on every machine
    names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
    if isinstance(node, ast.ImportFrom) and node.module:  # (from xformers.ops import sp24)
        names += [f"{node.module}.{a.name}" for a in node.names]
    if cuda_only := next(filter(_no_rocm_build, names), None):
        if not inside_package(m.path, cuda_only.split(".")[0]):
            m.add(node, "PC308", f": import {cuda_only}")
        return
    for name in names if isinstance(node, ast.Import) else names[:1]:
        top = name.split(".")[0]
        if top in DEPENDENCIES and not inside_package(m.path, top):
            m.add(node, DEPENDENCIES[top][0], f": import {name}")
        elif name.startswith("triton.language.extra.cuda"):
            _nvidia_libdevice(m, node, name)


def _call(m, node: ast.Call) -> None:
    full = m.expand(dotted(node.func))
    top, last = full.split(".")[0], full.split(".")[-1]
    if top in DEPENDENCIES and top not in m.optional and last in DEPENDENCIES[top][1] and not inside_package(
            m.path, top):  # fmt: skip
        rule = "PC308" if _no_rocm_build(full) else DEPENDENCIES[top][0]  # (FA4's flash_attn.cute.flash_attn_func)
        m.add(node, rule, f": {full}(...) -> {DEPENDENCIES[top][1][last]}")
    if m.triton and last == "inline_asm_elementwise":
        m.add(node, "PC305", ": inline assembly (PTX) in a Triton kernel does not compile for AMD GPUs")


def _triton_warp(m, node) -> None:
    if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) and node.value.value == 32:
        if any(re.search("warp", dotted(t), re.I) for t in node.targets):
            m.add(node, "PC306", f": {ast.unparse(node)[:60]}")
    elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
        sides = {ast.unparse(node.left), ast.unparse(node.right)}
        if "32" in sides and any("num_warps" in x for x in sides):
            m.add(node, "PC306", f": {ast.unparse(node)[:60]} threads")


def check(m) -> None:
    for node in m.nodes:
        if isinstance(node, ast.Import | ast.ImportFrom):
            _import(m, node)
        elif isinstance(node, ast.Call):
            _call(m, node)
        elif isinstance(node, ast.Attribute) and m.triton and m.expand(dotted(node)).endswith("language.extra.cuda"):
            m.add(node, "PC305", f": {dotted(node)} is the NVIDIA backend's libdevice")
        elif m.triton and isinstance(node, ast.Assign | ast.BinOp):
            _triton_warp(m, node)


def check_lines(path: str, lines: list[str], add) -> None:
    """PC307 in shell scripts, Makefiles and Dockerfiles: ``add(line, col, rule, extra)``."""
    for i, line in enumerate(lines, 1):
        fake = NO_SUCH_PACKAGE.search(line.split("#", 1)[0])
        if fake:
            add(i, fake.start(1) + 1, "PC307", f": {fake.group(1)}")
