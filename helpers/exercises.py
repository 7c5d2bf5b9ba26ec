"""Checks for the lessons' exercises: each looks at what the learner wrote and answers with a precise hint.

A check never raises: it returns a :class:`Verdict` (done or "not yet", and what to do next), which shows itself
in Jupyter. So a notebook run top to bottom with the exercises unsolved still finishes (nbval, papermill), and
every "not yet" says which line, tensor or rank is still wrong.

    >>> from helpers.exercises import check_build_kind
    >>> check_build_kind(lambda torch: "cuda")
    not yet (01b): a ROCm build (torch.version.hip='7.1', torch.version.cuda=None) got 'cuda', expected 'rocm' ...
"""

from __future__ import annotations

import functools
import inspect
import re
import textwrap
import types
from dataclasses import dataclass


@dataclass(frozen=True)
class Verdict:
    exercise: str
    ok: bool
    message: str

    def __str__(self) -> str:
        return f"{'done' if self.ok else 'not yet'} ({self.exercise}): {self.message}"

    __repr__ = __str__

    def _repr_markdown_(self) -> str:
        return f"{'**Done**' if self.ok else '**Not yet**'} ({self.exercise}): {self.message}"


def _check(exercise: str):
    """Turn a check into one that never raises: an error in the learner's code becomes a "not yet"."""

    def wrap(fn):
        @functools.wraps(fn)
        def run(*args, **kwargs) -> Verdict:
            try:
                ok, message = fn(*args, **kwargs)
            except Exception as e:  # the learner's code failed: say where, never a traceback
                first = str(e).strip().splitlines()[0][:200] if str(e).strip() else ""
                ok, message = False, f"your code raised {type(e).__name__}: {first}"
            return Verdict(exercise, ok, message)

        return run

    return wrap


def _source(obj) -> str:
    if isinstance(obj, str):
        return textwrap.dedent(obj)
    try:
        return textwrap.dedent(inspect.getsource(obj))
    except (OSError, TypeError):
        return ""


def _portcheck(obj, rules=("PC1",)) -> str | None:
    """The first portcheck finding in the learner's code, as a hint with its line; None when clean."""
    from helpers.portcheck import scan_python

    src = _source(obj)
    for f in scan_python("<your code>", src.encode()):
        if f.rule.startswith(rules):
            line = src.splitlines()[f.line - 1].strip()
            return f"line {f.line} `{line}`: {f.rule} {f.message}. Fix: {f.fix}"
    return None


# ---- lesson 01 -------------------------------------------------------------------------------------------------


@_check("01a")
def check_portable_predict(predict):
    """Exercise 01a: `predict(batch)` runs here (CPU or GPU) and returns class ids on the CPU."""
    import torch

    if not callable(predict):
        return False, "define a function `predict(batch)`"
    hint = _portcheck(predict)
    if hint:
        return False, hint
    out = predict(torch.randn(5, 64))
    if not isinstance(out, torch.Tensor):
        return False, f"predict returned {type(out).__name__}, expected a tensor of class ids"
    if out.device.type != "cpu":
        return False, f"the result is on {out.device}: end with .cpu() so callers can use it anywhere"
    if out.shape != (5,) or out.dtype != torch.int64:
        return False, f"expected 5 class ids (shape (5,), int64), got shape {tuple(out.shape)}, {out.dtype}"
    return True, "portable: no hard-coded CUDA device, runs here, returns CPU class ids"


def _fake_torch(hip, cuda):
    return types.SimpleNamespace(version=types.SimpleNamespace(hip=hip, cuda=cuda))


@_check("01b")
def check_build_kind(build_kind):
    """Exercise 01b: `build_kind(torch)` says "rocm", "cuda" or "cpu" from the build, without touching a GPU."""
    cases = [
        ("a ROCm build (torch.version.hip='7.1', torch.version.cuda=None)", _fake_torch("7.1", None), "rocm"),
        ("a CUDA build (torch.version.hip=None, torch.version.cuda='13.0')", _fake_torch(None, "13.0"), "cuda"),
        ("a CPU build (both None)", _fake_torch(None, None), "cpu"),
    ]
    for what, fake, want in cases:
        got = build_kind(fake)
        if got != want:
            tip = " (on ROCm torch.version.cuda is None: test torch.version.hip first)" if want == "rocm" else ""
            return False, f"{what} got {got!r}, expected {want!r}{tip}"
    return True, "right on ROCm, CUDA and CPU builds"


