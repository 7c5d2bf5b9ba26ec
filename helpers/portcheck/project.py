"""What a scanned project tells about its files, read once per scan: which C++/CUDA files no ROCm build compiles
(context/build.py reads the build files), which headers its sources include, which lines HIP never compiles."""

from __future__ import annotations

import ast
import os
import re
from collections import Counter, defaultdict

from .context.build import (
    SOURCE,
    build_definitions,
    cmake_lines,
    cmake_sources,
    cuda_only_folders,
    rocm_definitions,
    runs_nvcc,
    setup_definitions,
    source_folders,
)
from .context.cpp import (
    CUDA_ONLY_MACROS,
    INLINE_WORDS,
    ROCM_MACROS,
    STATEMENT_WORDS,
    asm_constraints,
    cuda_arch_only,
    enclosing_function,
    function_header,
    rocm_excluded,
    without_block_comments,
)

INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^>"]+)[>"]', re.M)
ANGLED = re.compile(r"^\s*#\s*include\s*<([^>]+)>", re.M)
# #define NAME, and its value when it is one integer (`#define CC_TURING 750`, not `#define F(x)` or `#define N 2 * K`)
DEFINE = re.compile(r"^[ \t]*#[ \t]*define[ \t]+(\w+)(?:[ \t]+(\d+)[uUlL]*[ \t]*(?://.*)?$)?", re.M)
HEADER = (".h", ".cuh", ".hpp", ".inl")
# A name written as a declaration or definition: after a type or qualifier on its line (`void st_shared<4>(`,
# `DEVICE float* f(`), not after a statement word (`return f(`) nor as a product (`a * f(x)`).
DECLARED = re.compile(r"\b(\w+)(?:[ \t]+[*&]*|[*&]+[ \t]+)(\w+)\s*[(<]")
# (`x.template f<1>(` is a call; `template void f<1>(int);`, an explicit instantiation, generates f<1>; a macro's
# body is a use: `#define LANE_MASK lane_mask()`)
STATEMENT = STATEMENT_WORDS | {"template", "define"}
INSTANTIATION = re.compile(r"^[ \t]*template[ \t]+(?=\w).*", re.M)
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


