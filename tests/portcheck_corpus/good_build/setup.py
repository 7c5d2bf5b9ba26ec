import os

os.environ.setdefault("TORCH_CUDA_ARCH_LIST", "8.0;9.0")  # NVIDIA targets
os.environ.setdefault("PYTORCH_ROCM_ARCH", "gfx942;gfx90a")  # AMD targets
