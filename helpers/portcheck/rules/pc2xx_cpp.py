"""PC201-PC204: CUDA/C++ sources (read line by line, in the branches a ROCm build compiles).

A warp of 32 is not wrong by itself on a 64-lane wavefront: shuffles with offsets 16...1 (and ``width=32`` ones)
stay inside aligned 32-lane halves, so code that groups lanes by 32 consistently (``tid / 32``, ``tid % 32``,
``thread_block_tile<32>``, 32-thread blocks) computes each half right. PC201 reports what breaks: 32 mixed with
``warpSize`` in one file, ballots kept in 32 bits, and a wavefront-wide ballot or lane-0 broadcast in code that groups
by 32 (the two halves hold different rows). Lesson 05 shows each case on a model of the hardware.
"""

from __future__ import annotations

import re

from ..context.cpp import (
    ASM,
    STATEMENT_WORDS,
    cuda_arch_only,
    is_ptx,
    rocm_excluded,
    wave32_only,
    without_block_comments,
)
from ..model import Rule

RULES = [
    Rule("PC201", "error", "computes wrong results on a 64-lane wavefront (AMD CDNA: MI100-MI300)",
         "32-lane warp assumed where the hardware wavefront has 64 lanes",
         "one width per computation: warpSize (device) / at::cuda::warp_size() (host) throughout, or 32-lane groups "
         "throughout (width=32 shuffles, broadcasts and ballots per 32-lane half) (lesson 05)",
         "unsigned votes = __ballot_sync(mask, x > 0);"),
    Rule("PC202", "error", "HIP's *_sync functions static_assert a 64-bit mask: a compile error on every AMD GPU",
         "32-bit lane mask: HIP's *_sync functions take a 64-bit mask",
         "in a torch extension, ATen's WARP_SHFL_* / WARP_BALLOT (ATen/cuda/DeviceUtils.cuh); elsewhere a mask type "
         "per platform (unsigned long long under __HIP_PLATFORM_AMD__)",
         "v += __shfl_down_sync(0xffffffff, v, offset);"),
    Rule("PC203", "error", "HIP's compiler has no PTX: it rejects the asm (for f/h/l operands as soon as it parses it)",
         "inline PTX assembly does not compile for AMD GPUs",
         "a HIP/CUDA intrinsic or plain C++ for scalar PTX; mma/ldmatrix/cp.async is a rewrite (MFMA builtins, "
         "rocWMMA or Composable Kernel), kept under #ifdef __CUDA_ARCH__ with a HIP branch",
         'asm volatile("mov.u32 %0, %%laneid;" : "=r"(lane));'),
    Rule("PC204", "warning", "the library has no HIP build of that name; its ROCm counterpart needs a code change",
         "CUDA-only library", "see the message for its ROCm equivalent", "#include <cutlass/gemm/device/gemm.h>"),
]  # fmt: skip

