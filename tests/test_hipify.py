import os
import shutil
from pathlib import Path

import pytest

from helpers.hipify import cuda_extra_includes, hipify_report

CSRC = Path(__file__).parent.parent / "notebooks" / "assets" / "csrc"


def test_hipify_report_on_a_small_extension(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "k.cu").write_text(
        "#include <cuda_runtime.h>\n"
        "__global__ void k(float* x) { x[threadIdx.x] = 1.0f; }\n"
        "void run(float* h) {\n"
        "  float* d; cudaMalloc(&d, 4);\n"
        "  cudaStream_t s; cudaStreamCreate(&s);\n"
        "  k<<<1, 64, 0, s>>>(d);\n"
        "  cudaMemcpy(h, d, 4, cudaMemcpyDeviceToHost); cudaFree(d);\n"
        "}\n"
    )
    (src / "b.cpp").write_text("int answer() { return 42; }\n")
    before = (src / "k.cu").read_text()
    files = {f.source.name: f for f in hipify_report(src, tmp_path / "work")}
    k = files["k.cu"]
    assert k.output.name == "k.hip" and k.output.exists() and k.status == "[ok]"
    assert "hipMalloc(&d, 4)" in k.after and "hipLaunchKernelGGL" in k.after
    assert k.renames[("cudaMalloc", "hipMalloc")] == 1 and k.renames[("cudaFree", "hipFree")] == 1
    assert k.renames[("cuda_runtime.h", "hip/hip_runtime.h")] == 1
    assert k.renames[("cudaMemcpyDeviceToHost", "hipMemcpyDeviceToHost")] == 1
    assert k.leftover_cuda == []
    assert files["b.cpp"].renames == {} and "skipped" in files["b.cpp"].status
    assert (src / "k.cu").read_text() == before and not (src / "k.hip").exists()  # the source is untouched


def test_leftover_cuda_calls_are_reported(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "odd.cu").write_text("void f() { cudaMadeUpCall(); cudaMalloc(0, 0); }\n")
    (odd,) = hipify_report(src, tmp_path / "work")
    assert "cudaMadeUpCall" in odd.leftover_cuda and "cudaMalloc" not in odd.leftover_cuda


def test_lesson_extension_hipifies_cleanly(tmp_path):
    files = hipify_report(CSRC, tmp_path)
    assert {f.source.name for f in files} >= {"fused_ops.cpp", "fused_ops_cuda.cu", "legacy_softmax_warp32.cu"}
    for f in files:
        assert f.leftover_cuda == [], f.output
    legacy = next(f for f in files if f.source.name == "legacy_softmax_warp32.cu")
    assert "__shfl_down_sync(0xffffffff" in legacy.after  # hipify does not fix warp-size assumptions


def _cuda_toolkit():
    """(CUDA_HOME, extra include folders) where nvcc and the CUDA headers are installed, else None. This machine and
    CI have nvcc 13.0 in /usr/local/cuda (with a /usr/local/bin/nvcc shim, so torch's guess is /usr/local) and the
    cuSPARSE/cuBLAS headers only in the nvidia-* wheels the CUDA torch depends on (cuda_extra_includes finds them)."""
    import torch
    from torch.utils import cpp_extension

    if not torch.version.cuda:  # portcheck: ignore=PC106 (nvcc builds for a CUDA torch only; ROCm uses hipcc)
        return None
    homes = [os.environ.get("CUDA_HOME"), "/usr/local/cuda", cpp_extension.CUDA_HOME]
    home = next((h for h in homes if h and (Path(h) / "bin" / "nvcc").is_file()
                 and (Path(h) / "include" / "cuda_runtime.h").is_file()), None)  # fmt: skip
    if home is None:
        return None
    includes = cuda_extra_includes(home)  # [] when the toolkit has the headers, or when nothing carries them
    if not includes and not (Path(home) / "include" / "cusparse.h").is_file():
        return None
    return home, includes


def test_cuda_extra_includes_only_when_the_toolkit_lacks_the_headers(tmp_path):
    full = tmp_path / "full"
    (full / "include").mkdir(parents=True)
    for header in ("cusparse.h", "cublas_v2.h", "cublasLt.h", "cusolverDn.h"):
        (full / "include" / header).write_text("")
    assert cuda_extra_includes(str(full)) == []
    found = cuda_extra_includes(str(tmp_path / "nvcc-only"))  # from the nvidia-* wheels, where installed
    assert all(any((Path(d) / h).is_file() for h in ("cusparse.h", "cublas_v2.h")) for d in found)


@pytest.mark.skipif(_cuda_toolkit() is None, reason="needs a CUDA build of torch, nvcc and the CUDA headers")
def test_lesson_gpu_kernels_compile_with_nvcc(tmp_path, monkeypatch):
    """Lesson 05's GPU branch, built for real: its two sources in one library (both compile at once), the .cu file by
    nvcc for sm_90 (H100/H200), loaded, and registered under the CUDA dispatch key beside the CPU one. No GPU runs
    them here; the lesson checks their results against PyTorch's ops on a GPU."""
    import torch
    from torch.utils import cpp_extension

    home, includes = _cuda_toolkit()
    monkeypatch.setattr(cpp_extension, "CUDA_HOME", home)
    monkeypatch.setenv("TORCH_CUDA_ARCH_LIST", "9.0")  # one target: without a GPU torch would build every one
    monkeypatch.setenv("MAX_JOBS", "2")
    src = tmp_path / "src"
    shutil.copytree(CSRC, src)
    sources = [str(src / "fused_ops.cpp"), str(src / "fused_ops_cuda.cu")]
    cpp_extension.load(name="fused_ops_nvcc_check", sources=sources, extra_include_paths=includes,
                       build_directory=str(tmp_path), is_python_module=False)  # fmt: skip
    for op in (torch.ops.fused_ops.bias_gelu.default, torch.ops.fused_ops.row_softmax.default):
        assert op.has_kernel_for_dispatch_key("CPU") and op.has_kernel_for_dispatch_key("CUDA"), op
    assert (tmp_path / "fused_ops_cuda.cuda.o").is_file(), "the .cu file went through nvcc"
