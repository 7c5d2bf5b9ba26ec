from pathlib import Path

from helpers.hipify import hipify_report

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