# Code that groups lanes by 32: a warp-size constant of 32, lane arithmetic with 32, 32-thread launches, a shuffle
# reduction from offset 16
GROUPS32 = re.compile(
    r"#\s*define\s+\w*WARP\w*\s+32[uU]?\b"
    r"|\b\w*(?:[wW]arp|WARP)\w*\s*=\s*32[uU]?\b"  # int warp = 32; constexpr int WARP_SIZE = 32; enum {WARP = 32}
    r"|threadIdx\.[xyz]\s*(?:%\s*32|&\s*31|>>\s*5|/\s*32)[uU]?\b|\blane\w*\s*&\s*31\b|<<<[^>]*\b32\s*>>>"
    r"|for\s*\(\s*int\s+\w+\s*=\s*16\s*;\s*\w+\s*>\s*0"
)
WARPSIZE = re.compile(r"\bwarpSize\b|\bat::cuda::warp_size\s*\(|\bC10_WARP_SIZE\b")  # the hardware's width
BALLOT32 = re.compile(
    r"\b(?:unsigned(?:\s+int)?|uint32_t|int32_t|int)\s+\w+\s*=\s*__ballot(?:_sync)?\s*\(|__popc\s*\(\s*__ballot"
)
BALLOT = re.compile(r"__ballot(?:_sync)?\s*\(")
SHFL = re.compile(r"__shfl(_sync)?\s*\(")
_MASK = (  # all 32 lanes in a 32-bit type: 0xffffffff, ~0u, uint32_t(-1), (unsigned)-1 (not 0xffffffffull: 64 bits)
    r"(?:0x[fF]{8}[uU]?\b|~0[uU]?\b|u?int32_t\s*\(\s*-1\s*\)"
    r"|\(\s*(?:u?int32_t|unsigned(?:\s+int)?)\s*\)\s*-1\b)"
)
SYNC_CALL = r"__(?:shfl\w*|ballot|any|all|match\w*)_sync\s*\("  # HIP's *_sync functions that take a mask first
MASK32 = re.compile(rf"#\s*define\s+\w*MASK\w*\s+{_MASK}|{SYNC_CALL}\s*{_MASK}")
MASK32_VARIABLE = re.compile(  # a 32-bit mask set in a variable (or a parameter's default): reported where it is set
    rf"\b(?:unsigned(?:\s+int)?|uint32_t)\s+(?:const\s+)?(\w*(?:mask|MASK|Mask)\w*)\s*=\s*{_MASK}"  # mask = ~0u
)
# A *_sync call whose mask is a name (`__shfl_xor_sync(mask, v, 1)`, `mask[0]`): HIP's static_assert is on its type
SYNC_NAMED = re.compile(rf"{SYNC_CALL}\s*(\w+)\s*(?:\[[^\]\n]*\]\s*)?,")
NARROW = {"int", "unsigned", "uint32_t", "int32_t", "uint"}  # 32-bit integer types (not after long or short)
# HIP's __activemask() returns unsigned long long: right as a *_sync mask or in 64 bits, not kept in 32 (`uint m[1];
# m[0] = __activemask();`, TVM's generated reductions)
ACTIVEMASK = re.compile(r"__activemask\s*\(")
WIDE = re.compile(r"(?:__\w+_sync\s*\(|\b(?:long\s+long|u?int64_t|auto)\s+\w+\s*=)\s*$")
CUDA_LIBS = (
    (re.compile(r"cublasLt|cublas_v2\.h.*Lt"), "cuBLASLt -> hipBLASLt"),
    (re.compile(r"\bcutlass\b", re.I), "CUTLASS -> Composable Kernel (CK)"),
    (re.compile(r"cudnn_frontend"), "cuDNN frontend -> MIOpen"),
    (re.compile(r"#\s*include\s*<mma\.h>"), "WMMA (<mma.h>, nvcuda::wmma) has no HIP header -> rocWMMA (rocwmma::)"),
)


def _args(code: str, start: int) -> list[str]:
    """The top-level arguments of the call whose "(" ends at ``start``."""
    depth, args, cur = 1, [], ""
    for ch in code[start:]:
        depth += (ch in "([{") - (ch in ")]}")
        if depth == 0 or (ch == "," and depth == 1):
            args.append(cur.strip())
            cur = ""
            if depth == 0:
                break
        else:
            cur += ch
    return args


def _broadcast_default_width(code: str) -> re.Match | None:
    """__shfl_sync(mask, v, 0) / __shfl(v, 0): lane 0's value to every lane of the whole wavefront."""
    for m in SHFL.finditer(code):
        args = _args(code, m.end())
        lane = 2 if m.group(1) else 1
        if len(args) == lane + 1 and args[lane] == "0":
            return m
    return None


def _warp_width(code_lines: list[str], skip: set[int]) -> tuple[set[int], int | None]:
    """The lines that group lanes by 32, and the first line that uses the hardware's width (warpSize; not a name the
    file itself defines as 32: `#define C10_WARP_SIZE 32` makes it a 32-lane group there)."""
    groups, hardware = set(), None
    text = "\n".join(code_lines)  # (a name the file defines as 32: `#define WARP_SIZE 32`, `int warpSize = 32`)
    own32 = {a or b for a, b in re.findall(r"#\s*define\s+(\w+)\s+32[uU]?\b|\b(warpSize)\s*=\s*32[uU]?\b", text)}
    for i, raw in enumerate(code_lines, 1):
        code = raw.split("//", 1)[0]
        if i in skip:
            continue
        if GROUPS32.search(code):
            groups.add(i)
        if hardware is None and any(m.group() not in own32 for m in WARPSIZE.finditer(code)):
            hardware = i
    return groups, hardware


