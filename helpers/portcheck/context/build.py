"""What a project's build files tell (setup.py, CMakeLists.txt): which sources a ROCm build compiles, and the macros
it defines. Read as text and as Python's syntax tree, never run."""

from __future__ import annotations

import ast
import os
import re

SOURCE = re.compile(r"[\w./-]+\.(?:cu|cuh|cpp|cc|cxx|c|h|hpp)")  # a C++/CUDA file named in setup.py
BUILD_DEFINE = re.compile(r"-D\s*(\w+)|compile_definitions\s*\(([^)]*)\)|add_definitions\s*\(([^)]*)\)")
ROCM_NAME = re.compile(r"(^|_)(rocm|hip)(_|$)", re.I)  # a name that says ROCm: IS_ROCM, is_hip, FAISS_ENABLE_ROCM
CUDA_NAME = re.compile(r"(^|_)cuda(_|$)", re.I)  # BUILD_CUDA, USE_CUDA, CUDA_FOUND
CMAKE_SOURCE = re.compile(r"[\w./${}-]+\.(?:cu|cpp|cc|cxx|c|hip)\b")  # a source file named in a CMake file


def build_definitions(text: str) -> set[str]:
    """The macros a build file's text defines: -DNAME, add_definitions(...), (target_)compile_definitions(...)."""
    found = " ".join(g for m in BUILD_DEFINE.finditer(text) for g in m.groups() if g)
    return set(re.findall(r"(?:-D)?(\w+)", found))  # (add_definitions(-DUSE_AMD_ROCM): USE_AMD_ROCM)


def rocm_definitions(text: str) -> tuple[set[str], set[str]]:
    """The macros a CMake file defines inside an `if()` branch taken only when building for ROCm (faiss's
    `if(FAISS_ENABLE_ROCM)` / `add_definitions(-DUSE_AMD_ROCM)`), and the macros it defines elsewhere. One line at a
    time: a definition spread over lines counts for neither."""
    rocm, elsewhere = set(), set()
    for code, kind in cmake_lines(text):
        (rocm if kind == "rocm" else elsewhere).update(build_definitions(code))
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


def vendor_branches(tree: ast.AST) -> dict[int, tuple[bool, int]]:
    """id of each node inside an ``if`` that tests for ROCm (rocm_test) -> (taken on ROCm?, line of the ``if``)."""
    branch: dict[int, tuple[bool, int]] = {}
    for node in ast.walk(tree):
        rocm = rocm_test(node.test) if isinstance(node, ast.If) else None
        if rocm is None:
            continue
        pure = not isinstance(node.test, ast.BoolOp)  # the `else` of `if A and not IS_ROCM` runs on CUDA and ROCm
        for body, on_rocm in [(node.body, rocm)] + ([(node.orelse, not rocm)] if pure else []):
            for n in (n for stmt in body for n in ast.walk(stmt)):
                branch.setdefault(id(n), (on_rocm, node.lineno))
    return branch


def source_folders(path: str, tree: ast.AST) -> dict[str, dict[str, int]]:
    """The folders of the C++/CUDA sources a setup.py names (a string with a folder in it), by the builds that compile
    them: "cuda" (only when not building for ROCm), "rocm" (only when building for it), "both"; each with the line of
    its ``if`` (0 for "both")."""
    branch = vendor_branches(tree)
    folders: dict[str, dict[str, int]] = {"cuda": {}, "rocm": {}, "both": {}}
    for n in ast.walk(tree):
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and SOURCE.fullmatch(n.value) and "/" in n.value:
            on_rocm, line = branch.get(id(n), (None, 0))
            kind = "both" if on_rocm is None else "rocm" if on_rocm else "cuda"
            folder = os.path.normpath(os.path.join(os.path.dirname(path), os.path.dirname(n.value)))
            folders[kind].setdefault(folder, line)
    return folders


def cuda_only_folders(path: str, tree: ast.AST) -> dict[str, int]:
    """The folders of C++/CUDA sources a setup.py builds only when not building for ROCm, when it builds other sources
    for ROCm (flash-attention: csrc/flash_attn for CUDA, csrc/flash_attn_ck for ROCm), each with the line of its
    ``if``. A folder is left out when a source named anywhere else in the file (a ROCm branch, or code both builds
    run) is in it, above or below it; a bare file name (`"config.hpp"`, joined to a folder elsewhere) names no folder.
    A setup.py without ROCm sources gives nothing: it is no port yet."""
    folders = source_folders(path, tree)

    def related(a: str, b: str) -> bool:
        return a == b or a.startswith(b + os.sep) or b.startswith(a + os.sep)

    others = [*folders["rocm"], *folders["both"]]
    return {
        d: line for d, line in folders["cuda"].items() if folders["rocm"] and not any(related(d, o) for o in others)
    }


