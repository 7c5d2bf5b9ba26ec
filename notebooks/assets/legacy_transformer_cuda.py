"""Train a small character-level GPT, written the CUDA-only way (lesson 08 ports it).

    python legacy_transformer_cuda.py --attn flash|xformers --optim fused|8bit --steps 2000

It needs an NVIDIA GPU and four CUDA-only packages: flash-attn, xformers, NVIDIA apex and bitsandbytes.
On an AMD GPU (or a CPU) it stops at the first import. Lesson 08 reads it as text; it is never run here.
"""

import argparse
import math

import apex.amp as amp
import bitsandbytes as bnb
import torch
import torch.nn as nn
import xformers.ops as xops
from apex.normalization import FusedLayerNorm
from apex.optimizers import FusedAdam
from flash_attn import flash_attn_func


def alibi_bias(heads, seq, device):
    """ALiBi: a per-head linear penalty on distance, plus the causal mask (xformers takes it as attn_bias)."""
    slopes = torch.tensor([2 ** (-8 * (h + 1) / heads) for h in range(heads)], device=device)
    pos = torch.arange(seq, device=device)
    dist = (pos[None, :] - pos[:, None]).clamp(max=0).float()
    bias = slopes[:, None, None] * dist[None]
    return bias.masked_fill(pos[None, :] > pos[:, None], float("-inf"))  # (heads, seq, seq)


class Attention(nn.Module):
    def __init__(self, dim, heads, dropout, impl):
        super().__init__()
        self.heads, self.dropout, self.impl = heads, dropout, impl
        self.qkv = nn.Linear(dim, 3 * dim, bias=False)
        self.out = nn.Linear(dim, dim, bias=False)

    def forward(self, x):
        b, s, d = x.shape
        q, k, v = self.qkv(x).view(b, s, 3, self.heads, d // self.heads).unbind(dim=2)  # each (B, S, H, D)
        p = self.dropout if self.training else 0.0
        if self.impl == "flash":
            y = flash_attn_func(q, k, v, dropout_p=p, softmax_scale=1 / math.sqrt(q.shape[-1]), causal=True)
        else:
            bias = alibi_bias(self.heads, s, x.device).to(q.dtype).expand(b, -1, -1, -1)
            y = xops.memory_efficient_attention(q, k, v, attn_bias=bias, p=p)
        return self.out(y.reshape(b, s, d))


class Block(nn.Module):
    def __init__(self, dim, heads, dropout, impl):
        super().__init__()
        self.ln1, self.ln2 = FusedLayerNorm(dim), FusedLayerNorm(dim)
        self.attn = Attention(dim, heads, dropout, impl)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class TinyGPT(nn.Module):
    def __init__(self, vocab, dim=128, heads=4, layers=2, seq=64, dropout=0.1, impl="flash"):
        super().__init__()
        self.tok, self.pos = nn.Embedding(vocab, dim), nn.Embedding(seq, dim)
        self.blocks = nn.Sequential(*[Block(dim, heads, dropout, impl) for _ in range(layers)])
        self.ln, self.head = FusedLayerNorm(dim), nn.Linear(dim, vocab)

    def forward(self, idx):
        x = self.tok(idx) + self.pos(torch.arange(idx.shape[1], device=idx.device))
        return self.head(self.ln(self.blocks(x)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--attn", choices=["flash", "xformers"], default="flash")
    ap.add_argument("--optim", choices=["fused", "8bit"], default="fused")
    ap.add_argument("--steps", type=int, default=2000)
    args = ap.parse_args()

    from pydoc_data.topics import topics

    text = "\n".join(topics[k] for k in sorted(topics))
    chars = sorted(set(text))
    stoi = {c: i for i, c in enumerate(chars)}
    data = torch.tensor([stoi[c] for c in text]).cuda()

    model = TinyGPT(len(chars), impl=args.attn).cuda()
    if args.optim == "8bit":
        opt = bnb.optim.AdamW8bit(model.parameters(), lr=3e-3)
    else:
        opt = FusedAdam(model.parameters(), lr=3e-3)
    model, opt = amp.initialize(model, opt, opt_level="O2")

    for step in range(args.steps):
        i = torch.randint(0, len(data) - 65, (32,)).cuda()
        batch = torch.stack([data[j : j + 65] for j in i])
        logits = model(batch[:, :-1])
        loss = nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]).float(), batch[:, 1:].reshape(-1))
        opt.zero_grad()
        with amp.scale_loss(loss, opt) as scaled:
            scaled.backward()
        opt.step()
        if step % 100 == 0:
            print(f"step {step}: loss {loss.item():.3f}")
    torch.save(model.state_dict(), "tiny_gpt.pt")


if __name__ == "__main__":
    main()