def _pc201(i: int, code: str, groups: set[int], hardware: int | None, add) -> None:
    if hardware and i in groups:
        add(
            i,
            GROUPS32.search(code).start() + 1,
            "PC201",
            f": 32 lanes here, warpSize at line {hardware}: on a 64-lane wavefront the two widths disagree",
        )
    elif m := BALLOT32.search(code):
        add(i, m.start() + 1, "PC201", ": a ballot kept in 32 bits: a 64-lane wavefront's has 64 (unsigned long long)")
    elif groups and (m := BALLOT.search(code) or _broadcast_default_width(code)):
        what = "a ballot" if "ballot" in m.group() else "lane 0's value broadcast at the default width"
        add(i, m.start() + 1, "PC201", f": {what} spans the whole 64-lane wavefront, two of the 32-lane groups "
            f"this file makes (line {min(groups)}); use width=32, or one group per wavefront")  # fmt: skip


def _used_mask(m: re.Match | None, i: int, code_lines: list[str], not_rocm: set[int]) -> re.Match | None:
    """``m`` (on line ``i``), unless it is a parameter's default that no *_sync call HIP compiles in its function
    takes, up to the function's closing `}` in column 0 (the default mask of Megatron's WARP_SHFL_XOR_NATIVE goes to
    __shfl_xor_sync only under `#if CUDA_VERSION >= 9000`; Open3D's WARP_SHFL_DOWN, one parameter per line)."""
    if not m:
        return None
    before = m.string[: m.start()]
    if not before.strip():  # (a parameter on a line of its own: what comes before it ends the line above)
        before = next((ln.split("//", 1)[0] for ln in reversed(code_lines[: i - 1]) if ln.strip()), "")
    if not re.search(r"[(,]\s*$", before):
        return m  # (a variable or constant: other files may use it)
    use = re.compile(rf"__\w+_sync\s*\(\s*{m[1]}\b")
    for n in range(i, len(code_lines) + 1):
        if n not in not_rocm and use.search(code_lines[n - 1]):
            return m
        if code_lines[n - 1].startswith("}"):
            break
    return None


def _narrow_masks(code: str) -> set[str]:
    """The names passed as a *_sync call's mask that this file declares only with a 32-bit integer type (`int mask`,
    `uint32_t groupMask`, `unsigned int mask` as a parameter, `uint mask[1]`): a compile error on HIP, whatever the
    value. A name declared in another file, or also with another type (`MaskT mask`, `uint64_t mask`), is not one."""
    narrow = set()
    for name in set(SYNC_NAMED.findall(code)):
        found = re.findall(rf"(?:\b(\w+)[ \t]+)?\b(\w+)[ \t&]+{name}\b\s*(?=[=;,)\[])", code)
        types = [(before, word) for before, word in found if word not in STATEMENT_WORDS]
        if types and all(word in NARROW and before not in ("long", "short") for before, word in types):
            narrow.add(name)
    return narrow


def check(path: str, source: str, add) -> None:
    """``add(line, col, rule, extra)`` for each finding of one C/C++/CUDA file."""
    code_lines = without_block_comments(source).splitlines()  # (code in a comment is no code)
    not_rocm = rocm_excluded(code_lines) | cuda_arch_only(code_lines)  # (#ifndef USE_ROCM, #if __CUDA_ARCH__)
    wave32 = wave32_only(code_lines)
    groups, hardware = _warp_width(code_lines, not_rocm | wave32)
    narrow = _narrow_masks(
        "\n".join("" if i in not_rocm else ln.split("//", 1)[0] for i, ln in enumerate(code_lines, 1))
    )
    for i, raw in enumerate(code_lines, 1):
        if i in not_rocm:
            continue  # a branch the ROCm build never compiles
        code = raw.split("//", 1)[0]
        if i not in wave32:  # (a warp of 32 is right in code built only for RDNA's wave32 GPUs)
            _pc201(i, code, groups, hardware, add)
        active = ACTIVEMASK.search(code)
        active = active if active and not WIDE.search(code[: active.start()]) else None
        typed = next((c for c in SYNC_NAMED.finditer(code) if c[1] in narrow), None)
        if m := MASK32.search(code) or _used_mask(MASK32_VARIABLE.search(code), i, code_lines, not_rocm) or active:
            add(i, m.start() + 1, "PC202", "")
        elif typed:
            add(i, typed.start() + 1, "PC202", f": {typed[1]} is declared 32-bit in this file")
        m = ASM.search(code)
        if m and code[: m.start()].count('"') % 2 == 0 and is_ptx(code_lines, i):  # (not in a string; not x86's, AMD's)
            add(i, m.start() + 1, "PC203", "")
        if "#include" in code or "::" in code:
            for rx, equiv in CUDA_LIBS:
                if m := rx.search(code):
                    add(i, m.start() + 1, "PC204", f": {equiv}")