# ---- lesson 02 -------------------------------------------------------------------------------------------------


@_check("02a")
def check_amp_step(train_step, scaler):
    """Exercise 02a: an fp16 training step with torch.autocast and a GradScaler used the right way."""
    import torch

    hint = _portcheck(train_step)
    if hint:
        return False, hint
    if type(scaler).__module__.startswith("torch.cuda"):
        return False, "torch.cuda.amp.GradScaler is deprecated and CUDA-only: torch.amp.GradScaler(device.type)"
    if not isinstance(scaler, torch.amp.GradScaler):
        return False, f"`scaler` is {type(scaler).__name__}: create it with torch.amp.GradScaler(device.type)"
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
    try:
        for _ in range(2):
            train_step(model, opt, x, y, test_scaler)
    except (AssertionError, RuntimeError) as e:  # GradScaler's own complaints about the order of its calls
        if "No inf checks" in str(e):
            return False, "scaler.update() found no scaler.step(opt) before it: call scaler.step(opt), not opt.step()"
        if "since the last update" in str(e):
            return False, "call scaler.update() after scaler.step(opt), once per step"
        if "_scale is None" in str(e):
            return False, "the loss was not scaled: scaler.scale(loss).backward() instead of loss.backward()"
        raise
    if not dtypes or dtypes[0] != torch.float16:
        return False, f"the forward pass ran in {dtypes[0] if dtypes else 'nothing'} on the CPU: wrap it in " \
                      "torch.autocast(x.device.type, dtype=torch.float16), the device of the data"  # fmt: skip
    if not grads:
        return False, "the optimizer never stepped: call scaler.step(opt)"
    if grads[0] > 100 * ref_grad:
        return False, "the optimizer saw scaled gradients (x1024 here): call scaler.step(opt) instead of opt.step()"
    if test_scaler.state_dict().get("_growth_tracker", 0) == 0:
        return False, "scale the loss and update the scale: scaler.scale(loss).backward(), scaler.step(opt), " \
                      "scaler.update()"  # fmt: skip
    return True, "float16 autocast, scaled backward, unscaled step, scale updated"


@_check("02b")
def check_speedup(results, speedup):
    """Exercise 02b: two helpers.bench results (fp32 first) and the speed-up computed from them."""
    if not isinstance(results, list | tuple) or len(results) < 2:
        return False, "measure two variants with helpers.bench.measure and put the results in a list: [fp32, amp]"
    base, amp = results[0], results[1]
    if not all(hasattr(r, "items_per_s") for r in (base, amp)):
        return False, "the list must hold helpers.bench.measure results"
    if "32" not in base.label:
        return False, f"the first result is {base.label!r}: put the float32 baseline first"
    want = amp.items_per_s / base.items_per_s
    if not isinstance(speedup, int | float) or abs(speedup - want) > 1e-6 * want:
        return False, f"speedup should be results[1].items_per_s / results[0].items_per_s = {want:.3f}, got {speedup!r}"
    verdict = "faster" if want > 1 else "slower (expected on a CPU without fp16 units)"
    return True, f"{amp.label} runs at {want:.2f}x float32 here: {verdict}"


# ---- lesson 03 -------------------------------------------------------------------------------------------------


@_check("03a")
def check_checkpoint_loader(load_model, path, expected_state):
    """Exercise 03a: load a DataParallel checkpoint (`module.` keys, saved from a GPU) onto this device."""
    import torch

    hint = _portcheck(load_model, rules=("PC101", "PC104"))
    if hint:
        return False, hint
    try:
        model = load_model(path, torch.device("cpu"))
    except RuntimeError as e:
        if "module." not in str(e):
            raise
        return False, "the checkpoint's keys start with 'module.' (saved from DataParallel or DDP): strip the " \
                      "prefix, {k.removeprefix('module.'): v for k, v in state.items()}"  # fmt: skip
    if not isinstance(model, torch.nn.Module):
        return False, f"load_model returned {type(model).__name__}, expected the nn.Module with the weights loaded"
    state = model.state_dict()
    if any(k.startswith("module.") for k in state):
        return False, "the model's keys still start with 'module.': strip the prefix from the checkpoint's keys"
    for k, v in expected_state.items():
        if k not in state or not torch.equal(state[k].cpu(), v):
            return False, f"weight {k} differs from the checkpoint: load every tensor of it"
    return True, "prefix stripped, mapped onto this device, every weight equal"


