"""What a scanned project tells about its files, read once per scan: which C++/CUDA folders its setup.py builds only
for CUDA (while building other sources for ROCm), and which headers its sources include."""

from __future__ import annotations

import ast
import os
import re
from collections import Counter

from .context.cpp import asm_constraints, cuda_arch_only, enclosing_function, rocm_excluded, without_block_comments

SOURCE = re.compile(r"[\w./-]+\.(?:cu|cuh|cpp|cc|cxx|c|h|hpp)")  # a C++/CUDA file named in setup.py
INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^>"]+)[>"]', re.M)
VENDORED = re.compile(r"third_?party|3rd_?party|vendor(ed)?|external|extern|dependencies", re.I)  # a folder's name
SHIM = re.compile(  # a definition, on one line: #define __shfl_xor_sync(...) or T __shfl_xor_sync(...) {
    r"^[ \t]*#[ \t]*define[ \t]+__\w+_sync\b"
    r"|^[^;#(=\n]*\b__(?:shfl\w*|ballot|any|all)_sync[ \t]*\([^;\n]*\)[ \t]*\{",  # (not `if (x = __shfl_sync(...)) {`)
    re.M,
)


def rocm_test(test: ast.expr) -> bool | None:
    """True when an ``if`` test holds only when building for ROCm (``IS_ROCM``, ``torch.version.hip is not None``,
    ``is_hip()``), False when only when not (``not IS_ROCM``, ``... and not IS_ROCM``), None when it says neither."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        r = rocm_test(test.operand)
        return None if r is None else not r
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        said = {rocm_test(v) for v in test.values} - {None}
        return said.pop() if len(said) == 1 else None
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Is | ast.IsNot):
        r = rocm_test(test.left) if isinstance(test.comparators[0], ast.Constant) else None
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
        rocm = rocm_test(node.test) if isinstance(node, ast.If) else None
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


def _live_code(text: str) -> str:
    """The code of a C++ file that a ROCm build compiles: without comments and the branches HIP never takes."""
    lines = without_block_comments(text).splitlines()
    dead = rocm_excluded(lines) | cuda_arch_only(lines)
    return "\n".join("" if i in dead else line.split("//", 1)[0] for i, line in enumerate(lines, 1))


class Project:
    """Facts gathered while the files of one scan are read: ``add_file`` for each, then ask."""

    def __init__(self):
        self.cuda_only: dict[str, str] = {}  # folder -> "setup.py:LINE" that builds it for CUDA only
        self.included: set[str] = set()  # the file names that some scanned source #includes
        self.cpp_files = 0
        self.vendored: set[str] = set()  # files inside a third-party folder of a scanned one
        self.shim = ""  # "file:line" of the project's own definition of a *_sync shuffle, if any
        self.cpp_text: dict[str, list[str]] = {}  # path -> lines, for the questions below
        self.names: Counter = Counter()  # how often each name is written before "(" or "<" in code HIP compiles

    def add_file(self, path: str, rel: str, data: bytes, kind: str | None) -> None:
        """``rel``: the file's path inside the folder scanned (folders above it never count)."""
        if any(VENDORED.fullmatch(d) for d in os.path.dirname(os.path.normpath(rel)).split(os.sep)):
            self.vendored.add(path)
        if kind == "cpp":
            self.cpp_files += 1
            text = data.decode("utf-8", "replace")
            self.included |= {os.path.basename(h) for h in INCLUDE.findall(text)}
            self.cpp_text[path] = text.splitlines()
            self.names.update(re.findall(r"\b(\w+)\s*[(<]", _live_code(text)))
            m = SHIM.search(text)
            self.shim = self.shim or (f"{path}:{text.count(chr(10), 0, m.start()) + 1}" if m else "")
        if os.path.basename(path) == "setup.py":
            try:
                folders = cuda_only_folders(path, ast.parse(data))
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                folders = {}  # reported as PC900
            self.cuda_only.update({d: f"{path}:{line}" for d, line in folders.items()})
            self.included |= {os.path.basename(s) for s in SOURCE.findall(data.decode("utf-8", "replace"))}

    def built_for_cuda_only(self, path: str) -> str | None:
        """The setup.py line that compiles this file's folder only for CUDA, or None."""
        folder = os.path.dirname(os.path.normpath(path))
        return next((w for d, w in self.cuda_only.items() if folder == d or folder.startswith(d + os.sep)), None)

    def unused_header(self, path: str) -> bool:
        """A header (.h, .cuh, .hpp, .inl) that no scanned source includes and no setup.py names, in a scan of several
        C++ files: no build compiles it."""
        header = path.endswith((".h", ".cuh", ".hpp", ".inl"))
        return header and self.cpp_files > 1 and os.path.basename(path) not in self.included

    def never_generated(self, path: str, line: int) -> str | None:
        """The function around the inline PTX on ``line`` when no scanned source calls it and the PTX has only "r"
        and "n" operands: HIP rejects "f", "h" and "l" operands as soon as it parses a function, "r" and "n" ones
        only where it generates code for it, which it never does for a function nobody calls."""
        lines = self.cpp_text.get(path)
        if not lines or not asm_constraints(lines, line) <= {"r", "n"}:
            return None
        name = enclosing_function(lines, line)
        return name if name and self.names[name] <= 1 else None

    def never_instantiated(self, path: str, line: int) -> str | None:
        """The function template around the *_sync call on ``line`` when no scanned source calls it: HIP's mask
        static_assert fires where the template is instantiated, which it never is."""
        lines = self.cpp_text.get(path)
        name = enclosing_function(lines, line, template=True) if lines else None
        return name if name and self.names[name] <= 1 else None
