"""Two machines the exercise checks (lessons 01 and 03) run the learner's code on besides this one: a GPU machine, and a
laptop with a CUDA build of torch and no GPU. So a check on a CPU can tell device-agnostic code from code that only runs
here.

``simulated_gpu()``: torch.cuda and torch.accelerator answer as on a machine with one GPU, an MI300X's properties
(``torch.version`` stays this build's: the checks ask where code puts tensors, not which vendor). A tensor asked
to go to "cuda" stays a CPU tensor that remembers it is "on the GPU" (its ``.device`` says cuda:0); an op that mixes
such tensors with CPU ones raises PyTorch's real message, "Expected all tensors to be on the same device ...".
``simulated_laptop()``: torch.cuda.is_available() is False while torch.accelerator.current_accelerator() still
answers "cuda" (the build's accelerator, torch >= 2.7: ``check_available=False`` by default), and anything sent to
"cuda" raises what a CUDA wheel raises there.

    >>> import torch
    >>> with simulated_gpu() as gpu:
    ...     x = torch.ones(2).to("cuda")
    >>> x.device.type, gpu.moved
    ('cpu', True)
"""

from __future__ import annotations

import contextlib
import os
from types import SimpleNamespace
from unittest import mock

import torch
from torch.overrides import TorchFunctionMode

MISMATCH = "Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!"
NO_DRIVER = "Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and installed a driver"
MI300X = SimpleNamespace(name="AMD Instinct MI300X (simulated)", gcnArchName="gfx942:sramecc+:xnack-", major=9,
                         minor=4, total_memory=192 * 2**30, multi_processor_count=304, warp_size=64)  # fmt: skip


def on_gpu(t) -> bool:
    """Is this tensor (or Parameter) "on the simulated GPU"?"""
    return isinstance(t, torch.Tensor) and getattr(t, "_on_simulated_gpu", False)


def _tensors(x):
    if isinstance(x, torch.Tensor):
        yield x
    elif isinstance(x, list | tuple):
        for y in x:
            yield from _tensors(y)
    elif isinstance(x, dict):
        yield from _tensors(list(x.values()))


def _mark(out, gpu: bool):
    for t in _tensors(out):
        t._on_simulated_gpu = gpu
    return out


def _is_cuda(device) -> bool:
    return device is not None and (isinstance(device, int) or torch.device(device).type == "cuda")


class _Placement(TorchFunctionMode):
    """Every torch call passes here: device moves are recorded and run on the CPU, mixed devices are refused."""

    def __init__(self, gpu_usable: bool):
        super().__init__()
        self.gpu_usable, self.moved = gpu_usable, False

    def _to(self, func, args, kwargs):
        t = args[0]
        if func is torch.Tensor.cuda:
            gpu, keep = True, {}
        elif func is torch.Tensor.cpu:
            gpu, keep = False, {}
        else:  # Tensor.to(device), .to(dtype), .to(device, dtype), .to(other), keywords
            other = next((a for a in args[1:2] if isinstance(a, torch.Tensor)), None)
            kwargs = {k: v for k, v in kwargs.items() if k != "copy"}  # (_parse_to knows no copy=)
            device, dtype, _, fmt = torch._C._nn._parse_to(*args[1:], **kwargs)
            if other is None and device is None:  # a dtype or layout change: where it already is
                return _mark(func(*args, **kwargs), on_gpu(t))
            if other is None and device.type not in ("cuda", "cpu"):  # meta, mps: as asked
                return _mark(func(*args, **kwargs), False)
            gpu = on_gpu(other) if other is not None else (on_gpu(t) if device is None else _is_cuda(device))
            keep = {k: v for k, v in (("dtype", dtype), ("memory_format", fmt)) if v is not None}
        if gpu and not self.gpu_usable:
            raise RuntimeError(NO_DRIVER)
        self.moved |= gpu
        out = torch.Tensor.to(t, "cpu", **keep)
        if out is t and gpu != on_gpu(t) and not isinstance(t, torch.nn.Parameter):
            out = t.view_as(t)  # a new tensor for the new device (a Parameter keeps itself: nn.Module.to needs it)
        return _mark(out, gpu)

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        getter = getattr(func, "__self__", None)  # Tensor.device.__get__ and friends: a new wrapper at each access
        if getter is torch.Tensor.device:
            return torch.device("cuda", 0) if on_gpu(args[0]) else func(*args)  # portcheck: ignore=PC101
        if getter is torch.Tensor.is_cuda:
            return on_gpu(args[0])
        if getter is torch.Tensor.grad:  # gradients live where their tensor does
            return _mark(func(*args), True) if on_gpu(args[0]) else func(*args)
        if func in (torch.Tensor.cuda, torch.Tensor.cpu, torch.Tensor.to):
            return self._to(func, args, kwargs)
        if func is torch.Tensor.copy_:  # copies between devices are allowed; the target stays where it is
            return func(*args, **kwargs)
        if kwargs.get("device") is not None and _is_cuda(kwargs["device"]):  # a factory: torch.randn(..., device=)
            if not self.gpu_usable:
                raise RuntimeError(NO_DRIVER)
            self.moved = True
            return _mark(func(*args, **{**kwargs, "device": "cpu"}), True)
        if kwargs.get("device") is not None:  # made on another device (the CPU, meta): not the simulated GPU
            return func(*args, **kwargs)
        tensors = list(_tensors((args, kwargs)))
        gpu = any(on_gpu(t) for t in tensors)
        if gpu and any(not on_gpu(t) and t.dim() > 0 for t in tensors):  # (CPU scalars mix with GPU tensors)
            raise RuntimeError(MISMATCH)
        out = func(*args, **kwargs)
        return _mark(out, True) if gpu else out


