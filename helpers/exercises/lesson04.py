"""Lesson 04's exercises: 04a (read three logs), 04b (a mask on the wrong device)."""

from __future__ import annotations

import re

from helpers.exercises.core import check, say


@check("04a")
def check_diagnoses(answers, logs):
    """Exercise 04a: the category of each error log, as helpers.diagnose names them."""
    from helpers.diagnose import RULES, diagnose

    if not isinstance(answers, dict):
        return False, say("04a.dict", "answers must be a dict: {{log name: category}}")
    categories = {r.category for r in RULES}
    for name, log in logs.items():
        d = diagnose(log)
        if name not in answers or answers[name] in ("?", None, ""):
            return False, say("04a.missing", "no answer for {name!r} yet", name=name)
        if answers[name] not in categories:
            return False, say(
                "04a.unknown",
                "{name}: {answer!r} is not one of the categories printed above",
                name=name,
                answer=answers[name],
            )
        if answers[name] != d.category:
            return False, say(
                "04a.wrong",
                "{name}: not {answer!r}. Read this line again: {line!r}",
                name=name,
                answer=answers[name],
                line=d.matched.strip()[:120],
            )
    return True, say("04a.done", "all logs read right; the fix for each: format_diagnosis(diagnose(log))")


@check("04b")
def check_device_follows_input(module_cls):
    """Exercise 04b: a module whose forward creates tensors on its input's device, in its dtype."""
    import torch

    if not isinstance(module_cls, type):
        return False, say("04b.class", "keep the class: Masked(nn.Module)")
    model = module_cls().to("meta")  # meta tensors: a device that is not the CPU, on every machine
    x = torch.randn(3, 4, device="meta")
    try:
        out = model(x)
    except (RuntimeError, AssertionError) as e:
        if re.search(r"cuda|NVIDIA driver|compiled with CUDA|HIP", str(e)):  # made on the GPU (or no GPU here)
            return False, say(
                "04b.by_name",
                "the mask is made on 'cuda' by name: that device need not exist here, and "
                "is not always the input's: make it where the input is, device=x.device",
            )
        if "device" not in str(e):
            raise
        return False, say(
            "04b.on_cpu",
            "a tensor made in forward() is on the CPU while the input is elsewhere (here: "
            "the meta device, standing in for a GPU): make it where the input is, device=x.device",
        )
    if out.device.type != "meta":
        return False, say(
            "04b.output",
            "the output is on {device}: make new tensors where the input is, device=x.device",
            device=out.device,
        )
    half = model.to(torch.float16)(x.to(torch.float16))
    if half.dtype != torch.float16:
        return False, say(
            "04b.dtype",
            "with a float16 input the output is {dtype}: make the mask in the input's dtype "
            "too (dtype=x.dtype), or it promotes the result",
            dtype=half.dtype,
        )
    return True, say("04b.done", "every tensor follows the input's device and dtype")
