"""Lesson 07: time a training step in a fresh process, the way the first step of a new job meets it.

Some settings only show in a new process: TunableOp reads its PYTORCH_TUNABLEOP_* variables once, and a second
process is what shows its results file being reused (torch 2.10+ appends each result as it is found, 2.5-2.9 write
the file at exit); MIOpen reads MIOPEN_FIND_MODE once; a cold find-db is a new MIOPEN_USER_DB_PATH.
So lesson 07 starts this script once per setting, with the setting in the environment, and reads the JSON line it
prints last:

    PYTORCH_TUNABLEOP_ENABLED=1 PYTORCH_TUNABLEOP_TUNING=0 python fresh_step.py --model gpt --device cuda:0

    --model resnet18 | gpt   lesson 03's ResNet-18 (its time is in convolutions: MIOpen, cuDNN) or lesson 08's small
                             GPT (its time is in GEMMs: hipBLASLt/rocBLAS, cuBLAS: what TunableOp tunes)
    --cudnn-benchmark        torch.backends.cudnn.benchmark = True (on ROCm: MIOpen's exhaustive find)
    --miopen-immediate       torch.backends.miopen.immediate = True (MIOpen's immediate mode: no find step)
    --blas cublas|cublaslt   torch.backends.cuda.preferred_blas_library (on ROCm: rocBLAS | hipBLASLt)
    --precision amp|fp32|tf32  autocast in the device's precision (lesson 02), float32, or float32 with TF32
"""

import argparse
import json
import time

import torch
from transformer_portable import TinyGPT  # this script's folder is on sys.path when it runs

from helpers.bench import spread, sync
from helpers.precision import autocast, choose_amp_dtype, make_grad_scaler
from helpers.train import make_resnet


def make_step(model_name: str, device: torch.device, batch: int, size: int, precision: str = "amp"):
    """One training step of the model, as a function: autocast in the device's precision (lesson 02) or float32."""
    amp_dtype = choose_amp_dtype(device)[0] if precision == "amp" else None
    torch.backends.cuda.matmul.allow_tf32 = precision == "tf32"
    g = torch.Generator(device=device).manual_seed(0)
    if model_name == "gpt":  # size = sequence length; dim 1024: GEMMs large enough for a GPU's tuning to matter
        model = TinyGPT(vocab=256, dim=1024, heads=8, layers=2, seq=size, dropout=0.0).to(device)
        x = torch.randint(0, 256, (batch, size), device=device, generator=g)
        y = torch.randint(0, 256, (batch, size), device=device, generator=g)
    else:
        model = make_resnet("resnet18").to(device)
        x = torch.randn(batch, 3, size, size, device=device, generator=g)
        y = torch.randint(0, 10, (batch,), device=device, generator=g)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    scaler = make_grad_scaler(device, amp_dtype)

    def step():
        with autocast(device, amp_dtype):
            out = model(x)
        loss = torch.nn.functional.cross_entropy(out.reshape(-1, out.shape[-1]).float(), y.reshape(-1))
        opt.zero_grad(set_to_none=True)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()

    return step


def tunableop_state() -> dict:
    """What TunableOp holds in this process (torch.cuda.tunable; GPU builds)."""
    import torch.cuda.tunable as tunable

    return {"enabled": tunable.is_enabled(), "tuning": tunable.tuning_is_enabled(),
            "filename": tunable.get_filename(), "results": len(tunable.get_results()),
            "max_tuning_duration_ms": tunable.get_max_tuning_duration(),
            "max_tuning_iterations": tunable.get_max_tuning_iterations()}  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", choices=["resnet18", "gpt"], default="resnet18")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--size", type=int, default=32, help="image side (resnet18) or sequence length (gpt)")
    ap.add_argument("--calls", type=int, default=10)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--cudnn-benchmark", action="store_true")
    ap.add_argument("--miopen-immediate", action="store_true")
    ap.add_argument("--blas", choices=["cublas", "cublaslt"])
    ap.add_argument("--precision", choices=["amp", "fp32", "tf32"], default="amp")
    a = ap.parse_args()
    device = torch.device(a.device)
    if device.type == "cuda":
        device = torch.device("cuda", torch.cuda.current_device() if device.index is None else device.index)
        torch.cuda.set_device(device)  # TunableOp names its files after the current device (the %d)
    out = {"torch": torch.__version__, "device": str(device)}
    torch.backends.cudnn.benchmark = a.cudnn_benchmark
    if a.miopen_immediate:
        torch.backends.miopen.immediate = True  # recent releases only: the lesson checks before it asks for it
    if a.blas:
        torch.backends.cuda.preferred_blas_library(a.blas)  # an unsupported choice warns and falls back
        out["blas"] = str(torch.backends.cuda.preferred_blas_library()).rsplit(".", 1)[-1]  # what is in effect
    step = make_step(a.model, device, a.batch, a.size, a.precision)
    sync(device)
    t0 = time.perf_counter()
    step()  # the first step: kernel search (MIOpen's find, cudnn.benchmark), TunableOp's tuning, allocation
    sync(device)
    out["first_s"] = time.perf_counter() - t0
    out["per_call_s"] = list(spread(step, label=a.model, device=device, calls=a.calls, repeats=a.repeats).per_call_s)
    if device.type == "cuda" and torch.cuda.tunable.is_enabled():  # asked only when on: get_results() opens the file
        out["tunableop"] = tunableop_state()
    print(json.dumps(out))


if __name__ == "__main__":
    main()
