"""Train a classifier on scikit-learn's digits with DistributedDataParallel: lesson 06's script.

Launch with torchrun; every process (rank) trains on its own shard of the data, and DDP averages the
gradients over the backend chosen for the device: "nccl" on NVIDIA *and* AMD GPUs (where it is RCCL),
"gloo" on CPUs. With --fsdp the model is sharded as well (FSDP2, fully_shard): each rank keeps 1/world of
every parameter and gathers the rest when a layer runs. At the end the script checks itself: the
parameters must be identical on every rank and the loss must have decreased; the exit code is 1 otherwise.

    torchrun --standalone --nproc-per-node 2 ddp_train.py --epochs 3 [--fsdp]
"""

import argparse
import gc
import os

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler

from helpers.dist import check_backend, dist_backend
from helpers.precision import autocast, choose_amp_dtype
from helpers.train import load_digits_rgb, make_resnet


def build(name):
    if name == "mlp":
        return nn.Sequential(nn.Flatten(), nn.Linear(3 * 16 * 16, 256), nn.ReLU(), nn.Linear(256, 10))
    return make_resnet(name)


def shard(model):
    """FSDP2: shard each layer with parameters, then the root (torch 2.6+: torch.distributed.fsdp.fully_shard)."""
    try:
        from torch.distributed.fsdp import fully_shard
    except ImportError:  # torch 2.5: the same API under its first name
        from torch.distributed._composable.fsdp import fully_shard
    for layer in model.children():
        if any(p.requires_grad for p in layer.parameters()):
            fully_shard(layer)
    return fully_shard(model)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--model", default="resnet18", choices=["mlp", "resnet18"])
    ap.add_argument("--checkpoint", default="digits.pt")
    ap.add_argument("--backend", default=None, help="default: nccl on GPUs (RCCL on AMD), gloo on CPU")
    ap.add_argument("--fsdp", action="store_true", help="shard parameters, gradients and optimizer state (FSDP2)")
    args = ap.parse_args()

    rank, world, local_rank = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]), int(os.environ["LOCAL_RANK"])
    if torch.cuda.is_available() and torch.cuda.device_count() >= int(os.environ["LOCAL_WORLD_SIZE"]):
        device = torch.device("cuda", local_rank)  # one GPU per process; AMD GPUs are "cuda" too
        torch.cuda.set_device(device)
    else:
        device = torch.device("cpu")
        torch.set_num_threads(max(1, (os.cpu_count() or 1) // world))
    backend = check_backend(args.backend or dist_backend(device))  # a clear error for "rccl", "hccl", ...
    # device_id binds the group to this rank's GPU: with "nccl" the communicator starts now, not at the first collective
    dist.init_process_group(backend=backend, device_id=device if device.type == "cuda" else None)
    identical, decreased = train(args, rank, world, local_rank, device, backend)
    # Everything train() made (DDP and its reducer, the optimizer, the last autograd graph, the tensors gloo's worker
    # threads saw) is gone now that it returned. Tear the group down while Python is fully alive: a group or a
    # gloo work item still referenced at interpreter exit can abort the process ("terminate called without an
    # active exception", pytorch#190489), which is what made this script fail now and then under load.
    gc.collect()
    dist.barrier()  # every rank waits until rank 0 has written the checkpoint
    dist.destroy_process_group()
    if not (identical and decreased):
        raise SystemExit(1)


def train(args, rank, world, local_rank, device, backend):
    """Train with DDP, save the checkpoint on rank 0, and return (identical parameters, loss decreased)."""
    amp_dtype, _ = choose_amp_dtype(device)

    torch.manual_seed(0)  # the same initial weights everywhere (DDP also broadcasts rank 0's)
    data = load_digits_rgb(size=16)
    sampler = DistributedSampler(TensorDataset(data.x_train, data.y_train), num_replicas=world, rank=rank)
    loader = DataLoader(TensorDataset(data.x_train, data.y_train), batch_size=args.batch_size, sampler=sampler)
    model = build(args.model).to(device)
    if args.fsdp:
        model = shard(model)
    else:
        model = DDP(model, device_ids=[local_rank] if device.type == "cuda" else None)
    opt = torch.optim.Adam(model.parameters(), lr=2e-3)
    if rank == 0:
        how = "FSDP2 (fully_shard)" if args.fsdp else "DDP"
        print(f"world size {world}, backend {backend!r} on {device.type}, {how} of {args.model}, autocast {amp_dtype}")
    local = sum(p.to_local().numel() if hasattr(p, "to_local") else p.numel() for p in model.parameters())
    full = sum(p.numel() for p in model.parameters())  # a sharded DTensor still reports its full size
    print(f"[rank {rank}] holds {local} of {full} parameter values\n", end="", flush=True)

    losses, first = [], None  # first: the loss of the very first step, the baseline for "it learned"
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)  # a different shuffle every epoch, the same on every rank
        total, seen = torch.zeros(2, dtype=torch.float64, device=device), 0
        for x, y in loader:
            x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
            with autocast(device, amp_dtype):  # torch.autocast; off when amp_dtype is None (CPU)
                loss = nn.functional.cross_entropy(model(x), y)
            opt.zero_grad(set_to_none=True)
            loss.backward()  # DDP all-reduces the gradients here
            opt.step()
            total += torch.tensor([loss.item() * len(y), len(y)], dtype=torch.float64, device=device)
            if first is None:
                first = torch.tensor([loss.item()], dtype=torch.float64, device=device)
            seen += len(y)
        line = f"[rank {rank}] epoch {epoch + 1}: trained on {seen} samples, local loss {total[0] / total[1]:.4f}\n"
        print(line, end="", flush=True)  # one write per line, so the ranks' lines do not interleave
        dist.all_reduce(total)  # the global mean loss
        losses.append((total[0] / total[1]).item())
        if rank == 0:
            print(f"epoch {epoch + 1}: global loss {losses[-1]:.4f}", flush=True)

    # Self-check: identical parameters on every rank, and learning happened.
    whole = [p.full_tensor() if hasattr(p, "full_tensor") else p for p in model.parameters()]  # FSDP: all-gathers
    checksum = torch.stack([p.detach().double().sum() for p in whole]).sum().reshape(1)
    gathered = [torch.zeros_like(checksum) for _ in range(world)]
    dist.all_gather(gathered, checksum)
    finite = all(bool(torch.isfinite(g).all()) for g in gathered)  # NaN never equals NaN: say which failed
    identical = finite and all(torch.equal(g, gathered[0]) for g in gathered)
    dist.all_reduce(first)  # summed over ranks
    first = first.item() / world
    decreased = losses[-1] < first
    state = model.state_dict() if args.fsdp else model.module.state_dict()  # .module: no "module." prefix
    state = {k: v.full_tensor() if hasattr(v, "full_tensor") else v for k, v in state.items()}  # every rank gathers
    if rank == 0:
        torch.save(state, args.checkpoint)  # rank 0 only
        verdict = "passed" if identical and decreased else "FAILED"
        same = "identical" if identical else ("DIFFERENT" if finite else "NON-FINITE parameters")
        print(
            f"self-check {verdict}: parameter checksums {[round(g.item(), 6) for g in gathered]} "
            f"({same}), "
            f"loss {first:.4f} (first step) -> {losses[-1]:.4f} (last epoch)",
            flush=True,
        )
    return identical, decreased


if __name__ == "__main__":
    main()
