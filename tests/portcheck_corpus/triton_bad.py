# Triton kernels written for NVIDIA only: every line marked "expect" must be reported.
import triton
import triton.language as tl
from triton.language.extra.cuda import libdevice  # expect: PC305

WARP_SIZE = 32  # expect: PC306


@triton.jit
def fast_exp(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    y = tl.inline_asm_elementwise("ex2.approx.f32 $0, $1;", "=r,r", [x], dtype=tl.float32, is_pure=True, pack=1)  # expect: PC305
    z = tl.extra.cuda.libdevice.fast_expf(x)  # expect: PC305
    tl.store(y_ptr + offs, y + z + libdevice.exp(x), mask=offs < n)


def threads(num_warps):
    return num_warps * 32  # expect: PC306
