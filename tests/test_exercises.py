# ruff: noqa: E501  (the attempts below are code as a learner types it, one string per line of a cell)
"""The lessons' exercises: both sides of every check.

- From the notebooks themselves (the one source of truth): each `exercise` cell as shipped (unsolved) gets a
  specific "not yet" and no exception; the reference solution folded under its check gets "done".
- The checks directly: right answers, the typical wrong answers (each with its own hint), and garbage.
"""

import ast
import contextlib
import json
import linecache
import re
import warnings
from pathlib import Path

import pytest
import torch
from torch import nn

from helpers import exercises as ex
from helpers.exercises.simulated import simulated_gpu

ROOT = Path(__file__).parent.parent
LESSONS = sorted((ROOT / "notebooks").glob("0[1-8]_*.ipynb"))
SOLUTION = re.compile(r"<details><summary>Reference solution.*?```python\n(.*?)```", re.S)
CJK = re.compile(r"[\u4e00-\u9fff]")


def in_chinese(v):
    """The verdict's message as a zh-CN learner reads it: in Chinese, and not the English text."""
    zh = v.message.translated("zh_CN")
    assert CJK.search(zh) and zh != v.message, (v.key, zh)
    return zh


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
def test_shipped_exercises_say_not_yet_and_solutions_pass(path, monkeypatch):
    monkeypatch.setenv("COURSE_LANG", "zh_CN")  # as a zh-CN learner runs them; the English text is checked below
    unsolved, solved = {}, {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the starters use deprecated torch.cuda.amp APIs on purpose
        for n, (setup, starter, check, solution) in enumerate(exercises(path)):
            for ns, code in ((unsolved, starter), (solved, solution)):
                if setup:
                    run(setup, ns, f"<{path.stem} setup {n}>")
                run(code, ns, f"<{path.stem} exercise {n} {'solved' if ns is solved else 'unsolved'}>")
            before = run(check, unsolved, f"<{path.stem} check {n}>")
            after = run(check, solved, f"<{path.stem} check {n} solved>")
            assert isinstance(before, ex.Verdict) and not before.ok and len(before.message) > 10, before
            assert before.key != "core.raised", f"the unsolved exercise should get a hint, not an error: {before}"
            assert isinstance(after, ex.Verdict) and after.ok, after
            assert CJK.search(before.message) and CJK.search(after.message), (before, after)
            assert not CJK.search(before.message.translated("en") + after.message.translated("en")), (before, after)


# ---- every exercise: the wrong attempts a learner makes first, each with its own hint; two right answers ----------
#
# Each attempt is the exercise cell as a learner would write it. It runs after the lesson's setup cell, then the check
# cell from the notebook runs, as in JupyterLab. "wrong": (what it is, its code, a phrase its hint must contain).


PREDICT_MODEL = "nn.Sequential(nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, 10))"
ATTEMPTS = {
    "01a": {
        "wrong": [
            (
                "keeps .cuda()",
                f"def predict(batch):\n    model = {PREDICT_MODEL}.cuda()\n"
                "    return model(batch.cuda()).argmax(dim=1).cpu()\n",
                "PC101",
            ),
            (
                "hard-codes the CPU",
                f"def predict(batch):\n    device = torch.device('cpu')\n"
                f"    model = {PREDICT_MODEL}.to(device)\n    return model(batch.to(device)).argmax(dim=1).cpu()\n",
                "still computes on the CPU",
            ),
            (
                "forgets .cpu()",
                f"def predict(batch):\n    device = pick_device()\n    model = {PREDICT_MODEL}.to(device)\n"
                "    return model(batch.to(device)).argmax(dim=1)\n",
                "end with .cpu()",
            ),
            (
                "current_accelerator() unchecked (section 3's trap)",
                "def predict(batch):\n"
                "    device = torch.accelerator.current_accelerator()\n"
                f"    model = {PREDICT_MODEL}.to(device)\n    return model(batch.to(device)).argmax(dim=1).cpu()\n",
                "check_available=True",
            ),
            (
                "moves the model, not the batch",
                f"def predict(batch):\n    device = pick_device()\n"
                f"    model = {PREDICT_MODEL}.to(device)\n    return model(batch).argmax(dim=1).cpu()\n",
                "move every input",
            ),
        ],
        "right": [
            (
                "pick_device()",
                f"def predict(batch):\n    device = pick_device()\n    model = {PREDICT_MODEL}.to(device)\n"
                "    return model(batch.to(device)).argmax(dim=1).cpu()\n",
            ),
            (
                "current_accelerator(check_available=True)",
                "def predict(batch):\n"
                "    device = torch.accelerator.current_accelerator(check_available=True) or torch.device('cpu')\n"
                f"    model = {PREDICT_MODEL}.to(device)\n    return model(batch.to(device)).argmax(dim=1).cpu()\n",
            ),
            (
                "torch.cuda.is_available()",
                "def predict(batch):\n"
                "    device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
                f"    model = {PREDICT_MODEL}.to(device)\n    x = batch.to(device, non_blocking=True)\n"
                "    return model(x).argmax(dim=1).to('cpu')\n",
            ),
        ],
        "imports": "import torch\nfrom torch import nn\n\nfrom helpers.device import pick_device\n\n",
    },
    "01b": {
        "wrong": [
            (
                "asks torch.cuda",
                "def build_kind(torch):\n    return 'cuda' if torch.cuda.is_available() else 'cpu'\n",
                "decide from torch.version.hip and torch.version.cuda only",
            ),
            (
                "reads the version string",
                "def build_kind(torch):\n    v = torch.__version__\n"
                "    return 'rocm' if '+rocm' in v else 'cuda' if '+cu' in v else 'cpu'\n",
                "habit of the wheel indexes",
            ),
            (
                "says 'hip'",
                "def build_kind(torch):\n    if torch.version.hip:\n        return 'hip'\n"
                "    return 'cuda' if torch.version.cuda else 'cpu'\n",
                "'rocm', 'cuda' and 'cpu'",
            ),
            (
                "forgets the CPU build",
                "def build_kind(torch):\n    return 'rocm' if torch.version.hip else 'cuda'\n",
                "a CPU build",
            ),
        ],
        "right": [
            (
                "hip first",
                "def build_kind(torch):\n    if torch.version.hip:\n        return 'rocm'\n"
                "    return 'cuda' if torch.version.cuda else 'cpu'\n",
            ),
            (
                "cuda first (None on ROCm)",
                "def build_kind(torch):\n    if torch.version.cuda:\n        return 'cuda'\n"
                "    return 'rocm' if torch.version.hip else 'cpu'\n",
            ),
        ],
    },
    "02a": {
        "wrong": [
            (
                "torch.cuda.amp",
                "scaler = torch.cuda.amp.GradScaler()\n\n\ndef train_step(model, opt, x, y, scaler):\n"
                "    with torch.cuda.amp.autocast():\n        loss = F.cross_entropy(model(x), y)\n"
                "    scaler.scale(loss).backward()\n    scaler.step(opt)\n    scaler.update()\n",
                "PC102",
            ),
            (
                "autocast 'cuda' by name",
                "scaler = torch.amp.GradScaler('cpu')\n\n\n"
                "def train_step(model, opt, x, y, scaler):\n    with torch.autocast('cuda', dtype=torch.float16):\n"
                "        loss = F.cross_entropy(model(x), y)\n    opt.zero_grad()\n    scaler.scale(loss).backward()\n"
                "    scaler.step(opt)\n    scaler.update()\n",
                "x.device.type",
            ),
            (
                "opt.step(), not the scaler's",
                "scaler = torch.amp.GradScaler('cpu')\n\n\n"
                "def train_step(model, opt, x, y, scaler):\n    with torch.autocast(x.device.type, dtype=torch.float16):\n"
                "        loss = F.cross_entropy(model(x), y)\n    opt.zero_grad()\n    scaler.scale(loss).backward()\n"
                "    opt.step()\n    scaler.update()\n",
                "the scaler must take the optimizer's step",
            ),
            (
                "no scaling",
                "scaler = torch.amp.GradScaler('cpu')\n\n\ndef train_step(model, opt, x, y, scaler):\n"
                "    with torch.autocast(x.device.type, dtype=torch.float16):\n        loss = F.cross_entropy(model(x), y)\n"
                "    opt.zero_grad()\n    loss.backward()\n    scaler.step(opt)\n    scaler.update()\n",
                "not scaled",
            ),
            (
                "bfloat16 instead",
                "scaler = torch.amp.GradScaler('cpu')\n\n\ndef train_step(model, opt, x, y, scaler):\n"
                "    with torch.autocast(x.device.type, dtype=torch.bfloat16):\n        loss = F.cross_entropy(model(x), y)\n"
                "    opt.zero_grad()\n    scaler.scale(loss).backward()\n    scaler.step(opt)\n    scaler.update()\n",
                "ran in torch.bfloat16",
            ),
        ],
        "right": [
            (
                "torch.autocast",
                "scaler = torch.amp.GradScaler('cpu')\n\n\ndef train_step(model, opt, x, y, scaler):\n"
                "    with torch.autocast(x.device.type, dtype=torch.float16):\n        loss = F.cross_entropy(model(x), y)\n"
                "    opt.zero_grad(set_to_none=True)\n    scaler.scale(loss).backward()\n    scaler.step(opt)\n"
                "    scaler.update()\n",
            ),
            (
                "torch.amp.autocast, keywords",
                "scaler = torch.amp.GradScaler(device='cpu')\n\n\n"
                "def train_step(model, opt, x, y, scaler):\n    opt.zero_grad()\n"
                "    with torch.amp.autocast(device_type=x.device.type, dtype=torch.float16):\n"
                "        out = model(x)\n    loss = F.cross_entropy(out.float(), y)\n    scaler.scale(loss).backward()\n"
                "    scaler.step(opt)\n    scaler.update()\n",
            ),
        ],
        "imports": "import torch\nimport torch.nn.functional as F\n\n",
    },
    "02b": {
        "wrong": [
            (
                "float16 first",
                "results = [measure(step16, label='fp16', items=64, min_run_time=0.05), "
                "measure(step32, label='fp32', items=64, min_run_time=0.05)]\n"
                "speedup = results[0].items_per_s / results[1].items_per_s\n",
                "float32 baseline first",
            ),
            (
                "the speed-up upside down",
                "results = [measure(step32, label='fp32', items=64, min_run_time=0.05), "
                "measure(step16, label='fp16', items=64, min_run_time=0.05)]\n"
                "speedup = results[0].items_per_s / results[1].items_per_s\n",
                "over float32's",
            ),
            (
                "seconds, not results",
                "results = [0.02, 0.03]\nspeedup = 0.02 / 0.03\n",
                "helpers.bench.measure results",
            ),
            (
                "different items",
                "results = [measure(step32, label='fp32', min_run_time=0.05), "
                "measure(step16, label='fp16', items=64, min_run_time=0.05)]\n"
                "speedup = results[1].items_per_s / results[0].items_per_s\n",
                "different items",
            ),
        ],
        "right": [
            (
                "fp32 then fp16",
                "results = [measure(step32, label='fp32', items=64, min_run_time=0.05), "
                "measure(step16, label='fp16 + scaler', items=64, min_run_time=0.05)]\n"
                "speedup = results[1].items_per_s / results[0].items_per_s\n",
            ),
            (
                "other labels, median time",
                "a = measure(step32, label='float32', items=64, min_run_time=0.05)\n"
                "b = measure(step16, label='float16', items=64, min_run_time=0.05)\nresults = [a, b]\n"
                "speedup = a.median_s / b.median_s\n",
            ),
        ],
        "imports": "import torch\n\nfrom helpers.bench import measure\n\n_m = torch.nn.Linear(32, 8)\n_x = torch.randn(64, 32)\n"
        "def step32():\n    _m(_x).sum().backward()\n\n\ndef step16():\n"
        "    with torch.autocast('cpu', dtype=torch.bfloat16):\n        _m(_x).sum().backward()\n\n\n",
    },
    "03a": {
        "wrong": [
            (
                "no map_location",
                f"def load_model(path, device):\n    model = {PREDICT_MODEL}\n"
                "    model.load_state_dict(torch.load(path))\n    return model.to(device)\n",
                "PC104",
            ),
            (
                "keeps the prefix",
                f"def load_model(path, device):\n    model = {PREDICT_MODEL}\n"
                "    model.load_state_dict(torch.load(path, map_location=device))\n    return model.to(device)\n",
                "remove that prefix",
            ),
            (
                "strict=False",
                f"def load_model(path, device):\n    model = {PREDICT_MODEL}\n"
                "    model.load_state_dict(torch.load(path, map_location=device), strict=False)\n    return model.to(device)\n",
                "strict=False",
            ),
            (
                "ignores `device`",
                f"def load_model(path, device):\n    model = {PREDICT_MODEL}\n"
                "    state = torch.load(path, map_location='cpu')\n"
                "    model.load_state_dict({k.removeprefix('module.'): v for k, v in state.items()})\n    return model\n",
                "stayed on the CPU",
            ),
        ],
        "right": [
            (
                "map_location=device",
                f"def load_model(path, device):\n    model = {PREDICT_MODEL}\n"
                "    state = torch.load(path, map_location=device)\n"
                "    model.load_state_dict({k.removeprefix('module.'): v for k, v in state.items()})\n    return model.to(device)\n",
            ),
            (
                "consume_prefix_in_state_dict_if_present",
                f"def load_model(path, device):\n    model = {PREDICT_MODEL}\n"
                "    state = torch.load(path, map_location='cpu', weights_only=True)\n"
                "    nn.modules.utils.consume_prefix_in_state_dict_if_present(state, 'module.')\n"
                "    model.load_state_dict(state)\n    return model.to(device)\n",
            ),
        ],
    },
    "03b": {
        "wrong": [
            (
                "the wrapper's state_dict",
                "def save_portable(wrapped, path):\n    torch.save(wrapped.state_dict(), path)\n",
                "still start with 'module.'",
            ),
            (
                "the model object",
                "def save_portable(wrapped, path):\n    torch.save(wrapped.module, path)\n",
                "pickled model object",
            ),
            (
                "another file",
                "def save_portable(wrapped, path):\n    torch.save(wrapped.module.state_dict(), path.with_name('model.pt'))\n",
                "nothing was written",
            ),
        ],
        "right": [
            (
                "the inner model's",
                "def save_portable(wrapped, path):\n    torch.save(wrapped.module.state_dict(), path)\n",
            ),
            (
                "prefix removed",
                "def save_portable(wrapped, path):\n    state = wrapped.state_dict()\n"
                "    nn.modules.utils.consume_prefix_in_state_dict_if_present(state, 'module.')\n    torch.save(state, path)\n",
            ),
        ],
    },
    "04a": {
        "wrong": [
            (
                "guessed",
                "answers = {'log_a': 'device_permissions', 'log_b': 'device_mismatch', 'log_c': 'miopen_kdb'}\n",
                "Read this line again",
            ),
            (
                "not a category",
                "answers = {'log_a': 'hipErrorInvalidDeviceFunction', 'log_b': 'device_mismatch', "
                "'log_c': 'miopen_kdb'}\n",
                "not one of the categories",
            ),
            (
                "one missing",
                "answers = {'log_a': 'arch_not_supported', 'log_b': 'device_mismatch'}\n",
                "no answer for 'log_c'",
            ),
        ],
        "right": [
            (
                "by reading",
                "answers = {'log_a': 'arch_not_supported', 'log_b': 'device_mismatch', 'log_c': 'miopen_kdb'}\n",
            ),
            (
                "by asking diagnose",
                "from helpers.diagnose import diagnose\n\n"
                "answers = {name: diagnose(log).category for name, log in logs.items()}\n",
            ),
        ],
    },
    "04b": {
        "wrong": [
            (
                "a CPU mask",
                "class Masked(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
                "        self.linear = nn.Linear(4, 4)\n\n    def forward(self, x):\n"
                "        return self.linear(x) * torch.ones(x.shape[0], 1)\n",
                "device=x.device",
            ),
            (
                "'cuda' by name",
                "class Masked(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
                "        self.linear = nn.Linear(4, 4)\n\n    def forward(self, x):\n"
                "        return self.linear(x) * torch.ones(x.shape[0], 1, device='cuda')\n",
                "by name",
            ),
            (
                "the device, not the dtype",
                "class Masked(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
                "        self.linear = nn.Linear(4, 4)\n\n    def forward(self, x):\n"
                "        return self.linear(x) * torch.ones(x.shape[0], 1, device=x.device, dtype=torch.float32)\n",
                "dtype=x.dtype",
            ),
        ],
        "right": [
            (
                "device= and dtype=",
                "class Masked(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
                "        self.linear = nn.Linear(4, 4)\n\n    def forward(self, x):\n"
                "        keep = torch.ones(x.shape[0], 1, device=x.device, dtype=x.dtype)\n        return self.linear(x) * keep\n",
            ),
            (
                "new_ones",
                "class Masked(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
                "        self.linear = nn.Linear(4, 4)\n\n    def forward(self, x):\n"
                "        return self.linear(x) * x.new_ones(x.shape[0], 1)\n",
            ),
        ],
        "imports": "import torch\nfrom torch import nn\n\n",
    },
    "05a": {
        "wrong": [
            ("the warp-32 list", "def offsets_for(wave):\n    return [16, 8, 4, 2, 1]\n", "are never added"),
            ("one offset", "def offsets_for(wave):\n    return [wave // 2]\n", "halve the offset"),
            (
                "true division",
                "def offsets_for(wave):\n    out, o = [], wave / 2\n    while o >= 1:\n"
                "        out.append(o)\n        o /= 2\n    return out\n",
                "whole numbers",
            ),
        ],
        "right": [
            (
                "halving",
                "def offsets_for(wave):\n    offsets, offset = [], wave // 2\n    while offset > 0:\n"
                "        offsets.append(offset)\n        offset //= 2\n    return offsets\n",
            ),
            ("shifts", "def offsets_for(wave):\n    return [wave >> s for s in range(1, wave.bit_length())]\n"),
        ],
    },
    "05b": {
        "wrong": [
            (
                "the mask kept",
                'kernel_source = r"""\n__device__ float warp_sum(float v) {\n'
                "  for (int offset = warpSize / 2; offset > 0; offset /= 2)\n"
                '    v += __shfl_down_sync(0xffffffff, v, offset);\n  return v;\n}\n"""\n',
                "32-bit lane mask",
            ),
            (
                "WARP_SIZE 32 kept",
                'kernel_source = r"""\n#define WARP_SIZE 32\n__device__ float warp_sum(float v) {\n'
                "  for (int offset = WARP_SIZE / 2; offset > 0; offset /= 2)\n"
                '    v += WARP_SHFL_DOWN(v, offset);\n  return v;\n}\n"""\n',
                "warpSize / 2",
            ),
            (
                "the reduction removed",
                'kernel_source = r"""\n__device__ float warp_sum(float v) {\n  return v;\n}\n"""\n',
                "keep the shuffle reduction",
            ),
        ],
        "right": [
            (
                "ATen's WARP_SHFL_DOWN",
                'kernel_source = r"""\n#include <ATen/cuda/DeviceUtils.cuh>\n'
                "__device__ float warp_sum(float v) {\n  for (int offset = warpSize / 2; offset > 0; offset /= 2)\n"
                '    v += WARP_SHFL_DOWN(v, offset);\n  return v;\n}\n"""\n',
            ),
            (
                "HIP's unmasked __shfl_down",
                'kernel_source = r"""\n__device__ float warp_sum(float v) {\n'
                "  for (int offset = warpSize / 2; offset > 0; offset /= 2)\n    v += __shfl_down(v, offset);\n"
                '  return v;\n}\n"""\n',
            ),
        ],
    },
    "06b": {
        "wrong": [
            (
                "'rccl' on ROCm",
                "def backend_for(device_type, rocm):\n    if device_type == 'cuda':\n"
                "        return 'rccl' if rocm else 'nccl'\n    return 'gloo'\n",
                "no 'rccl' backend",
            ),
            ("nccl everywhere", "def backend_for(device_type, rocm):\n    return 'nccl'\n", "on the CPU"),
            (
                "Huawei's hccl",
                "def backend_for(device_type, rocm):\n    if device_type == 'cuda':\n"
                "        return 'hccl' if rocm else 'nccl'\n    return 'gloo'\n",
                "no 'rccl' backend",
            ),
        ],
        "right": [
            (
                "by device type",
                "def backend_for(device_type, rocm):\n    return 'nccl' if device_type == 'cuda' else 'gloo'\n",
            ),
            (
                "torch's own table",
                "def backend_for(device_type, rocm):\n    return {'cuda': 'nccl', 'cpu': 'gloo'}[device_type]\n",
            ),
        ],
    },
    "07a": {
        "wrong": [
            (
                "tunes while training",
                "record_env = {'PYTORCH_TUNABLEOP_ENABLED': '1', 'PYTORCH_TUNABLEOP_RECORD_UNTUNED': '1',"
                " 'PYTORCH_TUNABLEOP_TUNING': '1'}\nreuse_env = {'PYTORCH_TUNABLEOP_ENABLED': '1', "
                "'PYTORCH_TUNABLEOP_TUNING': '0'}\n",
                "TUNING=0 (tune later",
            ),
            (
                "numbers, not strings",
                "record_env = {'PYTORCH_TUNABLEOP_ENABLED': 1, 'PYTORCH_TUNABLEOP_RECORD_UNTUNED': 1,"
                " 'PYTORCH_TUNABLEOP_TUNING': 0}\nreuse_env = {'PYTORCH_TUNABLEOP_ENABLED': 1, "
                "'PYTORCH_TUNABLEOP_TUNING': 0}\n",
                "values are strings",
            ),
            (
                "reuse tunes again",
                "record_env = {'PYTORCH_TUNABLEOP_ENABLED': '1', 'PYTORCH_TUNABLEOP_RECORD_UNTUNED': '1',"
                " 'PYTORCH_TUNABLEOP_TUNING': '0'}\nreuse_env = {'PYTORCH_TUNABLEOP_ENABLED': '1'}\n",
                "reuse_env",
            ),
        ],
        "right": [
            (
                "with %d",
                "record_env = {'PYTORCH_TUNABLEOP_ENABLED': '1', 'PYTORCH_TUNABLEOP_RECORD_UNTUNED': '1',"
                " 'PYTORCH_TUNABLEOP_TUNING': '0'}\nreuse_env = {'PYTORCH_TUNABLEOP_ENABLED': '1', "
                "'PYTORCH_TUNABLEOP_TUNING': '0', 'PYTORCH_TUNABLEOP_FILENAME': 'tuned%d.csv'}\n",
            ),
            (
                "the default file name",
                "p = 'PYTORCH_TUNABLEOP_'\nrecord_env = {p + 'ENABLED': '1', p + 'RECORD_UNTUNED': '1',"
                " p + 'TUNING': '0'}\nreuse_env = {p + 'ENABLED': '1', p + 'TUNING': '0'}\n",
            ),
        ],
    },
    "07b": {
        "wrong": [
            (
                "the launch only",
                "def time_step(fn, device):\n    t0 = time.perf_counter()\n    fn()\n"
                "    return time.perf_counter() - t0\n",
                "timed the launch only",
            ),
            (
                "synchronises before only",
                "def time_step(fn, device):\n    torch.cuda.synchronize(device)\n"
                "    t0 = time.perf_counter()\n    fn()\n    return time.perf_counter() - t0\n",
                "timed the launch only",
            ),
            (
                "returns milliseconds",
                "def time_step(fn, device):\n    torch.cuda.synchronize(device)\n"
                "    t0 = time.perf_counter()\n    fn()\n    torch.cuda.synchronize(device)\n"
                "    return (time.perf_counter() - t0) * 1000\n",
                "seconds",
            ),
        ],
        "right": [
            (
                "torch.cuda.synchronize",
                "def time_step(fn, device):\n    torch.cuda.synchronize(device)\n"
                "    t0 = time.perf_counter()\n    fn()\n    torch.cuda.synchronize(device)\n"
                "    return time.perf_counter() - t0\n",
            ),
            (
                "torch.accelerator.synchronize",
                "def time_step(fn, device):\n    torch.accelerator.synchronize(device)\n"
                "    t0 = time.perf_counter()\n    fn()\n    torch.accelerator.synchronize(device)\n"
                "    return time.perf_counter() - t0\n",
            ),
        ],
        "imports": "import time\n\nimport torch\n\n",
    },
    "08a": {
        "wrong": [
            (
                "flash-attn itself",
                "def attention(q, k, v):\n    from flash_attn import flash_attn_func\n\n"
                "    return flash_attn_func(q, k, v, causal=True, softmax_scale=0.125)\n",
                "must not need flash-attn",
            ),
            (
                "no transpose",
                "def attention(q, k, v):\n    return F.scaled_dot_product_attention(q, k, v, is_causal=True, "
                "scale=0.125)\n",
                "across heads",
            ),
            (
                "SDPA's default scale",
                "def attention(q, k, v):\n    t = lambda x: x.transpose(1, 2)\n"
                "    return t(F.scaled_dot_product_attention(t(q), t(k), t(v), is_causal=True))\n",
                "scale=0.125",
            ),
            (
                "not causal",
                "def attention(q, k, v):\n    t = lambda x: x.transpose(1, 2)\n"
                "    return t(F.scaled_dot_product_attention(t(q), t(k), t(v), scale=0.125))\n",
                "is_causal=True",
            ),
        ],
        "right": [
            (
                "SDPA",
                "def attention(q, k, v):\n    out = F.scaled_dot_product_attention(q.transpose(1, 2), "
                "k.transpose(1, 2), v.transpose(1, 2), is_causal=True, scale=0.125)\n    return out.transpose(1, 2)\n",
            ),
            (
                "written out",
                "def attention(q, k, v):\n    q, k, v = (t.transpose(1, 2) for t in (q, k, v))\n"
                "    s = (q @ k.transpose(-2, -1)) * 0.125\n    n = s.shape[-1]\n"
                "    s = s.masked_fill(torch.ones(n, n, dtype=torch.bool).triu(1), float('-inf'))\n"
                "    return (s.softmax(-1) @ v).transpose(1, 2)\n",
            ),
        ],
        "imports": "import torch\nimport torch.nn.functional as F\n\n",
    },
    "08b": {
        "wrong": [
            (
                "the import unguarded",
                'module_source = """\nimport torch.nn.functional as F\n'
                "from flash_attn import flash_attn_func\n\n\ndef attention(q, k, v):\n"
                '    return flash_attn_func(q, k, v, causal=True, softmax_scale=0.125)\n"""\n',
                "try/except ImportError",
            ),
            (
                "a fallback with other maths",
                'module_source = """\nimport torch.nn.functional as F\n\ntry:\n'
                "    from flash_attn import flash_attn_func\nexcept ImportError:\n    flash_attn_func = None\n\n\n"
                "def attention(q, k, v):\n    if flash_attn_func is not None:\n"
                "        return flash_attn_func(q, k, v, causal=True, softmax_scale=0.125)\n"
                '    return F.scaled_dot_product_attention(q, k, v, is_causal=True)\n"""\n',
                "fallback must compute",
            ),
            (
                "no attention()",
                'module_source = """\ntry:\n    from flash_attn import flash_attn_func as attention\n'
                'except ImportError:\n    attention = None\n"""\n',
                "define `attention(q, k, v)`",
            ),
        ],
        "right": [
            (
                "try/except ImportError",
                'module_source = """\nimport torch.nn.functional as F\n\ntry:\n'
                "    from flash_attn import flash_attn_func\nexcept ImportError:\n    flash_attn_func = None\n\n\n"
                "def attention(q, k, v):\n    if flash_attn_func is not None and q.is_cuda:\n"
                "        return flash_attn_func(q, k, v, causal=True, softmax_scale=0.125)\n"
                "    out = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2),\n"
                '                                         is_causal=True, scale=0.125)\n    return out.transpose(1, 2)\n"""\n',
            ),
            (
                "importlib.util.find_spec",
                'module_source = """\nimport importlib.util\n\n'
                'import torch.nn.functional as F\n\nHAS_FLASH = importlib.util.find_spec("flash_attn") is not None\n\n\n'
                "def attention(q, k, v):\n    t = lambda x: x.transpose(1, 2)\n"
                '    return t(F.scaled_dot_product_attention(t(q), t(k), t(v), is_causal=True, scale=0.125))\n"""\n',
            ),
        ],
    },
}
# 06a runs its attempts with torchrun (seconds each): its wrong attempts are the shipped hang (above, from the
# notebook) and these two, which fail at once.
ATTEMPTS["06a"] = {
    "wrong": [
        (
            "a script that does not run",
            'script_source = "import torch.distributed as dist\\n'
            'dist.init_process_group(\\"gloo\\")\\nraise SystemExit(\\"no\\")\\n"\n',
            "the script failed",
        ),
        (
            "one rank prints 'done'",
            'script_source = """\nimport torch.distributed as dist\n\n'
            'dist.init_process_group("gloo")\nif dist.get_rank() == 0:\n    print("rank 0 done", flush=True)\n'
            'dist.barrier()\ndist.destroy_process_group()\n"""\n',
            "both ranks must print 'done'",
        ),
    ],
    "right": [
        (
            "the shortest shard",
            'script_source = """\nimport datetime\n\nimport torch\nimport torch.distributed as dist\n\n'
            'dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=10))\nrank = dist.get_rank()\n'
            "data = torch.arange(10.0 if rank == 0 else 8.0)\nn = torch.tensor([len(data)])\n"
            "dist.all_reduce(n, op=dist.ReduceOp.MIN)\nfor batch in data[: int(n)].split(2):\n"
            '    dist.all_reduce(batch.sum().reshape(1))\nprint(f"rank {rank} done", flush=True)\ndist.barrier()\n'
            'dist.destroy_process_group()\n"""\n',
        ),
        (
            "padded shards",
            'script_source = """\nimport torch\nimport torch.distributed as dist\n\n'
            'dist.init_process_group("gloo")\nrank = dist.get_rank()\ndata = torch.arange(10.0 if rank == 0 else 8.0)\n'
            "data = torch.cat([data, torch.zeros(10 - len(data))])  # the same length on every rank\n"
            "for batch in data.split(2):\n    dist.all_reduce(batch.sum().reshape(1))\n"
            'print(f"rank {rank} done", flush=True)\ndist.destroy_process_group()\n"""\n',
        ),
    ],
}
# Checks that simulate machines themselves (01a: a laptop with a CUDA wheel and a GPU machine; 03a: a GPU machine)
# or start processes (06a) run once; every other check runs on this machine and again inside simulated_gpu(), which
# must not change its answer.
SELF_SIMULATING = {"01a", "03a", "06a"}


def _cells(exercise):
    """(setup, check, solution) of an exercise, "01a" -> lesson 01's first, from the notebook; setup holds every setup
    cell of the lesson up to it (03b's check uses the model 03a's setup made)."""
    path = next(p for p in LESSONS if p.name.startswith(exercise[:2]))
    found = exercises(path)[: "ab".index(exercise[2]) + 1]
    _, _, check, solution = found[-1]
    return "\n".join(s for s, *_ in found if s), check, solution


def _verdict(exercise, code, where):
    setup, check, _ = _cells(exercise)
    ns = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # some attempts use deprecated torch.cuda.amp APIs on purpose
        if setup:
            run(setup, ns, f"<{exercise} setup>")
        run(ATTEMPTS[exercise].get("imports", "") + code, ns, f"<{exercise} attempt {abs(hash(code))}>")
        with simulated_gpu() if where == "simulated GPU" else contextlib.nullcontext():
            return run(check, ns, f"<{exercise} check>")


def _cases(kind):  # (a list: pytest wants a collection)
    return list(_case_iter(kind))


def _case_iter(kind):
    for exercise, table in sorted(ATTEMPTS.items()):
        wheres = ["this machine"] if exercise in SELF_SIMULATING else ["this machine", "simulated GPU"]
        for where in wheres:
            for attempt in table[kind]:
                yield pytest.param(exercise, where, *attempt, id=f"{exercise}-{where}-{attempt[0]}")


def test_every_exercise_has_three_wrong_attempts_and_two_right_ones():
    ids = [f"{p.name[:2]}{'ab'[i]}" for p in LESSONS for i in range(len(exercises(p)))]
    assert sorted(ATTEMPTS) == sorted(ids)
    for exercise, table in ATTEMPTS.items():
        shipped = 1 if exercise == "06a" else 0  # 06a's third is the hang itself, tested from the notebook
        assert len(table["wrong"]) + shipped >= 3 and len(table["right"]) >= 2, exercise


@pytest.mark.parametrize("exercise, where, what, code, hint", _cases("wrong"))
def test_a_wrong_attempt_gets_its_own_hint(exercise, where, what, code, hint):
    v = _verdict(exercise, code, where)
    assert isinstance(v, ex.Verdict) and not v.ok, v
    assert hint in v.message, v
    assert "raised" not in v.message, f"a hint in the lesson's terms, not an exception: {v}"
    in_chinese(v)
    for leak in ("SimpleNamespace", "_Build", "Traceback"):
        assert leak not in v.message, v
    solution = _cells(exercise)[2]
    for line in (ln.strip() for ln in solution.splitlines()):  # (a line of the learner's own code may be quoted)
        assert len(line) < 30 or line in code or line not in v.message, f"the hint gives the solution away: {line}"


@pytest.mark.parametrize("exercise, where, what, code", _cases("right"))
def test_a_right_answer_of_another_shape_is_done(exercise, where, what, code):
    v = _verdict(exercise, code, where)
    assert isinstance(v, ex.Verdict) and v.ok, v
    in_chinese(v)


# ---- the same checks in Chinese (a zh-CN notebook, or COURSE_LANG=zh_CN) ------------------------------------------
# The language changes the text only, never the decision: each message is chosen by its id in the check's code, then
# rendered in the learner's language (helpers.exercises.core.say). The tests above show every verdict in Chinese too
# (Message.translated, the same rendering); the shipped exercises run in Chinese for real, with their English text.


def test_a_zh_cn_notebook_gets_chinese_hints_without_course_lang(tmp_path, monkeypatch):
    from helpers.exercises.core import say
    from tools import i18n

    path = LESSONS[0]
    zh = i18n.translated(json.loads(path.read_text()), i18n.catalogue("zh_CN", path.stem), "zh_CN")
    (tmp_path / path.name).write_text(json.dumps(zh))
    monkeypatch.delenv("COURSE_LANG", raising=False)
    monkeypatch.setenv("JPY_SESSION_NAME", str(path))  # what JupyterLab sets for the English notebook
    assert say("06a.hanging", "still hanging after {timeout} s", timeout=5) == "still hanging after 5 s"
    monkeypatch.setenv("JPY_SESSION_NAME", str(tmp_path / path.name))  # ... and for the generated zh-CN one
    assert CJK.search(say("06a.hanging", "still hanging after {timeout} s", timeout=5))


def test_an_unknown_language_or_a_stale_translation_falls_back_to_english(monkeypatch):
    from helpers.exercises.core import say

    for odd in ("xx", "en_US.UTF-8", "../zh_CN", "zh_CN/x"):  # never an error: a check never raises
        monkeypatch.setenv("COURSE_LANG", odd)
        assert say("06a.hanging", "still hanging after {timeout} s", timeout=5) == "still hanging after 5 s"
    monkeypatch.setenv("COURSE_LANG", "zh_CN")
    assert CJK.search(say("06a.hanging", "still hanging after {timeout} s", timeout=5))
    assert say("06a.hanging", "an English text the translation does not record", timeout=5) == (
        "an English text the translation does not record"
    )


def test_simulated_gpu_keeps_tensors_and_devices_apart():
    """The simulated GPU that the checks use: moves recorded, mixed devices refused with PyTorch's message, torch.cuda
    and pick_device() answering as on a GPU machine, everything back to normal afterwards."""
    from helpers.device import pick_device
    from helpers.exercises.simulated import MISMATCH, on_gpu, simulated_laptop

    real_is_available = torch.cuda.is_available
    with simulated_gpu() as gpu:
        device = pick_device()
        model = nn.Linear(4, 2).to(device)
        x = torch.randn(3, 4, device=device)
        assert device.type == "cuda" and torch.cuda.is_available() and gpu.moved
        assert on_gpu(model.weight) and x.device == torch.device("cuda", 0) and on_gpu(model(x))
        assert not on_gpu(model(x).cpu()) and model(x).cpu().device.type == "cpu"
        with pytest.raises(RuntimeError, match=re.escape(MISMATCH)):
            model(torch.randn(3, 4))
        loss = model(x).sum()
        loss.backward()
        torch.optim.SGD(model.parameters(), lr=0.1).step()  # gradients live with their parameters
    with simulated_laptop():
        assert torch.accelerator.current_accelerator() == torch.device("cuda")  # the build's, usable or not
        assert torch.accelerator.current_accelerator(check_available=True) is None
        with pytest.raises(RuntimeError, match="NVIDIA driver"):
            torch.ones(1).to("cuda")  # portcheck: ignore=PC101 (the simulated laptop refuses it)
    assert torch.cuda.is_available is real_is_available  # everything as it was


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
