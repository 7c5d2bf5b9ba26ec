"""Train ResNet-18 on scikit-learn's handwritten digits, then predict: the ported script.

The CUDA-only legacy_resnet_cuda.py after lesson 03's port: the same program, now on NVIDIA (CUDA),
AMD (ROCm) and CPU. Run `diff legacy_resnet_cuda.py resnet_portable.py` to see every changed line.

    python resnet_portable.py --epochs 3 --checkpoint resnet_digits.pt
"""

import argparse

import torch
import torchvision
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split
from torch import nn

from helpers.device import pick_device
from helpers.precision import choose_amp_dtype

device = pick_device()  # an NVIDIA or AMD GPU ("cuda" on both), else Apple's MPS, else the CPU
# Lesson 02's rule, from a real probe: bf16 where the GPU has bf16 matrix units (no GradScaler), fp16 + GradScaler
# on GPUs without them (Volta, Turing, RDNA2), float32 on a CPU without bf16 instructions.
AMP_DTYPE, _ = choose_amp_dtype(device)


def gpu_report():
    if device.type == "cuda":
        peak = torch.cuda.max_memory_allocated(device) / 2**20
        print("GPU:", torch.cuda.get_device_name(device), f"{peak:.0f} MiB peak")
    elif device.type == "mps":
        print("GPU: Apple MPS", f"{torch.mps.driver_allocated_memory() / 2**20:.0f} MiB allocated by the driver")


def load_data():
    d = load_digits()
    x = torch.tensor(d.images, dtype=torch.float32).unsqueeze(1) / 16
    x = nn.functional.interpolate(x, size=(32, 32), mode="bilinear", align_corners=False).repeat(1, 3, 1, 1)
    x = (x - x.mean()) / x.std()
    y = torch.tensor(d.target)
    return train_test_split(x, y, test_size=0.2, random_state=0, stratify=d.target)


@torch.no_grad()
def evaluate(model, x, y):
    model.eval()
    return (model(x.to(device)).argmax(1) == y.to(device)).float().mean().item()


def train(epochs, batch_size, checkpoint):
    x_train, x_val, y_train, y_val = load_data()
    model = torchvision.models.resnet18(num_classes=10).to(device)
    opt = torch.optim.Adam(model.parameters(), lr=2e-3)
    scaler = torch.amp.GradScaler(device.type, enabled=AMP_DTYPE == torch.float16)
    for epoch in range(epochs):
        model.train()
        perm = torch.randperm(len(y_train))
        for i in range(0, len(perm), batch_size):
            idx = perm[i : i + batch_size]
            x, y = x_train[idx].to(device), y_train[idx].to(device)
            with torch.autocast(device.type, dtype=AMP_DTYPE, enabled=AMP_DTYPE is not None):
                loss = nn.functional.cross_entropy(model(x), y)
            opt.zero_grad()
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
        print(f"epoch {epoch + 1}: loss {loss.item():.3f}, val accuracy {evaluate(model, x_val, y_val):.3f}")
    torch.save(model.state_dict(), checkpoint)
    gpu_report()
    return x_val, y_val


def predict(checkpoint, images):
    model = torchvision.models.resnet18(num_classes=10).to(device)
    model.load_state_dict(torch.load(checkpoint, map_location=device))
    model.eval()
    with torch.no_grad(), torch.autocast(device.type, dtype=AMP_DTYPE, enabled=AMP_DTYPE is not None):
        return model(images.to(device)).argmax(1).cpu()


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--checkpoint", default="resnet_digits.pt")
    args = ap.parse_args()
    x_val, y_val = train(args.epochs, args.batch_size, args.checkpoint)
    print("predicted:", predict(args.checkpoint, x_val[:10]).tolist(), "true:", y_val[:10].tolist())
