# An extension's setup.py that only knows CUDA: on a ROCm torch CUDA_HOME is None.
from setuptools import setup
from torch.utils.cpp_extension import CUDA_HOME, BuildExtension, CppExtension, CUDAExtension

if CUDA_HOME is not None:  # expect: PC206
    ext = CUDAExtension("fused", ["fused.cpp", "fused_kernel.cu"], extra_compile_args={"nvcc": ["-O3"]})
else:
    ext = CppExtension("fused", ["fused.cpp"])  # silently CPU-only on an AMD GPU
setup(name="fused", ext_modules=[ext], cmdclass={"build_ext": BuildExtension})
