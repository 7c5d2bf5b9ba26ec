"""The lessons' real workload: scikit-learn's handwritten digits through a torchvision ResNet.

The digits (1,797 8x8 grey images, shipped inside scikit-learn, no download) are resized to
``size`` x ``size`` RGB so an ImageNet-shaped ResNet takes them unchanged.

    >>> from helpers.train import load_digits_rgb
    >>> data = load_digits_rgb(size=32)
    >>> data.x_train.shape[1:]
    torch.Size([3, 32, 32])
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch
from torch import nn


@dataclass
class Digits:
    x_train: torch.Tensor
    y_train: torch.Tensor
    x_val: torch.Tensor
    y_val: torch.Tensor
    classes: list[str] = field(default_factory=lambda: [str(i) for i in range(10)])


def load_digits_rgb(size: int = 32, val_fraction: float = 0.2, seed: int = 0) -> Digits:
    """Digits as float tensors (N, 3, size, size), normalised to mean 0 / std 1, with a stratified split."""
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    d = load_digits()
    x = torch.tensor(d.images, dtype=torch.float32).unsqueeze(1) / 16.0  # (N, 1, 8, 8) in [0, 1]
    x = nn.functional.interpolate(x, size=(size, size), mode="bilinear", align_corners=False)
    x = ((x - x.mean()) / x.std()).expand(-1, 3, -1, -1).contiguous()
    y = torch.tensor(d.target)
    i_train, i_val = train_test_split(range(len(y)), test_size=val_fraction, random_state=seed, stratify=d.target)
    return Digits(x[i_train], y[i_train], x[i_val], y[i_val])


class AugmentedDigits(torch.utils.data.Dataset):
    """Digits images (N, 3, H, W), each resized to ``size`` with a random shift and noise: CPU work per item for
    DataLoader workers (lesson 07). At 224 px the resize is the costly part, as decoding and resizing are in a real
    image pipeline.

    A module-level class, so worker processes can unpickle it where they start with "spawn" (macOS, Windows).
    """

    def __init__(self, images: torch.Tensor, labels: torch.Tensor, size: int | None = None):
        self.images, self.labels, self.size = images, labels, size

    def __len__(self) -> int:
        return len(self.images)

    def __getitem__(self, i: int):
        g = torch.Generator().manual_seed(i)
        img = self.images[i]
        if self.size and self.size != img.shape[-1]:
            img = nn.functional.interpolate(img[None], size=(self.size, self.size), mode="bilinear")[0]
        shift = torch.randint(-2, 3, (2,), generator=g).tolist()
        img = torch.roll(img, shifts=shift, dims=(1, 2))
        return img + 0.05 * torch.randn(img.shape, generator=g), self.labels[i]


@dataclass(frozen=True)
class LoaderTiming:
    seconds: float  # the whole pass: batches and steps
    waiting_s: float  # time the loop waited for the next batch; the GPU had nothing to do meanwhile
    first_batch_s: float  # the wait for the first batch: worker start-up, unless the workers persist

    @property
    def waiting_share(self) -> float:
        return self.waiting_s / self.seconds


def time_loader(loader, step, device, batches: int) -> LoaderTiming:
    """Run ``step(x, y)`` on ``batches`` batches of ``loader`` (at most one epoch) and time how long the loop waited
    for data (lesson 07). The device is synchronised after each step, so a wait for data is time the GPU spends idle.
    """
    import time

    from helpers.bench import sync

    device = torch.device(device)
    waits, t0 = [], time.perf_counter()
    it = iter(loader)
    for _ in range(min(batches, len(loader)) if hasattr(loader, "__len__") else batches):
        t = time.perf_counter()
        xb, yb = next(it)
        waits.append(time.perf_counter() - t)
        step(xb.to(device, non_blocking=True), yb.to(device, non_blocking=True))
        sync(device)
    return LoaderTiming(time.perf_counter() - t0, sum(waits), waits[0])


def make_resnet(name: str = "resnet18", num_classes: int = 10, weights=None) -> nn.Module:
    """A torchvision ResNet by name ("resnet18", "resnet50", ...), untrained unless ``weights`` given."""
    import torchvision

    return getattr(torchvision.models, name)(weights=weights, num_classes=num_classes)


@torch.no_grad()
def evaluate(model: nn.Module, x: torch.Tensor, y: torch.Tensor, device, batch_size: int = 256, amp_dtype=None):
    """(accuracy, mean loss) of ``model`` on (x, y), in batches, on ``device``."""
    from helpers.precision import autocast

    model.eval()
    correct, loss = 0, 0.0
    for i in range(0, len(y), batch_size):
        xb, yb = x[i : i + batch_size].to(device), y[i : i + batch_size].to(device)
        with autocast(device, amp_dtype):
            logits = model(xb).float()
        loss += nn.functional.cross_entropy(logits, yb, reduction="sum").item()
        correct += (logits.argmax(1) == yb).sum().item()
    return correct / len(y), loss / len(y)


def fit(model, data: Digits, *, device, epochs: int, amp_dtype=None, batch_size: int = 32, lr: float = 2e-3,
        seed: int = 0, progress: bool = True) -> dict:  # fmt: skip
    """Train with Adam + one-cycle schedule, autocast in ``amp_dtype`` (a GradScaler only for float16).

    Returns the history: per-epoch ``train_loss``, ``val_loss``, ``val_acc``; per-step ``step_loss``;
    and ``seconds`` in all.
    """
    import time

    from tqdm.auto import tqdm

    from helpers.precision import autocast, make_grad_scaler

    torch.manual_seed(seed)
    model.to(device)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    steps = (len(data.y_train) + batch_size - 1) // batch_size
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=lr, total_steps=epochs * steps)
    scaler = make_grad_scaler(device, amp_dtype)
    hist = {"train_loss": [], "val_loss": [], "val_acc": [], "step_loss": []}
    t0 = time.perf_counter()
    bar = tqdm(total=epochs * steps, desc="train", disable=not progress)
    for _ in range(epochs):
        model.train()
        perm, total = torch.randperm(len(data.y_train)), 0.0
        for i in range(0, len(perm), batch_size):
            idx = perm[i : i + batch_size]
            x, y = data.x_train[idx].to(device, non_blocking=True), data.y_train[idx].to(device, non_blocking=True)
            with autocast(device, amp_dtype):
                loss = nn.functional.cross_entropy(model(x), y)
            opt.zero_grad(set_to_none=True)
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
            sched.step()
            total += loss.item() * len(idx)
            hist["step_loss"].append(loss.item())
            bar.update()
        acc, vloss = evaluate(model, data.x_val, data.y_val, device, amp_dtype=amp_dtype)
        hist["train_loss"].append(total / len(perm))
        hist["val_loss"].append(vloss)
        hist["val_acc"].append(acc)
        bar.set_postfix(loss=f"{hist['train_loss'][-1]:.3f}", val_acc=f"{acc:.3f}")
    bar.close()
    hist["seconds"] = time.perf_counter() - t0
    return hist


def plot_history(hist: dict):
    """Loss and validation accuracy per epoch, side by side; returns the matplotlib figure."""
    import matplotlib.pyplot as plt

    epochs = list(range(1, len(hist["val_acc"]) + 1))
    fig, (a, b) = plt.subplots(1, 2, figsize=(9, 3))
    steps = hist.get("step_loss") or []
    if steps:  # per-step training loss, on an epoch axis
        per_epoch = len(steps) / len(epochs)
        a.plot([(i + 1) / per_epoch for i in range(len(steps))], steps, lw=0.8, alpha=0.6, label="train (per step)")
    a.plot(epochs, hist["train_loss"], "o-", label="train (epoch mean)")
    a.plot(epochs, hist["val_loss"], "o-", label="validation")
    a.set(xlabel="epoch", ylabel="cross-entropy", title="loss", xticks=epochs)
    a.legend()
    b.plot(epochs, hist["val_acc"], "o-", color="#c0392b")
    b.set(xlabel="epoch", ylabel="accuracy", title="validation accuracy", ylim=(0, 1), xticks=epochs)
    fig.tight_layout()
    plt.close(fig)
    return fig


def topk_labels(logits: torch.Tensor, categories: list[str], k: int = 5) -> list[tuple[str, float]]:
    """Top-k (label, probability) for one image's logits."""
    probs = logits.float().softmax(-1)
    p, i = probs.topk(k)
    return [(categories[j], round(float(q), 4)) for q, j in zip(p.tolist(), i.tolist(), strict=True)]
