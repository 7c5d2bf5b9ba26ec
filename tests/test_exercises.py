"""The lessons' exercises: both sides of every check.

- From the notebooks themselves (the one source of truth): each `exercise` cell as shipped (unsolved) gets a
  specific "not yet" and no exception; the reference solution folded under its check gets "done".
- The checks directly: right answers, the typical wrong answers (each with its own hint), and garbage.
"""

import ast
import json
import linecache
import re
import warnings
from pathlib import Path

import pytest
import torch
from torch import nn

from helpers import exercises as ex

ROOT = Path(__file__).parent.parent
LESSONS = sorted((ROOT / "notebooks").glob("0[1-8]_*.ipynb"))
SOLUTION = re.compile(r"<details><summary>Reference solution.*?```python\n(.*?)```", re.S)


def tags(cell):
    return cell.get("metadata", {}).get("tags", [])


def exercises(path):
    """[(setup or None, starter, check, solution)] in notebook order."""
    cells = json.loads(path.read_text())["cells"]
    out, setup = [], None
    for i, c in enumerate(cells):
        if "exercise-setup" in tags(c):
            setup = "".join(c["source"])
        if "exercise" in tags(c):
            check, sol = cells[i + 1], cells[i + 2]
            assert "exercise-check" in tags(check), f"{path.name}: an exercise cell must be followed by its check"
            m = SOLUTION.search("".join(sol["source"]))
            assert sol["cell_type"] == "markdown" and m, f"{path.name}: the folded reference solution follows the check"
            out.append((setup, "".join(c["source"]), "".join(check["source"]), m.group(1)))
            setup = None
    return out


def run(code, ns, name):
    """Execute a cell like IPython: registered source (so inspect.getsource works), last expression returned."""
    linecache.cache[name] = (len(code), None, code.splitlines(True), name)
    tree = ast.parse(code)
    last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
    exec(compile(tree, name, "exec"), ns)
    return eval(compile(ast.Expression(last.value), name, "eval"), ns) if last else None


def test_every_lesson_has_exercises_with_checks_and_solutions():
    assert len(LESSONS) == 8
    for path in LESSONS:
        assert len(exercises(path)) >= 2, path.name