@_check("03b")
def check_portable_save(save, wrapped):
    """Exercise 03b: save a wrapped (DataParallel/DDP) model so that it loads anywhere."""
    import tempfile
    from pathlib import Path

    import torch

    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "ckpt.pt"
        save(wrapped, path)
        if not path.exists():
            return False, f"nothing was written to the path given ({path.name})"
        state = torch.load(path, map_location="cpu", weights_only=True)
    if not isinstance(state, dict):
        return False, "save a state_dict (a dict of tensors), not the model object"
    if any(k.startswith("module.") for k in state):
        return False, "the keys start with 'module.': save wrapped.module.state_dict(), the inner model's"
    inner = wrapped.module.state_dict()
    if set(state) != set(inner):
        return False, "the keys differ from the inner model's: save wrapped.module.state_dict()"
    return True, "plain keys: loads into an unwrapped model on any machine"


# ---- lesson 04 -------------------------------------------------------------------------------------------------


@_check("04a")
def check_diagnoses(answers, logs):
    """Exercise 04a: the category of each error log, as helpers.diagnose names them."""
    from helpers.diagnose import diagnose

    if not isinstance(answers, dict):
        return False, "answers must be a dict: {log name: category}"
    for name, log in logs.items():
        d = diagnose(log)
        if name not in answers:
            return False, f"no answer for {name!r} yet"
        if answers[name] != d.category:
            return False, f"{name}: not {answers[name]!r}. Read this line again: {d.matched.strip()[:120]!r}"
    return True, "all logs read right; the fix for each: format_diagnosis(diagnose(log))"


@_check("04b")
def check_device_follows_input(module_cls):
    """Exercise 04b: a module whose forward creates tensors on its input's device."""
    import torch

    model = module_cls().to("meta")  # meta tensors: a device that is not the CPU, on every machine
    try:
        out = model(torch.randn(3, 4, device="meta"))
    except RuntimeError as e:
        if "device" not in str(e):
            raise
        return False, f"{str(e).strip().splitlines()[0][:120]}: a tensor made in forward() is on the CPU; " \
                      "create it with device=x.device"  # fmt: skip
    if out.device.type != "meta":
        return False, f"the output is on {out.device}: create new tensors with device=x.device"
    return True, "every tensor follows the input's device"


# ---- lesson 05 -------------------------------------------------------------------------------------------------


def _lane_sum(values, offsets, width):
    """A shuffle-down reduction in a lane model: lane i adds lane i + offset when that lane is in its width."""
    v = list(values)
    for off in offsets:
        v = [v[i] + (v[i + off] if (i % width) + off < width else 0) for i in range(len(v))]
    return v[0]


@_check("05a")
def check_reduction_offsets(offsets_for):
    """Exercise 05a: the shuffle offsets of a wavefront-wide sum, right for 32 and 64 lanes."""
    for wave in (32, 64):
        offsets = list(offsets_for(wave))
        values = list(range(1, wave + 1))
        got = _lane_sum(values, offsets, wave)
        if got != sum(values):
            if offsets and max(offsets) < wave // 2:
                return False, f"on {wave} lanes lane 0 got {got}, not {sum(values)}: lanes {wave // 2}-{wave - 1} " \
                              "are never added; start at warpSize / 2"  # fmt: skip
            return False, f"on {wave} lanes lane 0 got {got}, expected {sum(values)}: halve the offset each step"
    return True, "lane 0 holds the full sum on 32-lane warps and 64-lane wavefronts"


@_check("05b")
def check_lane_masks(cuda_source):
    """Exercise 05b: a CUDA/HIP source without 32-lane assumptions (portcheck PC201, PC202) that still reduces."""
    from helpers.portcheck import scan_cpp

    if not isinstance(cuda_source, str):
        return False, "kernel_source must be the kernel's text (a string)"
    for f in scan_cpp("kernel.cu", cuda_source):
        if f.rule in ("PC201", "PC202"):
            line = cuda_source.splitlines()[f.line - 1].strip()
            return False, f"line {f.line} `{line}`: {f.message}"
    if not re.search(r"shfl", cuda_source, re.I):
        return False, "keep the shuffle reduction (__shfl_down / __shfl_xor): change its width and mask only"
    return True, "no 32-lane constant or 32-bit mask left"


# ---- lesson 06 -------------------------------------------------------------------------------------------------


