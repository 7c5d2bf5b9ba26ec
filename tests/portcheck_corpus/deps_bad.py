# CUDA-only dependencies, in the forms real projects write them: every line marked "expect" must be reported.
import apex.amp as amp  # expect: PC303
import bitsandbytes as bnb  # expect: PC304
import torch
import xformers.ops as xops  # expect: PC302
from apex.normalization import FusedLayerNorm  # expect: PC303
from apex.optimizers import FusedAdam as Adam  # expect: PC303
from flash_attn import flash_attn_func  # expect: PC301
from flash_attn.flash_attn_interface import flash_attn_varlen_func  # expect: PC301


class Block(torch.nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.norm = FusedLayerNorm(dim)  # expect: PC303
        self.qkv = bnb.nn.Linear8bitLt(dim, 3 * dim)  # expect: PC304

    def forward(self, x, bias, cu, max_len):
        q, k, v = self.qkv(self.norm(x)).chunk(3, dim=-1)
        a = flash_attn_func(q, k, v, dropout_p=0.1, causal=True)  # expect: PC301
        b = xops.memory_efficient_attention(q, k, v, attn_bias=xops.LowerTriangularMask())  # expect: PC302 PC302
        c = flash_attn_varlen_func(q, k, v, cu, cu, max_len, max_len)  # expect: PC301
        return a + b + c


model = Block(64)
opt = Adam(model.parameters(), lr=1e-3)  # expect: PC303
opt8 = bnb.optim.AdamW8bit(model.parameters())  # expect: PC304
model, opt = amp.initialize(model, opt, opt_level="O1")  # expect: PC303
