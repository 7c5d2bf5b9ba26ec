"""Lesson 05's exercises: 05a (offsets for any wavefront), 05b (the kernel source)."""

from __future__ import annotations

import re

from helpers.exercises.core import check, say


def _lane_sum(values, offsets, width):
    """A shuffle-down reduction in a lane model: lane i adds lane i + offset when that lane is in its width."""
    v = list(values)
    for off in offsets:
        v = [v[i] + (v[i + off] if (i % width) + off < width else 0) for i in range(len(v))]
    return v[0]


@check("05a")
def check_reduction_offsets(offsets_for):
    """Exercise 05a: the shuffle offsets of a wavefront-wide sum, right for 32 and 64 lanes."""
    for wave in (32, 64):
        offsets = list(offsets_for(wave))
        if not all(isinstance(o, int) and o > 0 for o in offsets):
            return False, say(
                "05a.whole",
                "for {wave} lanes the offsets are {offsets}: lane offsets are whole numbers "
                "above 0 (halve with //, as integer code on the GPU does)",
                wave=wave,
                offsets=offsets,
            )
        values = list(range(1, wave + 1))
        got = _lane_sum(values, offsets, wave)
        if got != sum(values):
            if offsets and max(offsets) < wave // 2:
                return False, say(
                    "05a.half",
                    "on {wave} lanes lane 0 got {got}, not {want}: lanes {first}-{last} are "
                    "never added; start at warpSize / 2",
                    wave=wave,
                    got=got,
                    want=sum(values),
                    first=wave // 2,
                    last=wave - 1,
                )
            return False, say(
                "05a.halve",
                "on {wave} lanes lane 0 got {got}, expected {want}: halve the offset each step",
                wave=wave,
                got=got,
                want=sum(values),
            )
    return True, say("05a.done", "lane 0 holds the full sum on 32-lane warps and 64-lane wavefronts")


@check("05b")
def check_lane_masks(cuda_source):
    """Exercise 05b: a CUDA/HIP source without 32-lane assumptions (portcheck PC201, PC202) that still reduces."""
    from helpers.portcheck import scan_cpp

    if not isinstance(cuda_source, str):
        return False, say("05b.string", "kernel_source must be the kernel's text (a string)")
    from helpers.portcheck.rules.pc2xx_cpp import GROUPS32

    for f in scan_cpp("kernel.cu", cuda_source):
        if f.rule in ("PC201", "PC202"):
            line = cuda_source.splitlines()[f.line - 1].strip()
            return False, say(
                "05b.finding", "line {line} `{code}`: {message}", line=f.line, code=line, message=f.message
            )
    for n, code in enumerate(cuda_source.splitlines(), 1):  # warp_sum sums a whole wavefront (05a): no 32-lane group
        if GROUPS32.search(code.split("//", 1)[0]):
            return False, say(
                "05b.group32",
                "line {line} `{code}`: warp_sum sums the whole wavefront, 64 lanes on CDNA: start the offsets at "
                "warpSize / 2 (32-lane groups are right only where the whole kernel keeps them, lesson 05 section 3)",
                line=n,
                code=code.strip(),
            )
    if not re.search(r"shfl", cuda_source, re.I):
        return False, say(
            "05b.keep_shfl", "keep the shuffle reduction (__shfl_down / __shfl_xor): change its width and mask only"
        )
    return True, say("05b.done", "no 32-lane constant or 32-bit mask left")
