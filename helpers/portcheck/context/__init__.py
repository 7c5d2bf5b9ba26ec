"""What one Python module's code tells the rules, computed once per file: its imports (and which are optional), its
guards, whether it is GPU code by design. Rules ask; none of them walks the module for these again."""

from __future__ import annotations

import ast
import os
import re

from ..pyast import catches_import_error, dotted, modules
from .guards import GUARD, Guards, fallbacks

KERNEL_LANGUAGES = {"triton", "tilelang"}  # Python packages that write GPU kernels (for NVIDIA and AMD GPUs)
# Python packages that run on a GPU only: TensorRT, PyCUDA and MS-AMP on NVIDIA's; Transformer Engine on NVIDIA's and
# AMD's (ROCm/TransformerEngine). A module that cannot import without one runs nowhere else.
GPU_ONLY_PACKAGES = {"tensorrt", "pycuda", "msamp", "transformer_engine"}
# Gaudi, Ascend, Intel, ...: a name or word (use_torch_npu, test_on_npu.py) or a package (torch_npu, habana_frameworks)
OTHER_VENDOR = re.compile(r"(?<![A-Za-z0-9])(hpu|npu|xpu|mlu|habana\w*|gaudi|ascend)(?![A-Za-z0-9])", re.I)


class PyModule:
    """One parsed module and what its rules need to know about it; ``add`` collects their findings."""

    def __init__(self, path: str, source: str, tree: ast.AST):
        self.path, self.source, self.tree = path, source, tree
        self.nodes = list(ast.walk(tree))  # walked once, read by every rule
        n_lines = len(source.splitlines())
        self.found: list[tuple] = []  # (line, col, rule, extra message, context)
        self.guards = Guards(tree, self.nodes, n_lines)
        self.scope = [0] * (n_lines + 2)  # line -> the first line of its function or class (0: none)
        for n in sorted((n for n in self.nodes if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)),
                        key=lambda n: (n.lineno, -n.end_lineno)):  # fmt: skip  # (outer first, inner overwrite)
            self.scope[n.lineno : n.end_lineno + 1] = [n.lineno] * (n.end_lineno + 1 - n.lineno)
        self.classes = {n.lineno: n.end_lineno for n in self.nodes if isinstance(n, ast.ClassDef)}
        self.fallback = fallbacks(self.nodes, self.guards.guard, self.key)
        self._imports()
        self.gpu_only = self._gpu_only()
        self.other_vendor = [(n.body[0].lineno, n.body[-1].end_lineno) for n in self.nodes
                             if isinstance(n, ast.If) and OTHER_VENDOR.search(ast.unparse(n.test))
                             and not re.search(r"!=|\bnot\b", ast.unparse(n.test))]  # fmt: skip

    def add(self, node, rule: str, extra: str = "", context: str | None = None) -> None:
        if rule == "PC101" and self.gpu_only:
            extra, context = f"{extra} (GPU-only by design: the module {self.gpu_only})", "gpu_only"
        self.found.append((node.lineno, node.col_offset + 1, rule, extra, context))

    def guarded(self, node) -> bool:
        return self.guards.guarded(node)

    def in_other_vendor_branch(self, node) -> bool:
        """Is ``node`` code for another vendor's accelerator: in a branch that tests for one (`if use_torch_npu:`),
        in a module that cannot run without its torch package (torch_npu), or whose file name says it is for one?"""
        other_import = any(OTHER_VENDOR.search(m) for m in self.required)
        return (
            other_import
            or bool(OTHER_VENDOR.search(os.path.basename(self.path)))
            or any(a <= node.lineno <= b for a, b in self.other_vendor)
        )

    def expand(self, name: str) -> str:
        """A dotted name with its import alias resolved: xops.memory_efficient_attention -> xformers.ops.(same)."""
        first, _, rest = name.partition(".")
        full = self.aliases.get(first, first)
        return f"{full}.{rest}" if rest else full

    def key(self, node) -> str:
        """A name's key in self.fallback: an attribute as written (self.x: with its class), a plain name with the
        function or class it is in ("device" is a common name)."""
        if isinstance(node, ast.Attribute) and not (isinstance(node.value, ast.Name) and node.value.id == "self"):
            return ast.unparse(node)
        if isinstance(node, ast.Attribute):
            cls = max((a for a, b in self.classes.items() if a <= node.lineno <= b), default=0)
            return f"{cls}:{ast.unparse(node)}"
        return f"{self.scope[node.lineno]}:{node.id}"

    def _imports(self) -> None:
        """Aliases, and the imports that are opt-in: with a fallback (try/except ImportError), in a branch, or lazy
        (in a function). Each on its own: one optional import of a package excuses no other import of it."""
        self.aliases: dict[str, str] = {}  # local name -> what it was imported as ("xops" -> "xformers.ops")
        opt_in: set[int] = set()
        for n in self.nodes:
            if isinstance(n, ast.Import):
                self.aliases.update({a.asname or a.name.split(".")[0]: a.name if a.asname else a.name.split(".")[0]
                                     for a in n.names})  # fmt: skip
            elif isinstance(n, ast.ImportFrom) and n.module:
                self.aliases.update({a.asname or a.name: f"{n.module}.{a.name}" for a in n.names})
            elif isinstance(n, ast.Try) and any(catches_import_error(h) for h in n.handlers):
                opt_in |= {id(stmt) for stmt in n.body if modules(stmt)}
            elif isinstance(n, ast.If):
                opt_in |= {id(sub) for stmt in n.body + n.orelse for sub in ast.walk(stmt) if modules(sub)}
            elif isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef):
                opt_in |= {id(sub) for sub in ast.walk(n) if modules(sub)}
        self.opt_in_imports = opt_in
        imported = [(id(n), m.split(".")[0]) for n in self.nodes for m in modules(n)]
        # packages this module only ever imports opt-in: their use is opt-in too
        self.optional = {top for i, top in imported if i in opt_in} - {top for i, top in imported if i not in opt_in}
        self.triton = any(top == "triton" for _, top in imported)
        self.required = {top for i, top in imported if i not in opt_in}  # the packages it cannot run without

    def _gpu_only(self) -> str:
        """Why the module is GPU code by design ("" when it is not): it imports a GPU-only library at its top; or it
        never tests for a GPU and times the GPU (a kernel benchmark, an autotuner) or imports a GPU kernel language at
        its top (its kernels run on nothing else)."""
        top = [(n.lineno, m.split(".")[0]) for n in getattr(self.tree, "body", []) if not getattr(n, "level", 0)
               for m in modules(n)]  # fmt: skip
        gpu_lib = next(((line, m) for line, m in top if m in GPU_ONLY_PACKAGES), None)
        if gpu_lib:
            return f"imports {gpu_lib[1]}, which runs on a GPU only, at line {gpu_lib[0]}"
        if GUARD.search(self.source):
            return ""
        timers = sorted(n.lineno for n in self.nodes if isinstance(n, ast.Call)
                        and dotted(n.func).endswith(("cuda.synchronize", "cuda.Event")))  # fmt: skip
        kernels = [line for line, m in top if m in KERNEL_LANGUAGES]
        why = (f"times the GPU at line {timers[0]}" if timers
               else f"imports a GPU kernel language at line {kernels[0]}" if kernels else "")  # fmt: skip
        return f"{why}, never tests for a GPU" if why else ""
