"""helpers.profile: top operators of a real profiler run, GPU kernels from torch's own event classes, library names."""

import matplotlib
import pytest
import torch
from torch.autograd import DeviceType
from torch.autograd.profiler_util import EventList, FunctionEvent
from torch.profiler import ProfilerActivity, profile

from helpers.profile import figure, kernel_library, table, top

matplotlib.use("Agg")

# Kernel names as real traces print them (sources: ROCm/MIOpen#3310, ROCm/rocm-systems#5411, ROCm/pytorch#655,
# ROCm/hipBLASLt#932, ROCm/rocm-libraries#3230 and #12213, pytorch commit ba5eeed, pytorch#75363, apache/mxnet#14684,
# pytorch#10229, pytorch#167503, official-stockfish/nnue-pytorch#96, sgl-project/sglang#22353).
KERNELS = [
    ("naive_conv_nonpacked_fwd_nchw_half_double_half", "MIOpen"),
    ("miopenSp3AsmConv_v30_3_1_gfx9_fp32_f2x3_stride1", "MIOpen"),
    ("MIOpenConvUni.kd", "MIOpen"),
    ("gridwise_convolution_implicit_gemm_v4r1_nchw_kcyx_nkhw_lds_double_buffer.kd", "MIOpen"),
    ("Custom_Cijk_Alik_Bljk_BBS_BH_Bias_AS_SAV_UserArgs_MT256x256x64_MI16x16x1_SN_K1_MIWT4_16_WSGRB2_DTVA",
     "rocBLAS / hipBLASLt (Tensile)"),
    ("Cijk_Ailk_Bjlk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT256x256x64_MI16x16x1_CMS_SN", "rocBLAS / hipBLASLt (Tensile)"),
    ("FmhaBwdOGradDotO", "Composable Kernel"),
    ("ck::gemm_xdl_v3 (blockscale_preshuffle)", "Composable Kernel"),
    # Itanium-mangled (kineto leaves names over 1024 characters so): namespace ck, ck_tile
    ("_ZN2ck44kernel_grouped_conv_fwd_multiple_abd_xdl_cshuffleINS_49GridwiseGemmMultipleABD_xdl_cshuffle",
     "Composable Kernel"),
    ("_ZN7ck_tile6kentryILi1ENS_10FmhaFwdKernelINS_22BlockFmhaPipelineQRKSVS", "Composable Kernel"),
    ("void rocblas_gemvt_kernel<64, float>(int, int, float, long, float const*)", "rocBLAS / hipBLASLt"),
    ("triton_poi_fused_add_cos_sin_0", "Triton (torch.compile)"),
    ("triton_poi_fused__unsafe_view_mul_silu_2", "Triton (torch.compile)"),
    ("elementwise_kernel_manual_unroll", "PyTorch (ATen)"),
    ("void at::native::vectorized_elementwise_kernel<4, at::native::MulFunctor<float>, at::detail::Array<char*, 3> >",
     "PyTorch (ATen)"),
    ("void cudnn::detail::implicit_convolve_sgemm<float, float, int=512, int=6, int=8, int=3, int=3, int=5>", "cuDNN"),
    ("volta_scudnn_128x128_stridedB_splitK_xregs_large_nn_v1", "cuDNN"),
    ("maxwell_scudnn_winograd_128x128_ldg1_ldg4_tile148n_nt", "cuDNN"),
    ("sm80_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize128x64x8_stage3_warpsize2x2x1_ffma", "cuBLAS / cuBLASLt"),
    ("cutlass::Kernel2<cutlass_80_simt_sgemm_128x256_8x4_nt_align1>", "cuBLAS / cuBLASLt"),
    ("volta_sgemm_32x128_tn", "cuBLAS / cuBLASLt"),
    ("nvjet_tst_128x24_64x11_2x1_v_bz_TNT", "cuBLAS / cuBLASLt"),
    ("Memcpy HtoD (Pinned -> Device)", "other"),
]  # fmt: skip


@pytest.mark.parametrize("name, library", KERNELS)
def test_kernel_library(name, library):
    assert kernel_library(name) == library


