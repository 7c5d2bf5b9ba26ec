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


# HIP's compiler defines none of these: nvcc's and NVRTC's (clang defines __CUDA__ for CUDA, __HIP__ for HIP instead);
# the ones CUTLASS and CuTe define only where __CUDA_ARCH__ or __CUDACC_VER_MAJOR__ is high enough; and those only IDE
# code indexers set (CLion, VS Code, Visual Studio, Eclipse)
CUDA_ONLY_MACROS = (
    r"__CUDA_ARCH__|__CUDACC_VER_(?:MAJOR|MINOR|BUILD)__|__CUDA_ARCH_(?:FEAT_SM\w+|SPECIFIC|FAMILY_SPECIFIC)__"
    r"|__NVCC__|__CUDA__|__CUDACC_RTC__|CUTE_ARCH_\w+_ENABLED|CUTLASS_ARCH_MMA_\w+_(?:ENABLED|SUPPORTED)"
    r"|__CLION_IDE__|__VSCODE_IDE__|__INTELLISENSE__|__CDT_PARSER__"
)


_DEFINED = re.compile(r"\bdefined\s*(?:\(\s*(\w+)\s*\)|\s+(\w+)\b)")  # defined(M), defined M
# cuda.h's CUDA_VERSION (12040 for CUDA 12.4): HIP's headers define none, and torch's hipify renames it to
# TORCH_HIP_VERSION (HIP's major * 100 + minor, 702 for ROCm 7.2) where a build defines that at all. Compared with a
# CUDA version number (`CUDA_VERSION >= 9000`, any from CUDA 7.0's 7000 up), it reads as 0 either way;
# `defined(CUDA_VERSION)` depends on the build.
_CUDA_VERSION_COMPARED = r"\bCUDA_VERSION\b(?=\s*(?:[<>]=?|[!=]=)\s*(?:[7-9]\d{3}|[1-9]\d{4,})[uUlL]*\b)"


