import os

os.environ.setdefault("TORCH_CUDA_ARCH_LIST", "8.0;9.0")  # NVIDIA targets
os.environ.setdefault("PYTORCH_ROCM_ARCH", "gfx942;gfx90a")  # AMD targets

# The ported extension build: CUDAExtension compiles with hipcc on a ROCm torch (IS_HIP_EXTENSION), with nvcc on CUDA.
from setuptools import setup  # noqa: E402
from torch.utils.cpp_extension import CUDA_HOME, IS_HIP_EXTENSION, BuildExtension, CUDAExtension  # noqa: E402

if CUDA_HOME is not None or IS_HIP_EXTENSION:
    ext = CUDAExtension("fused", ["fused.cpp", "fused_kernel.cu"], extra_compile_args={"nvcc": ["-O3"]})
    setup(name="fused", ext_modules=[ext], cmdclass={"build_ext": BuildExtension})
