"""Helpers for the course "Porting PyTorch models from CUDA to AMD GPUs (ROCm)".

One module per concern, each introduced by a lesson:

- ``helpers.device``     where am I running? (lesson 01)
- ``helpers.precision``  which autocast dtype, and a scaler only for float16 (lesson 02)
- ``helpers.bench``      thin layer over ``torch.utils.benchmark`` (lesson 02)
- ``helpers.train``      the digits data set, ResNet training loop, top-k labels (lesson 03)
- ``helpers.diagnose``   explain an error message (lesson 04; imports no torch)
- ``helpers.doctor``     is this machine ready? (lesson 00)
- ``helpers.portcheck``  scan a project for CUDA-isms (lesson 03; imports no torch)
- ``helpers.hipify``     run PyTorch's HIPify on a copy of a folder, report the renames (lesson 05)
- ``helpers.dist``       torch.distributed backend choice, torchrun runner (lesson 06)
- ``helpers.exercises``  the checks of the lessons' exercises: a Verdict with a precise hint, never an exception
- ``helpers.profile``    torch.profiler's top operators and kernels as a table and a chart (lesson 07)
- ``helpers.record``     record a lesson's measured numbers for ``make run``'s summary.json

Importing ``helpers`` itself imports nothing heavy: ``import helpers.device`` does.
"""

__version__ = "0.1.0"