NVCC_RUN = re.compile(r"""bin/nvcc\b|["']bin["']\s*,\s*["']nvcc["']|\bwhich\(\s*["']nvcc["']\s*\)""")


def runs_nvcc(tree: ast.AST, source: str) -> int | None:
    """The line where a setup.py runs nvcc, the CUDA toolkit's compiler (`CUDA_HOME + "/bin/nvcc"`, `-V` for its
    version; `shutil.which("nvcc")`), outside every ``if`` that tests for ROCm: at the top of the file, or a call of
    the function that runs it. None when it runs nvcc only where it does not build for ROCm, or never."""
    branch = vendor_branches(tree)
    parent = {id(c): p for p in ast.walk(tree) for c in ast.iter_child_nodes(p)}

    def function_of(node: ast.AST) -> ast.AST | None:
        while id(node) in parent:
            node = parent[id(node)]
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                return node
        return None

    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and id(n) not in branch]
    for site in (c for c in calls if NVCC_RUN.search(ast.get_source_segment(source, c) or "")):
        if (f := function_of(site)) is None:
            return site.lineno
        for c in calls:
            if getattr(c.func, "id", getattr(c.func, "attr", None)) == f.name and function_of(c) is not f:
                return c.lineno
    return None


def cmake_lines(text: str) -> list[tuple[str, str]]:
    """Each line of a CMake file but its if()/elseif()/else()/endif(), comments cut, with the builds that run it:
    "rocm" (inside an `if()` whose condition names ROCm or HIP, with no NOT or OR: `if(USE_ROCM)`, `elseif(BUILD_HIP)`),
    "cuda" (inside one that names CUDA and not ROCm, `if(NOT USE_ROCM)`, or the `else()` of a ROCm one), "both"."""
    found, branches = [], []  # branches: per open if(), [this branch's kind or None, was an earlier branch ROCm's?]
    for line in text.splitlines():
        code = line.split("#", 1)[0].strip()
        if m := re.match(r"(if|elseif|else|endif)\s*\((.*)", code, re.I):
            word, cond = m[1].lower(), m[2]
            words, plain = re.findall(r"\w+", cond), not re.search(r"\b(NOT|OR)\b", cond, re.I)
            rocm = any(map(ROCM_NAME.search, words))
            not_rocm = rocm and re.fullmatch(r"\s*NOT\s+\w+\s*\)?", cond)
            cuda = plain and any(map(CUDA_NAME.search, words)) or not_rocm
            kind = "rocm" if plain and rocm else "cuda" if cuda else None
            if word == "if":
                branches.append([kind, kind == "rocm"])
            elif branches and word == "endif":
                branches.pop()
            elif branches:
                before = branches[-1][1]
                branches[-1] = [kind or ("cuda" if before else None), before or kind == "rocm"]
            continue
        kinds = {b[0] for b in branches} - {None}
        found.append((code, "rocm" if "rocm" in kinds else "cuda" if "cuda" in kinds else "both"))
    return found


def cmake_sources(path: str, text: str) -> dict[str, set[str]]:
    """The source files a CMake file names, by the builds that compile them (cmake_lines): "rocm", "cuda", "both".
    Paths joined to the file's folder (`${CMAKE_SOURCE_DIR}/` dropped)."""
    found: dict[str, set[str]] = {"cuda": set(), "rocm": set(), "both": set()}
    for code, kind in cmake_lines(text):
        for name in CMAKE_SOURCE.findall(code):
            found[kind].add(os.path.normpath(os.path.join(os.path.dirname(path), re.sub(r"^\$\{\w+\}/", "", name))))
    return found


def setup_definitions(tree: ast.AST) -> tuple[set[str], set[str]]:
    """The macros a setup.py defines (`define_macros += [("MMCV_WITH_HIP", None)]`, `"-DUSE_HIP"`) only inside an
    ``if`` taken when building for ROCm (mmcv's `if is_rocm_pytorch:`), and those it defines elsewhere."""
    branch, rocm, elsewhere = vendor_branches(tree), set(), set()
    for n in ast.walk(tree):
        first = n.elts[0] if isinstance(n, ast.Tuple) and n.elts else n
        if isinstance(first, ast.Constant) and isinstance(first.value, str):
            m = re.fullmatch(r"(?:-D)?([A-Z_][A-Z0-9_]*)(?:=\w*)?", first.value)
            if m and (n is not first or first.value.startswith("-D")):
                (rocm if branch.get(id(n), (False,))[0] else elsewhere).add(m[1])
    return rocm, elsewhere
