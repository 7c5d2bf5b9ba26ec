"""Train a classifier on scikit-learn's digits on one GPU: the "before" of lesson 06.

python legacy_single_gpu.py --epochs 3
"""

import argparse

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

from helpers.train import load_digits_rgb, make_resnet


def build(name):
    if name == "mlp":
        return nn.Sequential(nn.Flatten(), nn.Linear(3 * 16 * 16, 256), nn.ReLU(), nn.Linear(256, 10))
    return make_resnet(name)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--model", default="resnet18", choices=["mlp", "resnet18"])
    ap.add_argument("--checkpoint", default="digits.pt")
    args = ap.parse_args()

    device = torch.device("cuda")
    data = load_digits_rgb(size=16)
    loader = DataLoader(TensorDataset(data.x_train, data.y_train), batch_size=args.batch_size, shuffle=True)
    model = build(args.model).to(device)
    opt = torch.optim.Adam(model.parameters(), lr=2e-3)

    for epoch in range(args.epochs):
        total, seen = 0.0, 0
        for x, y in loader:
            x, y = x.to(device), y.to(device)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                loss = nn.functional.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            total, seen = total + loss.item() * len(y), seen + len(y)
        print(f"epoch {epoch + 1}: {seen} samples, loss {total / seen:.4f}")

    torch.save(model.state_dict(), args.checkpoint)


if __name__ == "__main__":
    main()
