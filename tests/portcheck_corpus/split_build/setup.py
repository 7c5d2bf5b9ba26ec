# A project that already builds different kernels for each vendor: its NVIDIA-only folder is reported as info.
import os

from setuptools import setup
from torch.utils.cpp_extension import IS_HIP_EXTENSION, CUDAExtension

SKIP_BUILD = os.environ.get("SKIP_BUILD") == "1"
sources = ["kernels/shared/launch.cpp"]
if IS_HIP_EXTENSION:
    sources += ["kernels/amd/scan_wave64.cpp"]
else:
    sources += ["kernels/nvidia/scan_warp.cu"]
if not SKIP_BUILD and not IS_HIP_EXTENSION:
    sources += ["kernels/nvidia/extra.cu"]
else:
    sources += ["kernels/shared/fallback.cpp"]  # this else runs on CUDA too (when SKIP_BUILD): not ROCm-only
setup(name="split", ext_modules=[CUDAExtension("split._C", sources)])