@pytest.mark.parametrize("path", LESSONS, ids=lambda p: p.name[:2])
def test_shipped_exercises_say_not_yet_and_solutions_pass(path):
    unsolved, solved = {}, {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the starters use deprecated, CUDA-only APIs on purpose
        for n, (setup, starter, check, solution) in enumerate(exercises(path)):
            for ns, code in ((unsolved, starter), (solved, solution)):
                if setup:
                    run(setup, ns, f"<{path.stem} setup {n}>")
                run(code, ns, f"<{path.stem} exercise {n} {'solved' if ns is solved else 'unsolved'}>")
            before = run(check, unsolved, f"<{path.stem} check {n}>")
            after = run(check, solved, f"<{path.stem} check {n} solved>")
            assert isinstance(before, ex.Verdict) and not before.ok and len(before.message) > 20, before
            assert "raised" not in before.message, f"the unsolved exercise should get a hint, not an error: {before}"
            assert isinstance(after, ex.Verdict) and after.ok, after


# ---- the checks, directly: right, typically wrong (each its own hint), garbage --------------------------------


def test_portable_predict_hints():
    ns = {"nn": nn}  # the wrong answer as text, so that portcheck over this test file does not report it
    run("def cuda_only(batch):\n    return nn.Linear(64, 10).cuda()(batch.cuda()).argmax(1).cpu()\n", ns, "<cuda_only>")
    cuda_only = ns["cuda_only"]

    def on_device(batch):
        return nn.Linear(64, 10)(batch).argmax(1)[None]

    def probabilities(batch):
        return nn.Linear(64, 10)(batch).softmax(1)

    assert "PC101" in ex.check_portable_predict(cuda_only).message
    assert "shape (1, 5)" in ex.check_portable_predict(on_device).message
    assert "float32" in ex.check_portable_predict(probabilities).message
    assert ex.check_portable_predict(lambda b: nn.Linear(64, 10)(b).argmax(1)).ok


def test_build_kind_hints():
    assert "test torch.version.hip first" in ex.check_build_kind(lambda t: "cuda" if t.version.cuda else "cpu").message
    assert "CPU build" in ex.check_build_kind(lambda t: "rocm" if t.version.hip else "cuda").message
    assert ex.check_build_kind(lambda t: "rocm" if t.version.hip else "cuda" if t.version.cuda else "cpu").ok


def _step(autocast_dtype=torch.float16, scale=True, use_scaler_step=True, update=True):
    def train_step(model, opt, x, y, scaler):
        with torch.autocast(x.device.type, dtype=autocast_dtype):
            loss = nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        (scaler.scale(loss) if scale else loss).backward()
        scaler.step(opt) if use_scaler_step else opt.step()
        if update:
            scaler.update()

    return train_step


def test_amp_step_hints():
    good = torch.amp.GradScaler("cpu")
    assert ex.check_amp_step(_step(), good).ok
    assert "float32" in ex.check_amp_step(_step(autocast_dtype=torch.float32), good).message
    assert "scaler.step(opt), not opt.step()" in ex.check_amp_step(_step(use_scaler_step=False), good).message
    assert "scaler.update()" in ex.check_amp_step(_step(update=False), good).message
    assert "scaler.scale(loss).backward()" in ex.check_amp_step(_step(scale=False), good).message
    assert "torch.amp.GradScaler" in ex.check_amp_step(_step(), "scaler").message
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        old = torch.cuda.amp.GradScaler()  # portcheck: ignore (the deprecated answer under test)
    assert "deprecated" in ex.check_amp_step(_step(), old).message


def test_speedup_hints():
    from helpers.bench import Result

    fp32, amp = Result("fp32", 0.02, 50.0, None, 5, "cpu"), Result("bf16", 0.01, 100.0, None, 5, "cpu")
    assert ex.check_speedup([fp32, amp], 2.0).ok
    assert "float32 baseline first" in ex.check_speedup([amp, fp32], 0.5).message
    assert "= 2.000" in ex.check_speedup([fp32, amp], 0.5).message
    assert "measure two variants" in ex.check_speedup([], None).message


def test_checkpoint_loader_hints(tmp_path):
    model = nn.Linear(3, 2)
    torch.save({f"module.{k}": v for k, v in model.state_dict().items()}, tmp_path / "c.pt")
    expected = model.state_dict()

    ns = {"nn": nn, "torch": torch}  # the wrong answer as text (see test_portable_predict_hints)
    run("def no_map_location(path, device):\n    m = nn.Linear(3, 2)\n    m.load_state_dict(torch.load(path))\n"
        "    return m\n", ns, "<no_map_location>")  # fmt: skip
    no_map_location = ns["no_map_location"]

    def keeps_prefix(path, device):
        m = nn.Linear(3, 2)
        m.load_state_dict(torch.load(path, map_location=device))
        return m

    def right(path, device):
        m = nn.Linear(3, 2)
        m.load_state_dict({k.removeprefix("module."): v for k, v in torch.load(path, map_location=device).items()})
        return m.to(device)

    assert "PC104" in ex.check_checkpoint_loader(no_map_location, tmp_path / "c.pt", expected).message
    assert "strip the prefix" in ex.check_checkpoint_loader(keeps_prefix, tmp_path / "c.pt", expected).message
    assert ex.check_checkpoint_loader(right, tmp_path / "c.pt", expected).ok
    assert "differs" in ex.check_checkpoint_loader(lambda p, d: nn.Linear(3, 2), tmp_path / "c.pt", expected).message


def test_portable_save_hints():
    wrapped = nn.DataParallel(nn.Linear(3, 2))
    assert "module." in ex.check_portable_save(lambda w, p: torch.save(w.state_dict(), p), wrapped).message
    assert "nothing was written" in ex.check_portable_save(lambda w, p: None, wrapped).message
    assert ex.check_portable_save(lambda w, p: torch.save(w.module.state_dict(), p), wrapped).ok


def test_diagnoses_hints():
    logs = {"a": "RuntimeError: Expected all tensors to be on the same device, but found cuda:0 and cpu!"}
    assert ex.check_diagnoses({"a": "device_mismatch"}, logs).ok
    wrong = ex.check_diagnoses({"a": "out_of_memory"}, logs).message
    assert "not 'out_of_memory'" in wrong and "Expected all tensors" in wrong  # the line to read again
    assert "no answer" in ex.check_diagnoses({}, logs).message
    assert "must be a dict" in ex.check_diagnoses(["device_mismatch"], logs).message


def test_device_follows_input_hints():
    class CpuMask(nn.Module):
        def forward(self, x):
            return x * torch.ones(x.shape[0], 1)

    class Follows(nn.Module):
        def forward(self, x):
            return x * torch.ones(x.shape[0], 1, device=x.device)

    assert "device=x.device" in ex.check_device_follows_input(CpuMask).message
    assert ex.check_device_follows_input(Follows).ok


def test_reduction_offsets_hints():
    assert "lanes 32-63 are never added" in ex.check_reduction_offsets(lambda w: [16, 8, 4, 2, 1]).message
    assert "halve the offset" in ex.check_reduction_offsets(lambda w: [w // 2, 1]).message
    assert ex.check_reduction_offsets(lambda w: [w >> s for s in range(1, w.bit_length())]).ok


def test_lane_masks_hints():
    legacy = "#define WARP_SIZE 32\nv += __shfl_down_sync(0xffffffff, v, o);\n"
    assert "line 1" in ex.check_lane_masks(legacy).message
    mask_only = ex.check_lane_masks("v += __shfl_down_sync(0xffffffff, v, o);").message
    assert "line 1 `v += __shfl_down_sync(0xffffffff" in mask_only and "32-bit lane mask" in mask_only
    assert "keep the shuffle" in ex.check_lane_masks("return v;\n").message
    assert ex.check_lane_masks("for (int o = warpSize / 2; o > 0; o /= 2) v += WARP_SHFL_DOWN(v, o);\n").ok


def test_backend_choice_hints():
    assert "no 'rccl' backend" in ex.check_backend_choice(lambda d, r: "rccl" if r else "nccl").message
    assert "the CPU" in ex.check_backend_choice(lambda d, r: "nccl").message
    assert ex.check_backend_choice(lambda d, r: "nccl" if d == "cuda" else "gloo").ok


@pytest.mark.parametrize(
    "check, args",
    [(ex.check_portable_predict, (None,)), (ex.check_portable_predict, (lambda b: 1 / 0,)),
     (ex.check_build_kind, (42,)), (ex.check_amp_step, (None, None)), (ex.check_speedup, ("x", "y")),
     (ex.check_checkpoint_loader, (None, "/nonexistent", {})), (ex.check_portable_save, (print, None)),
     (ex.check_diagnoses, (None, {})), (ex.check_device_follows_input, (int,)), (ex.check_reduction_offsets, (None,)),
     (ex.check_lane_masks, (None,)), (ex.check_backend_choice, (lambda: None,))],
)  # fmt: skip
def test_garbage_gets_not_yet_never_an_exception(check, args):
    v = check(*args)
    assert isinstance(v, ex.Verdict) and not v.ok and v.message
    assert str(v).startswith("not yet (") and v._repr_markdown_().startswith("**Not yet**")


def test_tunableop_env_hints():
    p = "PYTORCH_TUNABLEOP_"
    record = {p + "ENABLED": "1", p + "RECORD_UNTUNED": "1", p + "TUNING": "0"}
    reuse = {p + "ENABLED": "1", p + "TUNING": "0", p + "FILENAME": "results%d.csv"}
    assert ex.check_tunableop_env(record, reuse).ok
    assert "ENABLED=1" in ex.check_tunableop_env({**record, p + "ENABLED": 1}, reuse).message  # not a string
    assert "RECORD_UNTUNED=1" in ex.check_tunableop_env({p + "ENABLED": "1"}, reuse).message
    assert "TUNING=0 (tune later" in ex.check_tunableop_env({**record, p + "TUNING": "1"}, reuse).message
    no_token = ex.check_tunableop_env(record, {**reuse, p + "FILENAME": "results.csv"})  # ordinal before ".csv"
    assert no_token.ok and "before the extension" in no_token.message
    assert "must be dicts" in ex.check_tunableop_env(None, reuse).message


def test_gpu_timer_hints():
    import time

    def launch_only(fn, device):
        t0 = time.perf_counter()
        fn()
        return time.perf_counter() - t0

    def synced(fn, device):
        torch.cuda.synchronize(device)
        t0 = time.perf_counter()
        fn()
        torch.cuda.synchronize(device)
        return time.perf_counter() - t0

    assert "timed the launch only" in ex.check_gpu_timer(launch_only).message
    assert ex.check_gpu_timer(synced).ok
    assert "return the seconds" in ex.check_gpu_timer(lambda fn, d: None).message


def test_flash_port_hints():
    import torch.nn.functional as F

    def sdpa(q, k, v, causal=True, scale=0.125, layout=True):
        t = (lambda x: x.transpose(1, 2)) if layout else (lambda x: x)
        return t(F.scaled_dot_product_attention(t(q), t(k), t(v), is_causal=causal, scale=scale))

    assert ex.check_flash_port(sdpa).ok
    assert "across heads" in ex.check_flash_port(lambda q, k, v: sdpa(q, k, v, layout=False)).message
    assert "is_causal=True" in ex.check_flash_port(lambda q, k, v: sdpa(q, k, v, causal=False)).message
    assert "scale=0.125" in ex.check_flash_port(lambda q, k, v: sdpa(q, k, v, scale=None)).message
    assert "layout (B, S, H, D)" in ex.check_flash_port(lambda q, k, v: q.sum(1)).message


def test_optional_flash_hints():
    hard = "from flash_attn import flash_attn_func\n\ndef attention(q, k, v):\n    return flash_attn_func(q, k, v)\n"
    assert "PC301" in ex.check_optional_flash(hard).message
    guarded_wrong = "try:\n    import flash_attn\nexcept ImportError:\n    flash_attn = None\n\n\n" \
                    "def attention(q, k, v):\n    return q\n"  # fmt: skip
    assert "fallback must compute" in ex.check_optional_flash(guarded_wrong).message
    assert "define `attention" in ex.check_optional_flash("x = 1\n").message
    assert "PC900" in ex.check_optional_flash("def (:\n").message