@_check("06a")
def check_hang_fixed(script_source, timeout=120):
    """Exercise 06a: the two-rank script finishes (run for real with torchrun and gloo on the CPU)."""
    import tempfile
    from pathlib import Path

    from helpers.dist import run_torchrun

    with tempfile.TemporaryDirectory() as d:
        script = Path(d) / "two_ranks.py"
        script.write_text(script_source)
        r = run_torchrun(str(script), nproc=2, timeout=timeout, env={"CUDA_VISIBLE_DEVICES": "-1",
                                                                      "HIP_VISIBLE_DEVICES": "-1"})  # fmt: skip
    if r.timed_out:
        return False, f"still hanging after {timeout} s"
    if r.returncode != 0:
        waited = [ln.strip() for ln in r.output.splitlines() if "imed out" in ln]
        if not waited:
            return False, f"the script failed: {r.output.strip().splitlines()[-1][:160] if r.output.strip() else ''}"
        return False, f"{waited[0].split(': ', 1)[0]} waited in a collective the other rank never called: every " \
                      f"rank must run the same collectives, the same number of times ({waited[0][-70:]})"  # fmt: skip
    if r.output.count("done") < 2:
        return False, "both ranks must print 'done' at the end"
    return True, "both ranks finished"


@_check("06b")
def check_backend_choice(backend_for):
    """Exercise 06b: the torch.distributed backend for a device type, on NVIDIA and AMD."""
    cases = [("cuda", False, "nccl"), ("cuda", True, "nccl"), ("cpu", False, "gloo")]
    for device_type, rocm, want in cases:
        got = backend_for(device_type, rocm)
        if got != want:
            where = "an AMD GPU (ROCm)" if rocm else ("an NVIDIA GPU" if device_type == "cuda" else "the CPU")
            tip = " ('nccl' is RCCL on ROCm; there is no 'rccl' backend)" if rocm else ""
            return False, f"on {where} got {got!r}, expected {want!r}{tip}"
    return True, "'nccl' on NVIDIA and AMD GPUs, 'gloo' on the CPU"


# ---- lesson 07 -------------------------------------------------------------------------------------------------


@_check("07a")
def check_tunableop_env(record_env, reuse_env):
    """Exercise 07a: the environment of an offline-tuning run that records GEMM shapes, and of the runs that reuse
    the tuned results, one file per rank."""
    p = "PYTORCH_TUNABLEOP_"
    if not isinstance(record_env, dict) or not isinstance(reuse_env, dict):
        return False, "record_env and reuse_env must be dicts of environment variables"
    if record_env.get(p + "ENABLED") != "1":
        return False, f"record_env: TunableOp must be on to record anything: {p}ENABLED=1 (values are strings)"
    if record_env.get(p + "RECORD_UNTUNED") != "1":
        return False, f"record_env: only record the shapes while training: {p}RECORD_UNTUNED=1"
    if record_env.get(p + "TUNING") != "0":
        return False, f"record_env: no tuning during the training run: {p}TUNING=0 (tune later, offline)"
    if reuse_env.get(p + "ENABLED") != "1" or reuse_env.get(p + "TUNING") != "0":
        return False, f"reuse_env: use the results without tuning again: {p}ENABLED=1 and {p}TUNING=0"
    # One file per rank needs nothing more: TunableOp inserts the GPU ordinal into the file name itself, at %d or
    # before the extension (Tunable.cpp: SetFilename(filename, true) for PYTORCH_TUNABLEOP_FILENAME and the default).
    return True, (
        "record while training, tune offline (tune_gemm_in_file), reuse: each rank reads its own file, "
        "TunableOp puts the GPU ordinal into the name (at %d, else before the extension)"
    )


@_check("07b")
def check_gpu_timer(time_step):
    """Exercise 07b: `time_step(fn, device)` returns the seconds one call of fn takes, GPU work included."""
    import time as time_module
    from unittest import mock

    import torch

    clock = [0.0]
    pending = []

    def launch():  # a GPU step: returns at once, the work runs on
        clock[0] += 0.001
        pending.append(0.049)

    def synchronize(device=None):  # waiting for the GPU
        clock[0] += sum(pending)
        pending.clear()

    with mock.patch.object(time_module, "perf_counter", lambda: clock[0]), \
            mock.patch.object(torch.cuda, "synchronize", synchronize):  # fmt: skip
        seconds = time_step(launch, torch.device("cuda"))  # portcheck: ignore=PC101 (a fake GPU)
    if not isinstance(seconds, int | float):
        return False, f"time_step returned {type(seconds).__name__}: return the seconds per call, a number"
    if abs(seconds - 0.05) < 1e-6:
        return True, "the clock is read after the GPU finished: asynchronous work is counted"
    if abs(seconds - 0.001) < 1e-6:
        return False, "you timed the launch only (1 ms of 50): GPU work is asynchronous, call " \
                      "torch.cuda.synchronize(device) before reading the clock"  # fmt: skip
    return False, f"got {seconds!r} s for a step that takes 0.05 s: synchronize before each clock read, time one call"


