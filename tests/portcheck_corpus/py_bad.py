# CUDA-era training script: every line marked "expect" must be reported with that rule.
import os
import subprocess

import cupy  # expect: PC113
import pynvml  # expect: PC112
import torch
import torch.distributed as dist
from torch.cuda.amp import GradScaler, autocast  # expect: PC102

torch.backends.cudnn.benchmark = True  # expect: PC108
os.environ["CUDA_VISIBLE_DEVICES"] = "0,1"  # expect: PC111
os.environ["HCCL_HOME"] = "/usr/local/hccl"  # expect: PC109

model = torch.nn.Linear(4, 4).cuda()  # expect: PC101
device = torch.device("cuda:0")  # expect: PC101
x = torch.zeros(4, device="cuda")  # expect: PC101
y = x.to("cuda")  # expect: PC101
batch = [x][0].cuda()  # expect: PC101
state = torch.load(  # expect: PC104
    "ckpt.pt",
    weights_only=True,
)
scaler = torch.cuda.amp.GradScaler()  # expect: PC102 PC103
scaler2 = torch.amp.GradScaler("cuda")  # expect: PC103
with torch.autocast("cuda", dtype=torch.bfloat16):
    out = model(x)
if torch.cuda.is_bf16_supported():  # expect: PC105
    pass
if torch.version.cuda:  # expect: PC106
    print("GPU")
if torch.cuda.get_device_capability()[0] >= 8:  # expect: PC107
    print("tensor cores")
w8 = x.to(torch.float8_e4m3fn)  # expect: PC110
dist.init_process_group(backend="rccl")  # expect: PC109
dist.init_process_group("hccl")  # expect: PC109
print(subprocess.run(["nvidia-smi", "-L"], capture_output=True).stdout)  # expect: PC112
os.environ["NVIDIA_TF32_OVERRIDE"] = "0"  # expect: PC114
os.environ.setdefault("CUDA_DEVICE_MAX_CONNECTIONS", "1")  # expect: PC114
import argparse  # noqa: E402

DEVICE = "cuda"  # expect: PC101
parser = argparse.ArgumentParser()
parser.add_argument("--device", default="cuda")  # expect: PC101
want_gpu = True  # a wish, not an availability test
if want_gpu:
    batch = batch.cuda()  # expect: PC101

from packaging.version import parse  # noqa: E402

built_with = parse(torch.version.cuda)  # expect: PC106
cuda_major = int(torch.version.cuda.split(".")[0])  # expect: PC106
lora_b = torch.zeros(4, 4).cuda(weight.device)  # expect: PC101


def batch_size():
    return 64 if torch.cuda.is_available() else 8  # a function that is no test of the machine's GPU is no guard


@ray.remote(num_cpus=2)  # no GPU asked for: Ray may start it on a CPU-only worker
class Scorer:
    def __init__(self):
        self.model = torch.nn.Linear(4, 1).cuda()  # expect: PC101


@ray.remote(num_gpus=0)
def score(x):
    return x.cuda()  # expect: PC101


parser.add_argument("--eval-device", default="cuda")  # expect: PC101
if "cuda" in args.eval_device and torch.cuda.is_available():  # tests it, never replaces it
    torch.cuda.empty_cache()


def fast_or_slow(x):
    if torch.cuda.is_available():
        return x.cuda()
    return x.cuda()  # expect: PC101  (this line runs exactly where there is no GPU)
