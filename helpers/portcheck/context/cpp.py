"""What a C/C++/CUDA file's preprocessor tells: which lines a ROCm (HIP) build compiles at all.

Read line by line, not parsed: `#if` groups, `/* ... */` comments. A ROCm build defines USE_ROCM and
__HIP_PLATFORM_AMD__ (torch's extension builds, for C++ and HIP files alike) and never __CUDA_ARCH__.
"""

from __future__ import annotations

import re


def if_groups(lines: list[str], kind) -> list[list[tuple[int, int, object]]]:
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


def lines_of(spans) -> set[int]:
    return {n for a, b in spans for n in range(a, b)}


def cuda_arch_only(lines: list[str]) -> set[int]:
    """Line numbers of preprocessor branches HIP never compiles. HIP's compiler defines neither __CUDA_ARCH__ nor
    __CUDACC_VER_MAJOR__: a branch that requires one is compiled out (its #elif/#else, if any, is used), and after a
    branch that requires its absence (`#ifndef __CUDA_ARCH__`, `!defined(__CUDA_ARCH__)`), which HIP always takes,
    every later branch is. (A kernel whose body is all in such a branch does nothing on ROCm: no compile error.)"""

    def kind(d: str) -> str | None:
        macro = r"(__CUDA_ARCH__|__CUDACC_VER_(MAJOR|MINOR)__)"
        if not re.search(macro, d) or re.match(r"#\s*else", d) or "||" in d:
            return None  # (`A || __CUDA_ARCH__`: HIP may take it)
        if re.match(r"#\s*ifndef", d) or re.search(rf"!\s*defined\s*\(?\s*{macro}", d):
            return "neg" if "&&" not in d else None  # HIP takes `#ifndef __CUDA_ARCH__`, always
        if re.search(rf"{macro}\s*(<|<=|!=|==\s*0)", d):
            return None  # (`__CUDA_ARCH__ < 800` is true where it is undefined: 0)
        return "pos"

    return lines_of(
        (a, b) for group in if_groups(lines, kind) for n, (a, b, k) in enumerate(group)
        if k == "pos" or any(k2 == "neg" for _, _, k2 in group[:n])
    )  # fmt: skip


ROCM_MACROS = r"(USE_ROCM|__HIP_PLATFORM_AMD__)"  # what torch's ROCm extension builds define for every file


def rocm_excluded(lines: list[str]) -> set[int]:
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

    return lines_of(
        (a, b) for group in if_groups(lines, kind) for n, (a, b, k) in enumerate(group)
        if k == "out" or any(k2 == "taken" for _, _, k2 in group[:n])
    )  # fmt: skip


def wave32_only(lines: list[str]) -> set[int]:
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

    return lines_of((a, b) for group in if_groups(lines, rdna) for a, b, only in group if only)


def without_block_comments(source: str) -> str:
    """The source with each /* ... */ comment blanked out, lines and columns kept: code in a comment is no code."""
    return re.sub(r"/\*.*?\*/", lambda m: re.sub(r"[^\n]", " ", m.group()), source, flags=re.S)


CONSTRAINT = re.compile(r'"[=+&]*([a-zA-Z]+)"\s*\(')
FUNCTION = re.compile(r"\b(\w+)\s*\([^;{}]*\)?\s*(?:const\s*)?(?:noexcept\s*)?\{?\s*$")
DEVICE_WORDS = re.compile(r"__device__|__forceinline__|__global__|\binline\b|\bstatic\b|\btemplate\b")
NOT_NAMES = {"if", "for", "while", "switch", "return", "sizeof", "asm", "__asm__", "volatile", "__volatile__"}


def asm_constraints(lines: list[str], i: int) -> set[str]:
    """The operand constraint letters of the asm statement that starts on line ``i`` (1-based): {"r"}, {"f", "r"}."""
    text = ""
    for line in lines[i - 1 : i + 11]:
        text += line.split("//", 1)[0] + "\n"
        if ");" in line:
            break
    return {c for m in CONSTRAINT.finditer(text) for c in m.group(1)}


def enclosing_function(lines: list[str], i: int) -> str | None:
    """The name of the device function whose body holds line ``i``: the nearest header above it (`__device__ ...
    name(...) {`, the keywords up to two lines above the name); None when there is none within 40 lines, or when it
    is a kernel (`__global__`: HIP generates code for every kernel, launched or not)."""
    for n in range(i - 1, max(i - 41, 0), -1):
        m = FUNCTION.search(lines[n - 1].split("//", 1)[0])
        header = " ".join(lines[max(n - 3, 0) : n])
        if m and m.group(1) not in NOT_NAMES and DEVICE_WORDS.search(header):
            return None if "__global__" in lines[n - 1] else m.group(1)
    return None