# ---- lesson 08 -------------------------------------------------------------------------------------------------


def _attention_reference(q, k, v, causal, scale):
    import torch

    q, k, v = (t.transpose(1, 2) for t in (q, k, v))
    s = q @ k.transpose(-2, -1) * scale
    if causal:
        n = s.shape[-1]
        s = s.masked_fill(torch.ones(n, n, dtype=torch.bool).triu(1), float("-inf"))
    return (s.softmax(-1) @ v).transpose(1, 2)


@_check("08a")
def check_flash_port(attention):
    """Exercise 08a: `attention(q, k, v)` does what flash_attn_func(q, k, v, causal=True, softmax_scale=0.125)
    does, on flash-attn's (B, S, H, D) tensors."""
    import torch

    hint = _portcheck(attention, rules=("PC3",))
    if hint:
        return False, hint
    torch.manual_seed(0)
    q, k, v = (torch.randn(2, 12, 3, 16) for _ in range(3))  # S=12 != H=3 on purpose
    out = attention(q, k, v)
    want = _attention_reference(q, k, v, True, 0.125)
    if not isinstance(out, torch.Tensor) or out.shape != want.shape:
        got = tuple(out.shape) if isinstance(out, torch.Tensor) else type(out).__name__
        return False, f"the result must keep flash-attn's layout (B, S, H, D) = {tuple(want.shape)}, got {got}"
    if torch.allclose(out, want, atol=1e-5):
        return True, "same maths as flash_attn_func, layout in and out, causal, scaled"
    if torch.allclose(out, _attention_reference(q, k, v, False, 0.125), atol=1e-5):
        return False, "future positions leak in: pass is_causal=True"
    if torch.allclose(out, _attention_reference(q, k, v, True, 0.25), atol=1e-5):
        return False, "the scale is SDPA's default 1/sqrt(16) = 0.25: pass scale=0.125 (flash-attn's softmax_scale)"
    swapped = _attention_reference(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), True, 0.125)
    if torch.allclose(out, swapped.transpose(1, 2), atol=1e-5):
        return False, "attention ran across heads, not positions: transpose (B, S, H, D) to (B, H, S, D) for SDPA " \
                      "and back"  # fmt: skip
    return False, f"differs from flash-attn's result by up to {(out - want).abs().max().item():.3g}"


@_check("08b")
def check_optional_flash(module_source):
    """Exercise 08b: a module that uses flash-attn where it is installed and SDPA everywhere else."""
    import builtins
    from unittest import mock

    import torch

    if not isinstance(module_source, str):
        return False, "module_source must be the module's text (a string)"
    from helpers.portcheck import scan_python

    for f in scan_python("attention.py", module_source.encode()):
        if f.rule.startswith("PC3") or f.rule == "PC900":
            return False, f"line {f.line}: {f.rule} {f.message}: import it inside try/except ImportError"
    real_import = builtins.__import__

    def no_flash(name, *args, **kwargs):  # a machine without flash-attn (an AMD GPU without its ROCm build)
        if name.split(".")[0] == "flash_attn":
            raise ModuleNotFoundError("No module named 'flash_attn'", name="flash_attn")
        return real_import(name, *args, **kwargs)

    ns = {}
    with mock.patch.object(builtins, "__import__", no_flash):
        exec(compile(module_source, "attention.py", "exec"), ns)
    if not callable(ns.get("attention")):
        return False, "define `attention(q, k, v)` in the module"
    torch.manual_seed(0)
    q, k, v = (torch.randn(2, 12, 3, 16) for _ in range(3))
    out = ns["attention"](q, k, v)
    if not torch.allclose(out, _attention_reference(q, k, v, True, 0.125), atol=1e-5):
        return False, "without flash-attn the fallback must compute the same attention (SDPA, causal, scale 0.125)"
    return True, "imports without flash-attn, and the SDPA fallback matches"
