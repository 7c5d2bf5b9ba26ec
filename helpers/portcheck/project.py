"""What a scanned project tells about its files, read once per scan: which C++/CUDA folders its setup.py builds only
for CUDA (while building other sources for ROCm), and which headers its sources include."""

from __future__ import annotations

import ast
import os
import re
from collections import Counter

from .context.cpp import (
    CUDA_ONLY_MACROS,
    INLINE_WORDS,
    ROCM_MACROS,
    asm_constraints,
    cuda_arch_only,
    enclosing_function,
    function_header,
    rocm_excluded,
    without_block_comments,
)

SOURCE = re.compile(r"[\w./-]+\.(?:cu|cuh|cpp|cc|cxx|c|h|hpp)")  # a C++/CUDA file named in setup.py
INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^>"]+)[>"]', re.M)
# #define NAME, and its value when it is one integer (`#define CC_TURING 750`, not `#define F(x)` or `#define N 2 * K`)
DEFINE = re.compile(r"^[ \t]*#[ \t]*define[ \t]+(\w+)(?:[ \t]+(\d+)[uUlL]*[ \t]*(?://.*)?$)?", re.M)
BUILD_DEFINE = re.compile(r"-D\s*(\w+)|compile_definitions\s*\(([^)]*)\)|add_definitions\s*\(([^)]*)\)")
ROCM_NAME = re.compile(r"(^|_)(rocm|hip)(_|$)", re.I)  # a name that says ROCm: IS_ROCM, is_hip, FAISS_ENABLE_ROCM
HEADER = (".h", ".cuh", ".hpp", ".inl")
VENDORED = re.compile(r"third_?party|3rd_?party|vendor(ed)?|external|extern|dependencies", re.I)  # a folder's name
SHIM = re.compile(  # a definition, on one line: #define __shfl_xor_sync(...) or T __shfl_xor_sync(...) {
    r"^[ \t]*#[ \t]*define[ \t]+__\w+_sync\b"
    r"|^[^;#(=\n]*\b__(?:shfl\w*|ballot|any|all)_sync[ \t]*\([^;\n]*\)[ \t]*\{",  # (not `if (x = __shfl_sync(...)) {`)
    re.M,
)


def _default(lines: list[str], line: int, name: str) -> bool:
    """Is the #define on ``line`` a default a build may override (`#ifndef SPEC_DEC` / `#define SPEC_DEC 0`, and a
    JIT compile passes -DSPEC_DEC=1)? Then it gives no value."""
    i = line - 2
    while i >= 0 and not lines[i].lstrip().startswith("#"):
        i -= 1
    return i >= 0 and bool(re.match(rf"\s*#\s*(ifndef\s+|if\s+!\s*defined\s*\(?\s*){name}\b", lines[i]))


def build_definitions(text: str) -> set[str]:
    """The macros a build file's text defines: -DNAME, add_definitions(...), (target_)compile_definitions(...)."""
    found = " ".join(g for m in BUILD_DEFINE.finditer(text) for g in m.groups() if g)
    return set(re.findall(r"(?:-D)?(\w+)", found))  # (add_definitions(-DUSE_AMD_ROCM): USE_AMD_ROCM)


def rocm_definitions(text: str) -> tuple[set[str], set[str]]:
    """The macros a CMake file defines inside an `if()` branch taken only when building for ROCm (its condition names
    ROCm or HIP, with no NOT or OR: faiss's `if(FAISS_ENABLE_ROCM)` / `add_definitions(-DUSE_AMD_ROCM)`), and the
    macros it defines elsewhere. One line at a time: a definition spread over lines counts for neither."""
    rocm, elsewhere, branches = set(), set(), []  # branches: the condition of each open if() (NOT: its else())
    for line in text.splitlines():
        code = line.split("#", 1)[0].strip()
        if m := re.match(r"(if|elseif|else|endif)\s*\((.*)", code, re.I):
            word = m[1].lower()
            if word == "if":
                branches.append(m[2])
            elif branches and word == "endif":
                branches.pop()
            elif branches:
                branches[-1] = m[2] if word == "elseif" else "NOT"
            continue
        names = build_definitions(code)
        on_rocm = any(any(map(ROCM_NAME.search, re.findall(r"\w+", c))) and not re.search(r"\b(NOT|OR)\b", c, re.I)
                      for c in branches)  # fmt: skip
        (rocm if on_rocm else elsewhere).update(names)
    return rocm, elsewhere


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
    return True if ROCM_NAME.search(name) else None