def test_top_operators_of_a_real_cpu_profile():
    model = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3), torch.nn.ReLU(), torch.nn.Flatten(), torch.nn.LazyLinear(4))
    x = torch.randn(4, 3, 16, 16)
    model(x).sum().backward()
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        for _ in range(2):
            model(x).sum().backward()
    rows = top(prof, n=5)
    assert len(rows) == 5 and [r.self_ms for r in rows] == sorted((r.self_ms for r in rows), reverse=True)
    assert all(r.name.startswith(("aten::", "autograd::", "torch::", "AddmmBackward", "ConvolutionBackward"))
               or "Backward" in r.name for r in rows), [r.name for r in rows]  # fmt: skip
    assert any("conv" in r.name for r in rows) and all(r.calls >= 1 and r.total_ms >= r.self_ms for r in rows)
    assert top(prof, kernels=True) == []  # a CPU run has no GPU kernels


def gpu_events():
    """A CPU op and two GPU kernels, as torch.profiler's own event classes hold them (times in microseconds)."""
    kw = {"stack": [], "use_device": "cuda"}
    events = [FunctionEvent(0, "aten::conv2d", 1, 0, 900, **kw)]
    for i, (name, us) in enumerate([("Cijk_Ailk_Bljk_SB_MT64x64x16", 300), ("naive_conv_fwd_nchw", 500)] * 2):
        events.append(FunctionEvent(i + 1, name, 1, 1000 * i, 1000 * i + us, device_type=DeviceType.CUDA, **kw))
    out = EventList(events, use_device="cuda")
    out._build_tree()  # what the profiler does when it stops
    return out


class FakeProf:
    """What top() uses of a torch.profiler.profile: key_averages()."""

    def key_averages(self):
        return gpu_events().key_averages()


def test_top_kernels_from_profiler_events():
    rows = top(FakeProf(), kernels=True)
    assert [(r.name, r.calls, r.self_ms) for r in rows] == [
        ("naive_conv_fwd_nchw", 2, 1.0),
        ("Cijk_Ailk_Bljk_SB_MT64x64x16", 2, 0.6),
    ]
    assert [r.name for r in top(FakeProf())] == ["aten::conv2d"]
    text = table(rows, libraries=True).splitlines()
    assert text[2] == "| `naive_conv_fwd_nchw` | 2 | 1.00 | 62% | 1.00 | MIOpen |"
    assert text[3].endswith("| rocBLAS / hipBLASLt (Tensile) |")


def test_table_shortens_long_names_and_figure_orders_bars():
    rows = top(FakeProf(), kernels=True)
    long = [rows[0].__class__("x" * 100, 1, 2.0, 2.0)] + rows
    assert "`" + "x" * 67 + "...`" in table(long)
    fig = figure(rows, "kernels")
    labels = [t.get_text() for t in fig.axes[0].get_yticklabels()]
    assert labels == ["Cijk_Ailk_Bljk_SB_MT64x64x16", "naive_conv_fwd_nchw"]  # the largest on top


def test_conv_layout_runs_one_convolution_in_a_fresh_process_with_its_environment(monkeypatch):
    """Lesson 02's NHWC check: the child sees the variables it is given (torch 2.5-2.8 read them once per process),
    answers in JSON, and a child that fails is a clear error, not a JSONDecodeError."""
    import subprocess

    from helpers import profile

    r = profile.conv_layout("cpu", "float32", {"PYTORCH_MIOPEN_SUGGEST_NHWC": "0"})
    assert r == {"copies": 0, "output_channels_last": True, "kernels": []}  # oneDNN takes NHWC as it comes
    seen = {}

    def run(cmd, env, **kw):
        seen.update(cmd=cmd, env=env)
        return subprocess.CompletedProcess(
            cmd, 1, "", "Traceback ...\nRuntimeError: Found no NVIDIA driver on your system."
        )

    monkeypatch.setattr(subprocess, "run", run)  # run_json (helpers.bench) starts the child
    with pytest.raises(RuntimeError, match="the profiling process failed: RuntimeError: Found no NVIDIA driver"):
        profile.conv_layout("cuda", "bfloat16", {"PYTORCH_MIOPEN_SUGGEST_NHWC": "1"})
    assert seen["cmd"][1:] == ["-m", "helpers.profile", "cuda", "bfloat16"]
    assert seen["env"]["PYTORCH_MIOPEN_SUGGEST_NHWC"] == "1" and "PATH" in seen["env"]
