"""Train ResNet-18 on scikit-learn's handwritten digits, then predict: a CUDA-only script.

Written the way most PyTorch code was written for NVIDIA GPUs before anyone thought of porting it.
It works on an NVIDIA GPU. Lesson 03 ports it; do not copy its habits.

    python legacy_resnet_cuda.py --epochs 3 --checkpoint resnet_digits.pt
"""

import argparse
import subprocess

import torch
import torchvision
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split
from torch import nn
from torch.cuda.amp import GradScaler, autocast

torch.backends.cudnn.benchmark = True
device = torch.device("cuda")


def gpu_report():
    out = subprocess.run(["nvidia-smi", "--query-gpu=name,memory.used", "--format=csv,noheader"],
                         capture_output=True, text=True, check=True)
    print("GPU:", out.stdout.strip())


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
    return (model(x.cuda()).argmax(1) == y.cuda()).float().mean().item()


def train(epochs, batch_size, checkpoint):
    x_train, x_val, y_train, y_val = load_data()
    model = torchvision.models.resnet18(num_classes=10).cuda()
    opt = torch.optim.Adam(model.parameters(), lr=2e-3)
    scaler = GradScaler()
    for epoch in range(epochs):
        model.train()
        perm = torch.randperm(len(y_train))
        for i in range(0, len(perm), batch_size):
            idx = perm[i : i + batch_size]
            x, y = x_train[idx].cuda(), y_train[idx].cuda()
            with autocast():
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
    model = torchvision.models.resnet18(num_classes=10).cuda()
    model.load_state_dict(torch.load(checkpoint))
    model.eval()
    with torch.no_grad(), autocast():
        return model(images.cuda()).argmax(1).cpu()


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--checkpoint", default="resnet_digits.pt")
    args = ap.parse_args()
    x_val, y_val = train(args.epochs, args.batch_size, args.checkpoint)
    print("predicted:", predict(args.checkpoint, x_val[:10]).tolist(), "true:", y_val[:10].tolist())
