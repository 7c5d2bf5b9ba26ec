"""Train a small character-level GPT: the port of legacy_transformer_cuda.py (lesson 08).

    python transformer_portable.py --attn flash|xformers --optim fused|8bit --steps 2000

PyTorch's own ops only, so it runs on NVIDIA (CUDA), AMD (ROCm), Apple (MPS) and the CPU:
flash-attn and xformers -> F.scaled_dot_product_attention, apex amp -> torch.autocast + torch.amp.GradScaler,
apex FusedAdam -> torch.optim.AdamW(fused=...), FusedLayerNorm -> nn.LayerNorm, bitsandbytes AdamW8bit -> AdamW.
"""

import argparse
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")  # AMD GPUs are "cuda" too


def alibi_bias(heads, seq, device):
    """ALiBi: a per-head linear penalty on distance, plus the causal mask (an additive float mask)."""
    slopes = torch.tensor([2 ** (-8 * (h + 1) / heads) for h in range(heads)], device=device)
    pos = torch.arange(seq, device=device)
    dist = (pos[None, :] - pos[:, None]).clamp(max=0).float()
    bias = slopes[:, None, None] * dist[None]
    return bias.masked_fill(pos[None, :] > pos[:, None], float("-inf"))  # (heads, seq, seq)


def attention(q, k, v, dropout_p=0.0, causal=False, bias=None, scale=None):
    """flash_attn_func / xops.memory_efficient_attention on SDPA. q, k, v and the result: (B, S, H, D).

    SDPA wants (B, H, S, D): transpose in and out. `bias` (broadcastable to (B, H, S, S)) is added to the scores;
    SDPA refuses is_causal together with a mask, so a causal bias carries its own -inf above the diagonal.
    """
    q, k, v = (t.transpose(1, 2) for t in (q, k, v))
    y = F.scaled_dot_product_attention(q, k, v, attn_mask=bias, dropout_p=dropout_p, is_causal=causal, scale=scale)
    return y.transpose(1, 2)


class Attention(nn.Module):
    def __init__(self, dim, heads, dropout, impl):
        super().__init__()
        self.heads, self.dropout, self.impl = heads, dropout, impl
        self.qkv = nn.Linear(dim, 3 * dim, bias=False)
        self.out = nn.Linear(dim, dim, bias=False)

    def forward(self, x):
        b, s, d = x.shape
        q, k, v = self.qkv(x).view(b, s, 3, self.heads, d // self.heads).unbind(dim=2)  # each (B, S, H, D)
        p = self.dropout if self.training else 0.0  # flash-attn leaves this to the caller; so does SDPA
        if self.impl == "flash":
            y = attention(q, k, v, dropout_p=p, scale=1 / math.sqrt(q.shape[-1]), causal=True)
        else:
            bias = alibi_bias(self.heads, s, x.device).to(q.dtype).expand(b, -1, -1, -1)
            y = attention(q, k, v, dropout_p=p, bias=bias)
        return self.out(y.reshape(b, s, d))


class Block(nn.Module):
    def __init__(self, dim, heads, dropout, impl):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
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
        self.ln, self.head = nn.LayerNorm(dim), nn.Linear(dim, vocab)

    def forward(self, idx):
        x = self.tok(idx) + self.pos(torch.arange(idx.shape[1], device=idx.device))
        return self.head(self.ln(self.blocks(x)))


def load_text():
    """The Python reference manual's topics: real English text that ships with every CPython (pydoc_data)."""
    from pydoc_data.topics import topics

    return "\n".join(topics[k] for k in sorted(topics))


def make_optimizer(params, device, lr=3e-3):
    """apex FusedAdam (AdamW maths, weight decay 0) and bitsandbytes AdamW8bit both become torch.optim.AdamW.

    fused=True: one kernel for the whole update. torch >= 2.5 has it for CUDA and ROCm GPUs (device type "cuda"),
    the CPU (2.4) and MPS (2.5). AdamW's own default weight decay is 0.01: pass 0.0 to keep apex's maths.
    """
    fused = device.type in ("cuda", "cpu", "mps")
    return torch.optim.AdamW(params, lr=lr, weight_decay=0.0, fused=fused)


def train(model, data, opt, device, steps, amp_dtype=None, batch=32, seq=64, seed=0, progress=iter):
    """`steps` optimizer steps on random windows of `data` (a 1-D tensor of token ids); returns the losses."""
    scaler = torch.amp.GradScaler(device.type, enabled=amp_dtype == torch.float16)  # fp16 only; bf16 needs none
    g = torch.Generator().manual_seed(seed)
    losses = []
    model.train()
    for _ in progress(range(steps)):
        i = torch.randint(0, len(data) - seq - 1, (batch,), generator=g)
        window = torch.stack([data[j : j + seq + 1] for j in i]).to(device)
        with torch.autocast(device.type, dtype=amp_dtype or torch.float32, enabled=amp_dtype is not None):
            logits = model(window[:, :-1])
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]).float(), window[:, 1:].reshape(-1))
        opt.zero_grad(set_to_none=True)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        losses.append(loss.item())
    return losses


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--attn", choices=["flash", "xformers"], default="flash")
    ap.add_argument("--optim", choices=["fused", "8bit"], default="fused")  # both: torch.optim.AdamW now
    ap.add_argument("--steps", type=int, default=2000)
    args = ap.parse_args()

    text = load_text()
    chars = sorted(set(text))
    stoi = {c: i for i, c in enumerate(chars)}
    data = torch.tensor([stoi[c] for c in text])
    model = TinyGPT(len(chars), impl=args.attn).to(device)
    opt = make_optimizer(model.parameters(), device)
    amp_dtype = torch.bfloat16 if device.type == "cuda" else None  # fp16 GPUs: torch.float16 (a scaler is made)
    losses = train(model, data, opt, device, args.steps, amp_dtype)
    for step in range(0, len(losses), 100):
        print(f"step {step}: loss {losses[step]:.3f}")
    torch.save(model.state_dict(), "tiny_gpt.pt")


if __name__ == "__main__":
    main()
