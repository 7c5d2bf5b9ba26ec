# The portable port, and optional fast paths with a fallback: portcheck stays silent.
import importlib.util

import torch
import torch.nn.functional as F

try:
    from flash_attn import flash_attn_func  # optional: used only where it imports
except ImportError:
    flash_attn_func = None

if importlib.util.find_spec("xformers") is not None:
    import xformers.ops as xops
else:
    xops = None


def attention(q, k, v, training):  # q, k, v: (B, S, H, D), flash-attn's layout
    if flash_attn_func is not None and q.is_cuda:
        return flash_attn_func(q, k, v, dropout_p=0.1 if training else 0.0, causal=True)
    if xops is not None and q.is_cuda:
        return xops.memory_efficient_attention(q, k, v, attn_bias=xops.LowerTriangularMask())
    out = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2),
                                         dropout_p=0.1 if training else 0.0, is_causal=True)
    return out.transpose(1, 2)


norm = torch.nn.RMSNorm(64)
opt = torch.optim.AdamW(norm.parameters(), lr=1e-3, fused=False)
WARP = 32  # not a Triton file: PC306 does not apply (C++ warp sizes are PC201)


def quantize(model, bits):
    if bits == 4:  # an opt-in branch: bitsandbytes is imported only when asked for
        import bitsandbytes as bnb

        return bnb.nn.Linear4bit
    return model
