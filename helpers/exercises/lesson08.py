"""Lesson 08's exercises: 08a (port a flash-attn call), 08b (keep flash-attn as an option)."""

from __future__ import annotations

from helpers.exercises.core import check, portcheck_hint, say


def _attention_reference(q, k, v, causal, scale):
    import torch

    q, k, v = (t.transpose(1, 2) for t in (q, k, v))
    s = q @ k.transpose(-2, -1) * scale
    if causal:
        n = s.shape[-1]
        s = s.masked_fill(torch.ones(n, n, dtype=torch.bool).triu(1), float("-inf"))
    return (s.softmax(-1) @ v).transpose(1, 2)


@check("08a")
def check_flash_port(attention):
    """Exercise 08a: `attention(q, k, v)` does what flash_attn_func(q, k, v, causal=True, softmax_scale=0.125)
    does, on flash-attn's (B, S, H, D) tensors."""
    import torch

    hint = portcheck_hint(attention, rules=("PC3",))
    if hint:
        return False, hint
    torch.manual_seed(0)
    q, k, v = (torch.randn(2, 12, 3, 16) for _ in range(3))  # S=12 != H=3 on purpose
    try:
        out = attention(q, k, v)
    except ModuleNotFoundError as e:
        return False, say(
            "08a.needs_flash",
            "{error}: the port must not need flash-attn (most AMD GPUs have no build of "
            "it): write it with torch.nn.functional.scaled_dot_product_attention (section 1's table)",
            error=e,
        )
    want = _attention_reference(q, k, v, True, 0.125)
    if not isinstance(out, torch.Tensor) or out.shape != want.shape:
        got = tuple(out.shape) if isinstance(out, torch.Tensor) else type(out).__name__
        return False, say(
            "08a.layout",
            "the result must keep flash-attn's layout (B, S, H, D) = {want}, got {got}",
            want=tuple(want.shape),
            got=got,
        )
    if torch.allclose(out, want, atol=1e-5):
        return True, say("08a.done", "same maths as flash_attn_func, layout in and out, causal, scaled")
    if torch.allclose(out, _attention_reference(q, k, v, False, 0.125), atol=1e-5):
        return False, say("08a.causal", "future positions leak in: pass is_causal=True")
    if torch.allclose(out, _attention_reference(q, k, v, True, 0.25), atol=1e-5):
        return False, say(
            "08a.scale", "the scale is SDPA's default 1/sqrt(16) = 0.25: pass scale=0.125 (flash-attn's softmax_scale)"
        )
    swapped = _attention_reference(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), True, 0.125)
    if torch.allclose(out, swapped.transpose(1, 2), atol=1e-5):
        return False, say(
            "08a.heads",
            "attention ran across heads, not positions: transpose (B, S, H, D) to (B, H, S, D) for SDPA and back",
        )
    return False, say(
        "08a.differs", "differs from flash-attn's result by up to {diff:.3g}", diff=(out - want).abs().max().item()
    )


@check("08b")
def check_optional_flash(module_source):
    """Exercise 08b: a module that uses flash-attn where it is installed and SDPA everywhere else."""
    import builtins
    from unittest import mock

    import torch

    if not isinstance(module_source, str):
        return False, say("08b.string", "module_source must be the module's text (a string)")
    from helpers.portcheck import scan_python

    for f in scan_python("attention.py", module_source.encode()):
        if f.rule.startswith("PC3") or f.rule == "PC900":
            return False, say(
                "08b.import",
                "line {line}: {rule} {message}: import it inside try/except ImportError",
                line=f.line,
                rule=f.rule,
                message=f.message,
            )
    real_import = builtins.__import__

    def no_flash(name, *args, **kwargs):  # a machine without flash-attn (an AMD GPU without its ROCm build)
        if name.split(".")[0] == "flash_attn":
            raise ModuleNotFoundError("No module named 'flash_attn'", name="flash_attn")
        return real_import(name, *args, **kwargs)

    ns = {}
    with mock.patch.object(builtins, "__import__", no_flash):
        exec(compile(module_source, "attention.py", "exec"), ns)
    if not callable(ns.get("attention")):
        return False, say("08b.define", "define `attention(q, k, v)` in the module")
    torch.manual_seed(0)
    q, k, v = (torch.randn(2, 12, 3, 16) for _ in range(3))
    out = ns["attention"](q, k, v)
    if not torch.allclose(out, _attention_reference(q, k, v, True, 0.125), atol=1e-5):
        return False, say(
            "08b.fallback",
            "without flash-attn the fallback must compute the same attention (SDPA, causal, scale 0.125)",
        )
    return True, say("08b.done", "imports without flash-attn, and the SDPA fallback matches")