class Project:
    """Facts gathered while the files of one scan are read: ``add_file`` for each, then ask."""

    def __init__(self):
        self.cuda_only: dict[str, str] = {}  # folder -> "setup.py:LINE" that builds it for CUDA only
        self.nvcc_setups: dict[str, str] = {}  # folder of a setup.py that runs nvcc, names no ROCm sources -> file:line
        self.setup_dirs: set[str] = set()
        self.rocm_builds: set[str] = set()  # the build files that build for ROCm (name sources, or a CMake branch)
        self.shared_folders: set[str] = set()  # folders of the sources a ROCm-building setup.py compiles there
        self.cmake_kinds: dict[str, set] = defaultdict(set)  # source -> the builds CMake files name it in
        self.includers: dict[str, set] = defaultdict(set)  # a file name -> the sources that #include it
        self.includes: dict[str, set] = {}  # a C++ file -> what it #includes, as written ("op/copy.h")
        self.angled: dict[str, set] = {}  # a C++ file -> what it #includes <so>, which is never looked for beside it
        self._read: set[str] | None = None  # (when first asked) the scanned files some #include reads
        self.named: dict[str, set] = defaultdict(set)  # a file name -> the C++ files of that name
        self._reached: set[str] | None = None  # (when first asked) the files a source file reaches through #include
        self._not_built: dict[str, str | None] = {}
        self.setup_named: set[str] = set()  # the file names a setup.py names
        self.hash_included: set[str] = set()  # the file names that some scanned source #includes
        self.cpp_files = 0
        self.vendored: set[str] = set()  # files inside a third-party folder of a scanned one
        self.shim = ""  # "file:line" of the project's own definition of a *_sync shuffle, if any
        self.cpp_text: dict[str, list[str]] = {}  # path -> lines (block comments blanked), for the questions below
        self.defines: dict[str, list[tuple[int, str, str | None]]] = {}  # path -> its #defines: (line, name, value)
        self.build_defines: set[str] = set()  # macros a build file defines (-DNAME, compile_definitions(NAME))
        self.rocm_defines: tuple[set, set] = (set(), set())  # CMake's, only in ROCm branches / elsewhere
        self._macros, self._rocm, self._values = None, ROCM_MACROS, {}  # (when first asked: all files read)
        self._dead, self._names, self._declared, self._uses = {}, {}, {}, {}

    def add_file(self, path: str, rel: str, data: bytes, kind: str | None) -> None:
        """``rel``: the file's path inside the folder scanned (folders above it never count)."""
        if any(VENDORED.fullmatch(d) for d in os.path.dirname(os.path.normpath(rel)).split(os.sep)):
            self.vendored.add(path)
        if kind == "cpp":
            self.cpp_files += 1
            text = data.decode("utf-8", "replace")
            self.includes[os.path.normpath(path)] = set(INCLUDE.findall(text))
            self.angled[os.path.normpath(path)] = set(ANGLED.findall(text))
            self.named[os.path.basename(path)].add(os.path.normpath(path))
            for h in INCLUDE.findall(text):
                self.includers[os.path.basename(h)].add(path)
            self.hash_included |= {os.path.basename(h) for h in INCLUDE.findall(text)}
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
            self._add_cmake(path, data.decode("utf-8", "replace"))
        if os.path.basename(path) == "setup.py":
            self._add_setup(path, data.decode("utf-8", "replace"))

    def _add_cmake(self, path: str, text: str) -> None:
        rocm, elsewhere = rocm_definitions(text)
        self.rocm_defines[0].update(rocm)
        self.rocm_defines[1].update(elsewhere)
        sources = cmake_sources(path, text)
        self.rocm_builds |= {path} if any(kind == "rocm" for _, kind in cmake_lines(text)) else set()
        known = sources["rocm"] and not re.search(r"hipify", text, re.I)  # (a hipify() step compiles copies of them)
        for kind, names in sources.items():
            for name in names:
                self.cmake_kinds[name].add(kind if known or kind == "both" else "unknown")

    def _add_setup(self, path: str, text: str) -> None:
        self.setup_named |= {os.path.basename(s) for s in SOURCE.findall(text)}
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return  # reported as PC900
        rocm, elsewhere = setup_definitions(tree)
        self.rocm_defines[0].update(rocm)
        self.rocm_defines[1].update(elsewhere)
        home, folders = os.path.dirname(path), source_folders(path, tree)
        self.setup_dirs.add(home)
        self.cuda_only.update({d: f"{path}:{line} builds other sources for ROCm"
                               for d, line in cuda_only_folders(path, tree).items()})  # fmt: skip
        if folders["rocm"]:
            self.rocm_builds.add(path)
            self.shared_folders |= {*folders["rocm"], *folders["both"]}
        elif line := runs_nvcc(tree, text):
            self.nvcc_setups[home] = f"{path}:{line}"

    def built_for_cuda_only(self, path: str) -> str | None:
        """Why no ROCm build compiles this file, when the project builds other sources for ROCm (None when it may):
        a setup.py builds its folder only for CUDA; the CMake files name it only in CUDA branches; the nearest
        setup.py runs nvcc and names nothing for ROCm, and no build file in its folder builds for ROCm
        (flash-attention's hopper/); or it is a header that only such files #include."""
        if path not in self._not_built:
            self._not_built[path] = None  # (while asked: an #include cycle)
            self._not_built[path] = self._why_not_built(os.path.normpath(path))
        return self._not_built[path]

    def _why_not_built(self, path: str) -> str | None:
        folder = os.path.dirname(path)

        def under(d: str) -> bool:
            return folder == d or folder.startswith(d + os.sep)

        if where := next((w for d, w in self.cuda_only.items() if under(d)), None):
            return where
        if self.cmake_kinds.get(path) == {"cuda"}:
            return "the CMake files name it only where they build for CUDA, and name other sources for ROCm"
        home = max(filter(under, self.setup_dirs), key=len, default=None)
        if home in self.nvcc_setups and self._rocm_only_elsewhere(home) and not any(map(under, self.shared_folders)):
            return f"{self.nvcc_setups[home]} runs nvcc, the CUDA toolkit's compiler, and names no sources for ROCm"
        users = self.includers.get(os.path.basename(path), set()) - {path}
        if path.endswith(HEADER) and users and all(self.built_for_cuda_only(u) for u in users):
            return f"only sources no ROCm build compiles #include it ({os.path.basename(min(users))}, ...)"
        reached = self.reached() if path.endswith(HEADER) and users and self.rocm_builds else None
        if reached and os.path.normpath(path) not in reached:
            return f"only headers that no source file reaches #include it ({os.path.basename(min(users))}, ...)"
        return None

    def reached(self) -> set[str]:
        """The scanned C++ files that a source file (not a header) is or #includes, directly or through headers. A
        header outside it is compiled only by code that is not in the scan: code generated at build or run time
        (tilelang's CUDA templates, which only its CUDA code generator #includes), or another project's."""
        if self._reached is None:
            todo = [p for p in self.includes if not p.endswith(HEADER)]
            self._reached = set(todo)
            while todo:
                path = todo.pop()
                for name in self.includes[path]:
                    found = self._resolve(path, name) - self._reached
                    self._reached |= found
                    todo += found
        return self._reached

    def _resolve(self, path: str, name: str) -> set[str]:
        """The scanned files that `#include "name"` in ``path`` may read: the one beside ``path`` where there is one
        (as the compiler looks first, for "name" but not for <name>), else every file whose path ends with ``name``
        (an include folder's)."""
        beside = os.path.normpath(os.path.join(os.path.dirname(path), name))
        if beside in self.includes and name not in self.angled.get(path, ()):
            return {beside}
        tail = os.sep + os.path.normpath(name).lstrip("./" + os.sep)
        return {p for p in self.named[os.path.basename(name)] if ("/" + p).endswith(tail)}

    def _rocm_only_elsewhere(self, home: str) -> bool:
        """Does a build file build for ROCm, and none in ``home`` (a setup.py's folder) or below it?"""
        inside = [d for d in map(os.path.dirname, self.rocm_builds) if d == home or d.startswith(home + os.sep)]
        return bool(self.rocm_builds) and not inside

    def unused_header(self, path: str) -> bool:
        """A header (.h, .cuh, .hpp, .inl) that no scanned file's #include reads and no setup.py names, in a scan of
        several C++ files: no build compiles it. (Of two headers of one name, `#include "../x.h"` reads one.)"""
        if not path.endswith(HEADER) or self.cpp_files < 2 or os.path.basename(path) in self.setup_named:
            return False
        if self._read is None:
            self._read = {f for p, names in self.includes.items() for n in names for f in self._resolve(p, n)}
        return os.path.normpath(path) not in self._read

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

    def names(self, path: str | None) -> tuple[Counter, Counter]:
        """How often each name is written before "(" or "<" in the code HIP compiles of ``path`` (or, for None, of
        every file): calls and definitions; and how often as a declaration or definition (``DECLARED``)."""
        if not self._names:
            self._count()
        return self._names[path], self._declared[path]

    def macro_uses(self, path: str | None) -> Counter:
        """How often each #defined name is written in the code HIP compiles of ``path`` (None: every file), not
        counting its #define lines."""
        if not self._names:
            self._count()
        return self._uses[path]

    def _count(self) -> None:
        self._names[None], self._declared[None], self._uses[None] = Counter(), Counter(), Counter()
        names = {name for sites in self.defines.values() for _, name, _ in sites}
        for p, lines in self.cpp_text.items():
            dead = self.dead(p)
            code = "\n".join("" if i in dead else ln.split("//", 1)[0] for i, ln in enumerate(lines, 1))
            self._names[p] = Counter(re.findall(r"\b(\w+)\s*[(<]", code))
            code = re.sub(r"^([ \t]*#[ \t]*define[ \t]+)\w+", r"\1", code, flags=re.M)  # (a #define is no use)
            declared = DECLARED.findall(INSTANTIATION.sub("", code))
            self._declared[p] = Counter(name for word, name in declared if word not in STATEMENT)
            self._uses[p] = Counter(w for w in re.findall(r"\b[A-Za-z_]\w*", code) if w in names)
            for counts in (self._names, self._declared, self._uses):
                counts[None].update(counts[p])

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
        if not m:
            return None
        uses = sum(self.macro_uses(p)[m.group(1)] for p in self.readers(path) if p in self.cpp_text)
        return m.group(1) if not uses else None

    def readers(self, path: str) -> set[str]:
        """``path`` and the scanned sources that #include it, directly or through other headers: the code that sees
        its #defines."""
        seen, todo = {path}, [path]
        while todo:
            for p in self.includers.get(os.path.basename(todo.pop()), set()) - seen:
                seen.add(p)
                todo.append(p)
        return seen

    def _uncalled(self, path: str, name: str, header: str) -> bool:
        """No code HIP compiles calls ``name`` (only its declarations and definitions name it): in its own file when it
        is an inline or static function of a source file (no other file can call it), else in any file."""
        local = INLINE_WORDS.search(header) and self._own_file(path)
        written, declared = (c[name] for c in self.names(path if local else None))
        # Uncalled: every mention is a declaration or definition, or the one mention is (its type on the line above).
        return written == declared or (written == 1 and not declared)

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
