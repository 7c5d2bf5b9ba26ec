# The same script, ported: no finding.
import os
import unittest

import torch
import torch.distributed as dist

device = torch.accelerator.current_accelerator() if torch.accelerator.is_available() else torch.device("cpu")
os.environ.setdefault("HIP_VISIBLE_DEVICES", os.environ.get("CUDA_VISIBLE_DEVICES", "0"))
model = torch.nn.Linear(4, 4).to(device)
fallback = torch.device("cuda" if torch.cuda.is_available() else "cpu")
if torch.cuda.is_available():
    model = model.cuda()
x = torch.zeros(4, device=device)
state = torch.load(
    "ckpt.pt",
    map_location=device,
)
state2 = torch.load("ckpt.pt", device)
dtype = torch.bfloat16
scaler = torch.amp.GradScaler(device.type, enabled=dtype == torch.float16)
with torch.autocast(device.type, dtype=torch.bfloat16):
    out = model(x)
is_rocm = torch.version.hip is not None
w8 = x.to(torch.float8_e4m3fnuz if is_rocm else torch.float8_e4m3fn)  # portcheck: ignore=PC110
dist.init_process_group(backend="nccl" if device.type == "cuda" else "gloo")
free, total = torch.cuda.mem_get_info() if device.type == "cuda" else (0, 0)
print("see nvidia-smi or amd-smi for details")
use_cuda = torch.cuda.is_available() and not os.environ.get("FORCE_CPU")
if use_cuda:
    model = model.cuda()
if x.is_cuda:
    y = x.cuda()
if device.type == "cuda":
    z = torch.zeros(1).cuda()
DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


class Batch:
    def __init__(self, x):
        self.x = x

    def cuda(self):  # the class's own .cuda(): moving its tensors to the GPU is what it is for
        self.x = self.x.cuda()
        return self


def gpu_only_path(x):
    if not torch.cuda.is_available():
        return x
    return x.cuda()


class Trainer:
    def __init__(self):
        self.cuda = torch.cuda.is_available()

    def step(self, x):
        if self.cuda:
            x = x.cuda()
        return x


if dist.get_backend() == "nccl":
    flag = torch.zeros(1).cuda()

from packaging.version import parse  # noqa: E402

if torch.version.hip:  # a GPU build script: ROCm build ...
    built_with = parse(torch.version.hip)
else:  # ... or CUDA build
    built_with = parse(torch.version.cuda)
print("built with CUDA {}".format(torch.version.cuda))  # None on ROCm: printed, not parsed
lora_b = torch.zeros(4, 4).to(weight.device)  # follows the weight, on any device


gpu_test = unittest.skipUnless(torch.cuda.is_available(), "needs a GPU")


class GpuKernels(unittest.TestCase):
    @unittest.skipIf(not torch.cuda.is_available(), "needs a GPU")
    def test_on_gpu(self):
        self.assertEqual(torch.ones(2).cuda().sum().item(), 2)

    @gpu_test
    def test_through_a_named_marker(self):
        self.assertTrue(torch.zeros(1, device="cuda").is_cuda)


def spawn_worker(rank):
    assert torch.cuda.device_count() > rank, "one GPU per worker"
    return torch.device("cuda", rank)


def has_gpu():
    return torch.cuda.device_count() > 0


if has_gpu():  # a function of this module that tests the machine
    probe = torch.ones(1).cuda()


@ray.remote(num_gpus=1)  # Ray starts this actor only on a worker with a GPU for it
class Scorer:
    def __init__(self):
        self.model = torch.nn.Linear(4, 1).cuda()


import argparse  # noqa: E402

parser = argparse.ArgumentParser()
parser.add_argument("--cache-device", default="cuda")  # replaced below where there is no GPU
parser.add_argument("--eval-device", default="cuda")  # chosen below only where there is one
parser.add_argument("--num-gpus", type=int, default=1)
opts = parser.parse_args()
if opts.cache_device == "cuda" and not torch.cuda.is_available():
    opts.cache_device = "cpu"
eval_device = torch.device(opts.eval_device if torch.cuda.is_available() else "cpu")
sync_device = torch.device("cuda", 0) if opts.num_gpus > 1 else None  # GPUs asked for: 0 or 1 on a CPU


if opts.cache_device == "hpu":  # Intel Gaudi: its collective library is called HCCL too
    dist.init_process_group(backend="hccl")
