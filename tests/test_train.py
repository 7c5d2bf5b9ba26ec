import subprocess
import sys
from pathlib import Path

import torch

from helpers.train import evaluate, fit, load_digits_rgb, make_resnet, plot_history, topk_labels

ASSETS = Path(__file__).parent.parent / "notebooks" / "assets"
CPU = torch.device("cpu")


def test_digits_shapes_split_and_normalisation():
    d = load_digits_rgb(size=16)
    assert d.x_train.shape == (1437, 3, 16, 16) and d.x_val.shape == (360, 3, 16, 16)
    assert set(d.y_val.tolist()) == set(range(10))  # stratified: every class in validation
    x = torch.cat([d.x_train, d.x_val])
    assert abs(x.mean().item()) < 1e-3 and abs(x.std().item() - 1) < 1e-2
    assert torch.equal(load_digits_rgb(size=16).y_val, d.y_val)  # deterministic


def test_fit_learns_and_records_history():
    d = load_digits_rgb(size=16)
    d.x_train, d.y_train = d.x_train[:256], d.y_train[:256]
    model = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(3 * 16 * 16, 10))
    hist = fit(model, d, device=CPU, epochs=3, batch_size=32, lr=1e-2, progress=False)
    assert len(hist["val_acc"]) == 3 and hist["seconds"] > 0
    assert len(hist["step_loss"]) == 3 * 8  # 256 samples / batch 32, three epochs
    assert hist["train_loss"][-1] < hist["train_loss"][0] and hist["val_acc"][-1] > 0.7
    acc, loss = evaluate(model, d.x_val, d.y_val, CPU)
    assert acc == hist["val_acc"][-1] and loss > 0
    assert len(plot_history(hist).axes) == 2


def test_make_resnet_and_topk():
    m = make_resnet("resnet18", num_classes=7)
    assert m.fc.out_features == 7
    top = topk_labels(torch.tensor([0.0, 5.0, 1.0, -1.0]), ["a", "b", "c", "d"], k=2)
    assert [n for n, _ in top] == ["b", "c"] and top[0][1] > 0.9


def test_ported_script_runs_on_cpu_and_legacy_fails(tmp_path):
    r = subprocess.run(
        [sys.executable, str(ASSETS / "resnet_portable.py"), "--epochs", "1", "--checkpoint", str(tmp_path / "c.pt")],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert r.returncode == 0, r.stderr
    assert "epoch 1: loss" in r.stdout and "predicted:" in r.stdout and (tmp_path / "c.pt").exists()
    if not torch.cuda.is_available():
        r = subprocess.run(
            [
                sys.executable,
                str(ASSETS / "legacy_resnet_cuda.py"),
                "--epochs",
                "1",
                "--checkpoint",
                str(tmp_path / "l.pt"),
            ],
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert r.returncode != 0
        assert "NVIDIA driver" in r.stderr or "not compiled with CUDA" in r.stderr


def test_augmented_digits_items_and_workers():
    import pickle

    from torch.utils.data import DataLoader

    from helpers.train import AugmentedDigits

    images, labels = torch.arange(2 * 3 * 8 * 8, dtype=torch.float32).reshape(2, 3, 8, 8), torch.tensor([4, 7])
    ds = AugmentedDigits(images, labels)
    img, label = ds[1]
    assert len(ds) == 2 and img.shape == (3, 8, 8) and label == 7
    assert torch.equal(ds[1][0], img) and not torch.equal(img, images[1])  # per-item, reproducible, augmented
    assert (img - images[1]).abs().max() > 0.5  # shifted (rolled), not only noise
    assert pickle.loads(pickle.dumps(ds))[0][0].shape == (3, 8, 8)  # what "spawn" workers need
    batches = list(DataLoader(ds, batch_size=2, num_workers=1))
    assert batches[0][0].shape == (2, 3, 8, 8) and batches[0][1].tolist() == [4, 7]


def test_augmented_digits_resizes_each_item_to_the_asked_size():
    from helpers.train import AugmentedDigits

    images = torch.rand(3, 3, 8, 8)
    ds = AugmentedDigits(images, torch.tensor([0, 1, 2]), size=24)
    assert ds[2][0].shape == (3, 24, 24) and AugmentedDigits(images, torch.tensor([0, 1, 2]))[2][0].shape == (3, 8, 8)


def test_time_loader_counts_the_waits_for_data_and_syncs_each_step(monkeypatch):
    import time

    from helpers.train import time_loader

    clock, events = [0.0], []
    monkeypatch.setattr(time, "perf_counter", lambda: clock[0])
    monkeypatch.setattr(torch.cuda, "synchronize", lambda device=None: events.append(("sync", device)))

    def loader():  # the first batch waits 5 s (workers starting), later ones 1 s
        for wait in (5.0, 1.0, 1.0, 1.0):
            clock[0] += wait
            yield torch.zeros(1), torch.zeros(1)

    class Batch:  # .to() on a fake GPU: the step only needs the call
        def __init__(self, t):
            self.t = t

        def to(self, device, non_blocking=False):
            return self.t

    def step(x, y):
        events.append("step")
        clock[0] += 2.0

    gpu = torch.device("cuda", 0)  # portcheck: ignore=PC101 (never touched: synchronize is faked)
    fake = ((Batch(x), Batch(y)) for x, y in loader())
    t = time_loader(fake, step, gpu, batches=3)
    assert (t.seconds, t.waiting_s, t.first_batch_s) == (13.0, 7.0, 5.0) and abs(t.waiting_share - 7 / 13) < 1e-12
    assert events == ["step", ("sync", gpu)] * 3


def test_ported_script_takes_lesson_02s_dtype_for_its_gpu(monkeypatch):
    """resnet_portable.py asks helpers.precision.choose_amp_dtype, as lesson 02 teaches: float16 + GradScaler on a GPU
    without bf16 matrix units (an RX 6900 XT, gfx1030; a T4), not bf16 on every "cuda" device; MPS is a device too."""
    import importlib.util

    import helpers.device
    import helpers.precision

    def load(device, dtype):
        monkeypatch.setattr(helpers.device, "pick_device", lambda: device)
        monkeypatch.setattr(helpers.precision, "choose_amp_dtype", lambda d: (dtype, f"probed on {d}"))
        spec = importlib.util.spec_from_file_location("resnet_portable", ASSETS / "resnet_portable.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)  # the module level only: pick the device and the dtype
        return module

    rdna2 = load(torch.device("cuda"), torch.float16)  # portcheck: ignore=PC101 (never touched)
    assert rdna2.device.type == "cuda" and rdna2.AMP_DTYPE == torch.float16
    assert load(torch.device("mps"), torch.bfloat16).device.type == "mps"
    assert load(CPU, None).AMP_DTYPE is None


def test_lesson_07_fresh_step_script_prints_one_json_line():
    """assets/fresh_step.py, as lesson 07 starts it: a fresh process whose last line is the JSON the notebook reads."""
    import json
    import subprocess
    import sys
    from pathlib import Path

    script = Path(__file__).resolve().parent.parent / "notebooks" / "assets" / "fresh_step.py"
    args = ["--model", "gpt", "--size", "8", "--batch", "2", "--calls", "2", "--repeats", "3", "--precision", "fp32"]
    proc = subprocess.run([sys.executable, str(script), *args], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["device"] == "cpu" and out["first_s"] > 0 and len(out["per_call_s"]) == 3
    assert "tunableop" not in out  # asked only of a GPU with TunableOp on
