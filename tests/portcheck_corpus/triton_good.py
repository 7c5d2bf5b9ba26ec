# The portable Triton kernel: generic libdevice, the warp size asked of the running GPU.
import triton
import triton.language as tl
from triton.language.extra import libdevice


@triton.jit
def fast_exp(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(y_ptr + offs, tl.exp(x) + libdevice.exp(x), mask=offs < n)


def threads(num_warps):
    return num_warps * triton.runtime.driver.active.get_current_target().warp_size
