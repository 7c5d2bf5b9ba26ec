"""Lesson 02's exercises: 02a (a safe float16 step), 02b (measure it)."""

from __future__ import annotations

from helpers.exercises.core import check, literal_autocast, portcheck_hint, say


def _run_step(train_step, model, opt, x, y, scaler):
    """Two calls of the learner's step; GradScaler's own complaints about the order of its calls, as hints."""
    try:
        for _ in range(2):
            train_step(model, opt, x, y, scaler)
    except (AssertionError, RuntimeError) as e:
        if "No inf checks" in str(e):
            return say(
                "02a.no_step",
                "scaler.update() found no scaler.step(opt) before it: the scaler must take the optimizer's step",
            )
        if "since the last update" in str(e):
            return say("02a.update_order", "scaler.update() must follow scaler.step(opt), once per step")
        if "_scale is None" in str(e):
            return say(
                "02a.not_scaled",
                "the loss was not scaled before backward(): with float16 the small gradients vanish (section 2)",
            )
        raise
    return None


def _wrong_scaler(scaler):
    """The Message for a scaler that is not a torch.amp.GradScaler, or None."""
    import torch

    if type(scaler).__module__.startswith("torch.cuda"):
        return say(
            "02a.cuda_scaler",
            "torch.cuda.amp.GradScaler is deprecated and tied to the 'cuda' device "
            "(ROCm's too, never MPS or the CPU): torch.amp.GradScaler(device.type)",
        )
    if not isinstance(scaler, torch.amp.GradScaler):
        return say(
            "02a.not_scaler",
            "`scaler` is {kind}: create it with torch.amp.GradScaler(device.type)",
            kind=type(scaler).__name__,
        )
    return None


@check("02a")
def check_amp_step(train_step, scaler):
    """Exercise 02a: an fp16 training step with torch.autocast and a GradScaler used the right way."""
    import torch

    if not callable(train_step):
        return False, say(
            "core.define", "define a function `{signature}`", signature="train_step(model, opt, x, y, scaler)"
        )
    hint = portcheck_hint(train_step) or literal_autocast(train_step)
    if hint:
        return False, hint
    wrong = _wrong_scaler(scaler)
    if wrong:
        return False, wrong
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 2))
    dtypes, grads = [], []
    model[0].register_forward_hook(lambda m, i, o: dtypes.append(o.dtype))

    class Recording(torch.optim.SGD):
        def step(self, closure=None):
            grads.append(max(p.grad.abs().max().item() for p in model.parameters() if p.grad is not None))
            return super().step(closure)

    opt = Recording(model.parameters(), lr=0.01)
    test_scaler = torch.amp.GradScaler("cpu", init_scale=2.0**10)
    x, y = torch.randn(16, 8), torch.randint(0, 2, (16,))
    reference = torch.nn.functional.cross_entropy(model(x), y)
    ref_grad = max(g.abs().max().item() for g in torch.autograd.grad(reference, list(model.parameters())))
    dtypes.clear()
    order = _run_step(train_step, model, opt, x, y, test_scaler)
    if order:
        return False, order
    if not dtypes:
        return False, say("02a.no_forward", "train_step never ran the model: call model(x) inside it")
    if dtypes[0] != torch.float16:
        return False, say(
            "02a.dtype",
            "the forward pass ran in {ran}, on the CPU here: wrap it in torch.autocast for "
            "the device of the data, x.device.type, with dtype=torch.float16",
            ran=dtypes[0],
        )
    if not grads:
        return False, say(
            "02a.never_stepped", "the optimizer never stepped: the scaler takes the step (it unscales, then steps)"
        )
    if grads[0] > 100 * ref_grad:
        return False, say(
            "02a.scaled_grads",
            "the optimizer saw the scaled gradients (x1024 here): let the scaler take the step, it unscales",
        )
    if test_scaler.state_dict().get("_growth_tracker", 0) == 0:
        return False, say(
            "02a.scale_still", "the scale never moved: scale the loss, let the scaler step, then update it (section 3)"
        )
    return True, say("02a.done", "float16 autocast, scaled backward, unscaled step, scale updated")


@check("02b")
def check_speedup(results, speedup):
    """Exercise 02b: two helpers.bench results (fp32 first) and the speed-up computed from them."""
    if not isinstance(results, list | tuple) or len(results) < 2:
        return False, say(
            "02b.list", "measure two variants with helpers.bench.measure and put the results in a list: [fp32, amp]"
        )
    base, amp = results[0], results[1]
    if not all(hasattr(r, "items_per_s") for r in (base, amp)):
        return False, say("02b.results", "the list must hold helpers.bench.measure results (they carry .items_per_s)")
    if "32" not in base.label:
        return False, say(
            "02b.order", "the first result is {label!r}: put the float32 baseline first", label=base.label
        )
    if abs(base.items_per_s * base.median_s - amp.items_per_s * amp.median_s) > 1e-6 * base.items_per_s:
        return False, say(
            "02b.items", "the two measurements count different items per step: give both items = the batch size"
        )
    want = amp.items_per_s / base.items_per_s
    if not isinstance(speedup, int | float) or abs(speedup - want) > 1e-6 * want:
        return False, say(
            "02b.speedup",
            "speedup is the low-precision throughput over float32's: "
            "results[1].items_per_s / results[0].items_per_s = {want:.3f} here, not {got!r}",
            want=want,
            got=speedup,
        )
    if want > 1:
        return True, say("02b.faster", "{label} runs at {x:.2f}x float32 here: faster", label=amp.label, x=want)
    return True, say(
        "02b.slower",
        "{label} runs at {x:.2f}x float32 here: slower (expected on a CPU without fp16 units)",
        label=amp.label,
        x=want,
    )
