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


def make_resnet(name: str = "resnet18", num_classes: int = 10, weights=None) -> nn.Module:
    """A torchvision ResNet by name ("resnet18", "resnet50", ...), untrained unless ``weights`` given."""
    import torchvision

    return getattr(torchvision.models, name)(weights=weights, num_classes=num_classes)