def _split(expr: str, op: str) -> list[str]:
    """``expr`` split at ``op`` ("||" or "&&") outside parentheses."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(expr):
        depth += (ch == "(") - (ch == ")")
        if depth == 0 and expr.startswith(op, i):
            parts.append(expr[start:i])
            start = i + len(op)
    return [*parts, expr[start:]]


ROCM_MACROS = r"(USE_ROCM|__HIP_PLATFORM_AMD__)"  # what torch's ROCm extension builds define for every file


def hip_value(expr: str, macros: str = CUDA_ONLY_MACROS, values: dict[str, str] | None = None) -> bool | None:
    """What a `#if` condition is for HIP's compiler, where ``macros`` (__CUDA_ARCH__, __CUDACC_VER_*__, ...) are
    undefined (0) and ``values`` (a project's `#define CC_TURING 750`) defined as given: True, False, or None when it
    depends on other macros (`#if 0` is False for every compiler). `A && B` is False when either part is, `A || B`
    True when either is; a part that names only those macros and numbers is computed as the preprocessor would.
    `defined(USE_ROCM)` and `defined(__HIP_PLATFORM_AMD__)` (ROCM_MACROS) are true."""
    expr = expr.strip()
    for op, decides in (("||", True), ("&&", False)):
        if len(parts := _split(expr, op)) > 1:
            said = [hip_value(p, macros, values) for p in parts]
            return decides if decides in said else (not decides if None not in said else None)
    if expr.startswith("(") and _split(expr, ")")[1:] == [""]:  # (the first "(" closes at the end)
        return hip_value(expr[1:-1], macros, values)
    if expr.startswith("!") and not expr.startswith("!="):
        value = hip_value(expr[1:], macros, values)
        return None if value is None else not value
    term = re.sub(_CUDA_VERSION_COMPARED, "0", expr)
    term = re.sub(rf"\bdefined\s*(\(\s*{ROCM_MACROS}\s*\)|\s+{ROCM_MACROS}\b)", "1", term)
    term = re.sub(rf"\bdefined\s*(\(\s*({macros})\s*\)|\s+({macros})\b)", "0", term)
    term = re.sub(rf"\b({macros})\b", "0", term)
    if values:
        term = _DEFINED.sub(lambda m: "1" if (m[1] or m[2]) in values else m[0], term)
        term = re.sub(r"\b[A-Za-z_]\w*", lambda m: values.get(m[0], m[0]), term)
    term = re.sub(r"\b(\d+)[uUlL]*\b", r"\1", term)
    if not re.fullmatch(r"[\d\s()<>=!+\-*/%]+", term) or "**" in term:
        return None  # another macro decides it (`**` is no C); numbers alone (`#if 0`) decide it for every compiler
    try:
        return bool(eval(term.replace("!=", "<>").replace("!", " not ").replace("<>", "!=").replace("/", "//")))
    except (SyntaxError, ZeroDivisionError, TypeError):
        return None


def _directive_value(d: str, macros: str = CUDA_ONLY_MACROS, values: dict[str, str] | None = None) -> bool | None:
    """hip_value of a directive's condition: `#if X`, `#elif X`, `#ifdef M`, `#ifndef M`; None for `#else`."""
    cond = re.sub(r"/\*.*?\*/|//.*", "", d).strip()
    for word, op in (("and", "&&"), ("or", "||"), ("not", "!")):  # (C++'s alternative tokens)
        cond = re.sub(rf"\b{word}\b", op, cond)
    if m := re.match(r"#\s*(ifdef|ifndef)\s+(\w+)", cond):
        value = hip_value(f"defined({m.group(2)})", macros, values)
        return None if value is None else value == (m.group(1) == "ifdef")
    m = re.match(r"#\s*(?:el)?if\b(.*)", cond)
    return hip_value(m.group(1), macros, values) if m else None


def cuda_arch_only(lines: list[str], macros: str = CUDA_ONLY_MACROS, values: dict[str, str] | None = None) -> set[int]:
    """Line numbers of preprocessor branches HIP never compiles: a branch whose condition is false where
    __CUDA_ARCH__ and __CUDACC_VER_*__ are undefined (`#if __CUDA_ARCH__ >= 800`, `#if defined(__CUDA_ARCH__) &&
    __CUDA_ARCH__ < 800`), and every branch after one that is true there (`#ifndef __CUDA_ARCH__`, `#if
    __CUDA_ARCH__ < 800`: its `#else`). (A kernel whose body is all in such a branch does nothing on ROCm: no
    compile error.)"""
    return lines_of(
        (a, b) for group in if_groups(lines, lambda d: _directive_value(d, macros, values))
        for n, (a, b, value) in enumerate(group)
        if value is False or any(v is True for _, _, v in group[:n])
    )  # fmt: skip


def rocm_excluded(lines: list[str], macros: str = ROCM_MACROS) -> set[int]:
    """Line numbers of preprocessor branches a ROCm build never compiles: `#ifndef USE_ROCM` (or `#if !defined(...)`,
    alone or joined to other terms by `&&` only) and whatever follows an `#ifdef USE_ROCM` branch (`#if defined(...)`
    alone), for the macros torch's ROCm extension builds define for C++ and HIP files alike (USE_ROCM,
    __HIP_PLATFORM_AMD__; not __HIPCC__, which a .cpp's host compiler lacks, nor __HIP_PLATFORM_HCC__, gone since
    ROCm 6.0), or ``macros`` (a group: a project's own ROCm switches too). CUDA-only code kept out of the ROCm build
    (causal-conv1d's `#ifndef USE_ROCM` shuffle with a 32-bit mask, its `#else` HIP's) is no port bug."""

    def kind(d: str) -> str | None:
        cond = re.sub(r"/\*.*?\*/|//.*", "", d).strip()
        if re.fullmatch(rf"#\s*ifndef\s+{macros}", cond):
            return "out"
        if re.fullmatch(rf"#\s*ifdef\s+{macros}|#\s*(el)?if\s+defined\s*\(?\s*{macros}\s*\)?", cond):
            return "taken"
        m = re.match(r"#\s*(el)?if\b(.*)", cond)
        terms = [t.strip() for t in m.group(2).split("&&")] if m and "||" not in cond else []
        negated = rf"!\s*defined\s*(\(\s*{macros}\s*\)|\s{macros})"
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
# (a name, its template arguments where it is a specialization: `ld_shared<4>(`, its parameters, maybe its "{")
FUNCTION = re.compile(r"\b(\w+)\s*(?:<[^;{}()]*>)?\s*\([^;{}]*\)?\s*(?:const\s*)?(?:noexcept\s*)?\{?\s*$")
# (CUTLASS_DEVICE, CUTE_DEVICE and their HOST_DEVICE forms are `__forceinline__ __device__`, with `__host__` too)
DEVICE_WORDS = re.compile(
    r"__device__|__forceinline__|__global__|\binline\b|\bstatic\b|\btemplate\b|\b(?:CUTLASS|CUTE)_(?:HOST_)?DEVICE\b"
)
INLINE_WORDS = re.compile(r"__forceinline__|\binline\b|__inline__|\bstatic\b|\b(?:CUTLASS|CUTE)_(?:HOST_)?DEVICE\b")
# Words that begin a statement, never a type: `return mask;` declares nothing, `return f(x)` calls f
STATEMENT_WORDS = {"return", "else", "do", "case", "new", "delete", "throw", "goto", "sizeof", "co_return"}
NOT_NAMES = {
    *("defined", "if", "for", "while", "switch", "return", "sizeof", "constexpr", "decltype", "static_assert"),
    *("asm", "__asm__", "volatile", "__volatile__"),
}


def asm_text(lines: list[str], i: int) -> str:
    """The asm statement that starts on line ``i`` (1-based), up to its `);` (at most 12 lines), comments left out."""
    text = ""
    for line in lines[i - 1 : i + 11]:
        text += line.split("//", 1)[0] + "\n"
        if ");" in line:
            break
    return text


# A PTX instruction: a mnemonic with a type or state suffix (mov.u32, ld.global.nc, bar.sync), after an optional
# predicate (@p, @!p), or one of the few without one (trap, brkpt, exit); a .reg declaration; a special register
PTX_INSTRUCTION = re.compile(
    r"(?:^|;|\\n|\\t)\s*(?:@!?%?\w+\s+)?(?:[a-z][a-z0-9_]*\.[A-Za-z0-9_]|(?:trap|brkpt|exit)\b)|\.reg\s+\."
    r"|%%(?:laneid|smid|nsmid|warpid|lanemask_\w+|clock\w*|globaltimer\w*|dynamic_smem_size)\b"
)


ASM = re.compile(r"\b(?:__asm__|asm)\s*(?:(?:__volatile__|volatile)\s*)?\(")  # an asm statement's start
LITERAL = r'"(?:[^"\\]|\\[\s\S])*"'  # (a backslash before a newline continues the literal)
# AMD's own assembly (GCN, CDNA, RDNA): vector, scalar, LDS and memory instructions (v_fmac_f32, s_waitcnt, ds_read_b32)
AMD_INSTRUCTION = re.compile(r"(?:^|;|\\n|\\t)\s*(?:v|s|ds|buffer|global|flat)_[a-z0-9_]*")


def is_ptx(lines: list[str], i: int) -> bool:
    """Is the asm statement on line ``i`` PTX? Not when its text is string literals alone and they hold no PTX
    instruction: x86's `cpuid`, AMD's own `v_cvt_f16_f32`; nor when a literal starts with an AMD instruction. Other
    text that a macro supplies, whole or in part (`LD_NC ".u8 %0, [%1];"`), counts as PTX."""
    text = asm_text(lines, i)
    start = ASM.search(text)
    template = re.match(rf'\s*((?:{LITERAL}|[^:;)"])*)', text[start.end() :]).group(1) if start else ""
    literals = re.findall(LITERAL, template)
    if any(AMD_INSTRUCTION.match(lit[1:-1].lstrip()) for lit in literals):
        return False  # (a macro may supply the rest: `"v_" #OP "_dpp ..."`)
    if not literals or re.search(r"\w", re.sub(LITERAL, "", template)):
        return True
    return any(PTX_INSTRUCTION.search(lit[1:-1]) for lit in literals)


def asm_constraints(lines: list[str], i: int) -> set[str]:
    """The operand constraint letters of the asm statement that starts on line ``i`` (1-based): {"r"}, {"f", "r"}."""
    return {c for m in CONSTRAINT.finditer(asm_text(lines, i)) for c in m.group(1)}


def function_header(lines: list[str], i: int) -> tuple[str, str] | None:
    """The device function whose body holds line ``i``: (its name, its header): the nearest header above it
    (`__device__ ... name(...) {`, the keywords up to two lines above the name); None when there is none within 40
    lines or a top-level block closes in between (a `}` in column 0), or when it is a kernel (`__global__`: HIP
    generates code for every kernel, launched or not) or an operator (called by syntax, `reducer(a, b)`, never by
    its name)."""
    for n in range(i - 1, max(i - 41, 0), -1):
        if lines[n - 1].startswith("}"):
            return None  # (line i is outside the function above: its header may be a macro, `DEVICE_INLINE`)
        m = None if lines[n - 1].lstrip().startswith("#") else FUNCTION.search(lines[n - 1].split("//", 1)[0])
        header = " ".join(lines[max(n - 3, 0) : n])
        if m and m.group(1) not in NOT_NAMES and DEVICE_WORDS.search(header):
            kernel_or_operator = "__global__" in lines[n - 1] or m.group(1) == "operator"
            return None if kernel_or_operator else (m.group(1), header)
    return None


def enclosing_function(lines: list[str], i: int, template: bool = False) -> str | None:
    """The name of the function_header around line ``i``; ``template``: only a function template's name (`template
    <...>` in its header), else None."""
    found = function_header(lines, i)
    if not found or (template and not re.search(r"\btemplate\s*<", found[1])):
        return None
    return found[0]
