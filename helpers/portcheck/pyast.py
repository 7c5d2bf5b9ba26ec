"""Small readers of Python syntax trees that several rules share."""

from __future__ import annotations

import ast
import re


def dotted(node) -> str:
    """torch.cuda.is_available -> "torch.cuda.is_available"; a call inside a chain keeps its "()"."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
    elif isinstance(node, ast.Call):
        parts.append(dotted(node.func) + "()")
    return ".".join(reversed(parts))


def is_cuda_str(node) -> bool:
    """ "cuda" or "cuda:N" as a string constant."""
    return isinstance(node, ast.Constant) and isinstance(node.value, str) and bool(
        re.fullmatch(r"cuda(:\d+)?", node.value))  # fmt: skip


def is_cpu(node) -> bool:
    """Is the expression a CPU device: "cpu", torch.device("cpu")?"""
    if isinstance(node, ast.Call) and dotted(node.func).split(".")[-1] == "device" and node.args:
        node = node.args[0]
    return isinstance(node, ast.Constant) and node.value == "cpu"


def modules(node) -> list[str]:
    """The modules an import statement names ("flash_attn", "xformers.ops", ...)."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    return [node.module] if isinstance(node, ast.ImportFrom) and node.module else []


def catches_import_error(handler: ast.ExceptHandler) -> bool:
    names = {dotted(t) for t in (handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type])}
    return handler.type is None or bool(names & {"ImportError", "ModuleNotFoundError", "Exception", "BaseException"})


def option(add_argument: ast.Call) -> tuple[str, str]:
    """parser.add_argument("-g", "--gpu-id", ...) -> ("--gpu-id", "gpu_id"): its longest flag and the attribute that
    holds its value (``dest=`` when given)."""
    flags = [a.value for a in add_argument.args if isinstance(a, ast.Constant) and str(a.value).startswith("-")]
    flag = max(flags, key=len, default="")
    dests = [k.value.value for k in add_argument.keywords if k.arg == "dest" and isinstance(k.value, ast.Constant)]
    return flag, dests[0] if dests else flag.lstrip("-").replace("-", "_")


def functions(nodes) -> list:
    return [n for n in nodes if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]
