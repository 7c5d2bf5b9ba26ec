"""Lesson 03's exercises: 03a (load a multi-GPU checkpoint here), 03b (save it so it loads anywhere)."""

from __future__ import annotations

from helpers.exercises.core import check, portcheck_hint, say
from helpers.exercises.simulated import on_gpu, simulated_gpu


@check("03a")
def check_checkpoint_loader(load_model, path, expected_state):
    """Exercise 03a: load a DataParallel checkpoint (`module.` keys, saved from a GPU) onto the device it is given:
    the CPU here, and a GPU (simulated)."""
    import torch

    if not callable(load_model):
        return False, say("core.define", "define a function `{signature}`", signature="load_model(path, device)")
    hint = portcheck_hint(load_model, rules=("PC101", "PC104"))
    if hint:
        return False, hint
    try:
        model = load_model(path, torch.device("cpu"))
    except RuntimeError as e:
        if "module." not in str(e):
            raise
        return False, say(
            "03a.prefix",
            "the checkpoint's keys start with 'module.' (it was saved from nn.DataParallel "
            "or DDP) and the plain model's do not: remove that prefix from every key before "
            "load_state_dict (PyTorch has a helper for it: step 4)",
        )
    if not isinstance(model, torch.nn.Module):
        return False, say(
            "03a.not_module",
            "load_model returned {kind}, expected the nn.Module with the weights loaded",
            kind=type(model).__name__,
        )
    state = model.state_dict()
    if any(k.startswith("module.") for k in state):
        return False, say(
            "03a.wrapped", "the model's own keys start with 'module.': load into the plain model, not a wrapped one"
        )
    for k, v in expected_state.items():
        if k not in state or not torch.equal(state[k].cpu(), v):
            return False, say(
                "03a.differs",
                "weight {name} differs from the checkpoint: every tensor of it must load "
                "(strict=False skips the keys it does not know)",
                name=k,
            )
    with simulated_gpu():
        on_the_gpu = load_model(path, torch.device("cuda"))  # portcheck: ignore=PC101 (a simulated GPU)
        where = {on_gpu(p) for p in on_the_gpu.parameters()}
    if where != {True}:
        return False, say(
            "03a.stayed", "asked for a GPU (simulated here), the model stayed on the CPU: move it to `device`"
        )
    return True, say(
        "03a.done", "prefix stripped, mapped onto the device it was given (the CPU, and a simulated GPU), weights equal"
    )


@check("03b")
def check_portable_save(save, wrapped):
    """Exercise 03b: save a wrapped (DataParallel/DDP) model so that it loads anywhere."""
    import pickle
    import tempfile
    from pathlib import Path

    import torch

    if not callable(save):
        return False, say("core.define", "define a function `{signature}`", signature="save_portable(wrapped, path)")
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "ckpt.pt"
        save(wrapped, path)
        if not path.exists():
            return False, say("03b.nothing", "nothing was written to the path given ({name})", name=path.name)
        try:
            state = torch.load(path, map_location="cpu", weights_only=True)
        except pickle.UnpicklingError:
            return False, say(
                "03b.pickled",
                "that file holds a pickled model object, which loads only where its class "
                "can be imported: save a state_dict, a dict of tensors",
            )
    if not isinstance(state, dict):
        return False, say("03b.not_dict", "save a state_dict (a dict of tensors), not the model object")
    if any(k.startswith("module.") for k in state):
        return False, say(
            "03b.prefix", "the keys still start with 'module.': save the weights of the model inside the wrapper"
        )
    inner = wrapped.module.state_dict()
    if set(state) != set(inner):
        return False, say("03b.keys", "the keys differ from the plain model's: save the inner model's state_dict")
    return True, say("03b.done", "plain keys: loads into an unwrapped model on any machine")