def cuda_only_folders(path: str, tree: ast.AST) -> dict[str, int]:
    """The folders of C++/CUDA sources a setup.py builds only when not building for ROCm, when it builds other sources
    for ROCm (flash-attention: csrc/flash_attn for CUDA, csrc/flash_attn_ck for ROCm), each with the line of its
    ``if``. A folder is left out when a source named anywhere else in the file (a ROCm branch, or code both builds
    run) is in it, above or below it; a bare file name (`"config.hpp"`, joined to a folder elsewhere) names no folder.
    A setup.py without ROCm sources gives nothing: it is no port yet."""
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
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and SOURCE.fullmatch(n.value) and "/" in n.value:
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


class Project:
    """Facts gathered while the files of one scan are read: ``add_file`` for each, then ask."""

    def __init__(self):
        self.cuda_only: dict[str, str] = {}  # folder -> "setup.py:LINE" that builds it for CUDA only
        self.included: set[str] = set()  # the file names that some scanned source #includes or a setup.py names
        self.hash_included: set[str] = set()  # the file names that some scanned source #includes
        self.cpp_files = 0
        self.vendored: set[str] = set()  # files inside a third-party folder of a scanned one
        self.shim = ""  # "file:line" of the project's own definition of a *_sync shuffle, if any
        self.cpp_text: dict[str, list[str]] = {}  # path -> lines (block comments blanked), for the questions below
        self.defines: dict[str, list[tuple[int, str, str | None]]] = {}  # path -> its #defines: (line, name, value)
        self.build_defines: set[str] = set()  # macros a build file defines (-DNAME, compile_definitions(NAME))
        self.rocm_defines: tuple[set, set] = (set(), set())  # CMake's, only in ROCm branches / elsewhere
        self._macros, self._rocm, self._values = None, ROCM_MACROS, {}  # (when first asked: all files read)
        self._dead, self._names, self._uses = {}, {}, {}

    def add_file(self, path: str, rel: str, data: bytes, kind: str | None) -> None:
        """``rel``: the file's path inside the folder scanned (folders above it never count)."""
        if any(VENDORED.fullmatch(d) for d in os.path.dirname(os.path.normpath(rel)).split(os.sep)):
            self.vendored.add(path)
        if kind == "cpp":
            self.cpp_files += 1
            text = data.decode("utf-8", "replace")
            self.hash_included |= {os.path.basename(h) for h in INCLUDE.findall(text)}
            self.included |= self.hash_included
            lines = self.cpp_text[path] = without_block_comments(text).splitlines()
            joined = "\n".join(lines)
            self.defines[path] = []
            for m in DEFINE.finditer(joined):
                n = joined.count("\n", 0, m.start()) + 1
                self.defines[path].append((n, m[1], None if _default(lines, n, m[1]) else m[2]))
            m = SHIM.search(text)
            self.shim = self.shim or (f"{path}:{text.count(chr(10), 0, m.start()) + 1}" if m else "")
        if kind == "build" or os.path.basename(path) == "setup.py":
            self.build_defines |= build_definitions(data.decode("utf-8", "replace"))
        if os.path.basename(path) == "CMakeLists.txt" or path.endswith(".cmake"):
            rocm, elsewhere = rocm_definitions(data.decode("utf-8", "replace"))
            self.rocm_defines[0].update(rocm)
            self.rocm_defines[1].update(elsewhere)
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
        return path.endswith(HEADER) and self.cpp_files > 1 and os.path.basename(path) not in self.included

    def macros(self) -> str:
        """CUDA_ONLY_MACROS and the project's own macros that HIP never defines: each #define of them sits in a branch
        HIP never compiles (KERUTILS_ENABLE_SM100A under `#if __CUDA_ARCH__ >= 1000`), and no build file defines them.
        Not the names reserved to the compiler (__CUDACC__, _OPENMP): a project that defines one only for an IDE's
        indexer (`#ifdef __CLION_IDE__`) does not stop the compiler from defining it. Set beside them: ``_values``, the
        project's own macros whose every #define HIP compiles gives one integer, read as that (`#define CC_TURING 750`;
        `#define ARCH_SM80 0` in the `#else` of `#if __CUDA_ARCH__ >= 800`), read twice so that a #define under `#if
        __CUDA_ARCH__ >= CC_TURING` counts as one HIP never compiles; ``_rocm``, ROCM_MACROS and the switches the
        project's CMake files define only for ROCm (rocm_definitions)."""
        if self._macros is None:
            switches = sorted(self.rocm_defines[0] - self.rocm_defines[1])  # the project's ROCm macros
            self._rocm = f"({'|'.join([ROCM_MACROS.strip('()'), *switches])})"
            values: dict[str, str] = {}
            for _ in range(2):
                live: dict[str, set] = {name: set() for sites in self.defines.values() for _, name, _ in sites}
                for path, sites in self.defines.items():
                    lines = self.cpp_text[path]
                    dead = rocm_excluded(lines, self._rocm) | cuda_arch_only(lines, values=values)
                    for line, name, value in sites:
                        live[name] |= set() if line in dead else {value}
                own = {m: v for m, v in live.items() if m not in self.build_defines and not re.match(r"_[_A-Z]", m)}
                values = {m: next(iter(v)) for m, v in own.items() if len(v) == 1 and None not in v}
            self._values = values
            self._macros = "|".join([CUDA_ONLY_MACROS, *sorted(m for m, v in own.items() if not v)])
        return self._macros

    def dead(self, path: str) -> set[int]:
        """The lines of a C++ file that a ROCm build never compiles, the project's own macros (``macros``) counted."""
        if path not in self._dead:
            lines = self.cpp_text.get(path, [])
            macros = self.macros()
            self._dead[path] = rocm_excluded(lines, self._rocm) | cuda_arch_only(lines, macros, self._values)
        return self._dead[path]

    def cuda_only_macro(self, path: str, line: int) -> bool:
        """Is ``line`` in a branch that only the project's own macros (``macros``) keep from HIP?"""
        return path in self.cpp_text and line in self.dead(path)

    def names(self, path: str) -> Counter:
        """How often each name is written before "(" or "<" in the code HIP compiles of ``path`` (or, for None, of
        every file): calls, and the definitions themselves."""
        if not self._names:
            self._count()
        return self._names[path]

    def macro_uses(self, path: str | None) -> Counter:
        """How often each #defined name is written in the code HIP compiles of ``path`` (None: every file), its
        #define included."""
        if not self._names:
            self._count()
        return self._uses[path]

    def _count(self) -> None:
        self._names[None], self._uses[None] = Counter(), Counter()
        names = {name for sites in self.defines.values() for _, name, _ in sites}
        for p, lines in self.cpp_text.items():
            dead = self.dead(p)
            code = "\n".join("" if i in dead else ln.split("//", 1)[0] for i, ln in enumerate(lines, 1))
            self._names[p] = Counter(re.findall(r"\b(\w+)\s*[(<]", code))
            self._uses[p] = Counter(w for w in re.findall(r"\b[A-Za-z_]\w*", code) if w in names)
            self._names[None].update(self._names[p])
            self._uses[None].update(self._uses[p])

    def _own_file(self, path: str) -> str | None:
        """``path`` when only its own code can use what it defines (a source file no other file #includes), else
        None (every file)."""
        return path if not path.endswith(HEADER) and os.path.basename(path) not in self.hash_included else None

    def unused_macro(self, path: str, line: int) -> str | None:
        """The macro whose #define holds ``line`` (`#define FULL_MASK 0xffffffff`, a `#define SHFL(v) ... \\` body),
        when no code HIP compiles uses it: a macro's text is compiled only where it is expanded."""
        lines = self.cpp_text.get(path) or []
        start = line
        while start > 1 and lines[start - 2].rstrip().endswith("\\"):
            start -= 1  # (the #define a continued line belongs to)
        m = re.match(r"\s*#\s*define\s+(\w+)", lines[start - 1]) if 0 < start <= len(lines) else None
        return m.group(1) if m and self.macro_uses(self._own_file(path))[m.group(1)] <= 1 else None

    def _uncalled(self, path: str, name: str, header: str) -> bool:
        """No code HIP compiles calls ``name`` (only its definition names it): in its own file when it is an inline or
        static function of a source file (no other file can call it), else in any file."""
        local = INLINE_WORDS.search(header) and self._own_file(path)
        return self.names(path if local else None)[name] <= 1

    def never_generated(self, path: str, line: int) -> str | None:
        """The function around the inline PTX on ``line`` when no scanned source calls it and the PTX has only "r"
        and "n" operands: HIP rejects "f", "h" and "l" operands as soon as it parses a function, "r" and "n" ones
        only where it generates code for it, which it never does for a function nobody calls."""
        lines = self.cpp_text.get(path)
        if not lines or not asm_constraints(lines, line) <= {"r", "n"}:
            return None
        found = function_header(lines, line)
        return found[0] if found and self._uncalled(path, *found) else None

    def never_instantiated(self, path: str, line: int) -> str | None:
        """The function template around the *_sync call on ``line`` when no scanned source calls it: HIP's mask
        static_assert fires where the template is instantiated, which it never is."""
        lines = self.cpp_text.get(path)
        name = enclosing_function(lines, line, template=True) if lines else None
        return name if name and self._uncalled(path, name, "") else None