def _loader(gpu: bool):
    """torch.load with map_location="cuda": loaded on the CPU, then marked (storages are restored in C++)."""
    real = torch.load

    def load(f, map_location=None, **kwargs):
        to_gpu = isinstance(map_location, str | torch.device | int) and _is_cuda(map_location)
        if to_gpu and not gpu:
            raise RuntimeError(NO_DRIVER)
        out = real(f, map_location="cpu" if to_gpu else map_location, **kwargs)
        return _mark(out, True) if to_gpu else out

    return load


@contextlib.contextmanager
def _machine(gpu: bool):
    stream = SimpleNamespace(is_capturing=lambda: False, synchronize=lambda: None)

    def current_accelerator(check_available=False):  # the build's accelerator, usable or not (None: asked, none)
        return None if check_available and not gpu else torch.device("cuda")  # portcheck: ignore=PC101

    patches = [
        (torch, "load", _loader(gpu)),
        (torch.cuda, "is_available", lambda: gpu),
        (torch.cuda, "device_count", lambda: int(gpu)),
        (torch.cuda, "current_device", lambda: 0),
        (torch.cuda, "get_device_properties", lambda device=None: MI300X),
        (torch.cuda, "get_device_name", lambda device=None: MI300X.name),
        (torch.cuda, "get_arch_list", lambda: ["gfx942"] if gpu else []),
        (torch.cuda, "synchronize", lambda device=None: None),
        (torch.cuda, "is_current_stream_capturing", lambda: False),
        (torch.accelerator, "is_available", lambda: gpu),
        (torch.accelerator, "current_stream", lambda device=None: stream),
        (torch.accelerator, "synchronize", lambda device=None: None),
        (torch.accelerator, "current_accelerator", current_accelerator),
    ]
    with contextlib.ExitStack() as stack:
        stack.enter_context(mock.patch.dict(os.environ))
        os.environ.pop("COURSE_DEVICE", None)  # pick_device() would take it over the machine
        for obj, name, fake in patches:
            if hasattr(obj, name):  # (torch.accelerator's functions arrived over several releases)
                stack.enter_context(mock.patch.object(obj, name, fake))
        placement = stack.enter_context(_Placement(gpu))
        yield placement


def simulated_gpu():
    """A machine with one GPU (see the module's docstring); ``.moved`` says whether anything went to the GPU."""
    return _machine(gpu=True)


def simulated_laptop():
    """A laptop with a CUDA build of torch and no GPU: what `pip install torch` gives most learners."""
    return _machine(gpu=False)
