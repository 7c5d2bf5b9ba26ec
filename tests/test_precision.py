import pytest
import torch

from helpers import precision as hp
from helpers.device import detect
from tests.conftest import MACHINES

CPU = torch.device("cpu")


def test_probe_on_cpu_finds_float32_and_bfloat16():
    works = hp.probe_dtypes(CPU)
    assert works[torch.float32] and works[torch.bfloat16]


def test_probe_excludes_a_dtype_whose_op_raises():
    def no_fp16(device):
        if torch.get_autocast_dtype("cpu") == torch.float16:
            raise RuntimeError("\"addmm_impl_cpu_\" not implemented for 'Half'")

    works = hp.probe_dtypes(CPU, ops=(no_fp16,))
    assert works == {torch.float32: True, torch.bfloat16: True, torch.float16: False}


@pytest.mark.parametrize(
    "name, want",
    [("mi300x", torch.bfloat16), ("mi250x", torch.bfloat16), ("rx7900xtx", torch.bfloat16), ("h100", torch.bfloat16),
     ("rx6900xt", torch.float16)],  # RDNA2 (gfx1030): no bf16 matrix instructions
)  # fmt: skip
def test_simulated_gpus(name, want):
    info = detect(MACHINES[name])
    dtype, why = hp.recommend_amp_dtype(info.backend, {torch.bfloat16: True, torch.float16: True}, arch=info.arch)
    assert dtype == want and ("no GradScaler" in why if want == torch.bfloat16 else "gfx1030" in why)


@pytest.mark.parametrize(
    "arch, fast",
    [("sm_70", False), ("sm_75", False), ("sm_80", True), ("sm_90", True), ("sm_120", True), ("gfx906", False),
     ("gfx908", True), ("gfx942", True), ("gfx950", True), ("gfx1030", False), ("gfx1100", True), ("gfx1201", True),
     (None, False)],
)  # fmt: skip
def test_bf16_matrix_units(arch, fast):
    assert hp.has_bf16_matrix_units(arch) is fast


def test_old_nvidia_gpu_gets_fp16_with_scaler():
    dtype, why = hp.recommend_amp_dtype("cuda", {torch.bfloat16: True, torch.float16: True}, arch="sm_75")
    assert dtype == torch.float16 and "GradScaler" in why


def test_gpu_where_bf16_fails_gets_fp16():
    dtype, _ = hp.recommend_amp_dtype("rocm", {torch.bfloat16: False, torch.float16: True})
    assert dtype == torch.float16


def test_nothing_runs_stays_fp32():
    assert hp.recommend_amp_dtype("rocm", {torch.bfloat16: False, torch.float16: False})[0] is None


@pytest.mark.parametrize("cpu_bf16, want", [(True, torch.bfloat16), (False, None)])
def test_cpu_bf16_only_with_instructions(cpu_bf16, want):
    works = {torch.float32: True, torch.bfloat16: True, torch.float16: True}
    assert hp.recommend_amp_dtype("cpu", works, cpu_bf16=cpu_bf16)[0] == want


def test_cpu_bf16_detection_reads_x86_and_arm_flags(tmp_path, monkeypatch):
    import builtins

    real_open = builtins.open
    cases = {
        "flags\t\t: fpu avx2 avx512f avx512_bf16\n": True,
        "Features\t: fp asimd sve bf16 i8mm\n": True,
        "processor\t: 0\nBogoMIPS\t: 2000.00\nFeatures\t: fp asimd bf16\n": True,  # Arm: not the first line
        "processor\t: 0\nFeatures\t: fp asimd sve i8mm\n": False,
        "flags\t\t: fpu avx2 avx512f\n": False,
    }
    for text, want in cases.items():
        (tmp_path / "cpuinfo").write_text(text)
        monkeypatch.setattr(
            builtins, "open", lambda p, *a, **k: real_open(tmp_path / "cpuinfo" if p == "/proc/cpuinfo" else p, *a, **k)
        )
        assert hp.cpu_has_native_bf16() is want, text
    monkeypatch.setattr(builtins, "open", lambda p, *a, **k: (_ for _ in ()).throw(OSError("no such file")))
    assert hp.cpu_has_native_bf16() is None  # unknown (macOS, Windows): the recommendation stays float32


def test_choose_on_this_cpu_is_consistent():
    dtype, why = hp.choose_amp_dtype(CPU)
    assert dtype == (torch.bfloat16 if hp.cpu_has_native_bf16() else None) and why


@pytest.mark.parametrize(
    "dtype, scaler", [(torch.float16, True), (torch.bfloat16, False), (None, False), (torch.float32, False)]
)
def test_scaler_only_for_fp16(dtype, scaler):
    s = hp.make_grad_scaler(CPU, dtype)
    assert s.is_enabled() is scaler and s._device == "cpu"  # torch/amp/grad_scaler.py keeps the device type


@pytest.mark.parametrize(
    "dtype, enabled", [(torch.bfloat16, True), (torch.float16, True), (None, False), (torch.float32, False)]
)
def test_autocast_device_type_and_enabled(dtype, enabled):
    ctx = hp.autocast(CPU, dtype)
    assert ctx.device == "cpu" and ctx._enabled is enabled
    with ctx:
        y = torch.nn.Linear(8, 8)(torch.ones(2, 8))
    assert y.dtype == (dtype if enabled else torch.float32)


def _gpus_of(monkeypatch, fake):
    """torch.cuda.get_device_properties and torch.version.hip as the simulated build answers them (tests/fakes.py)."""
    monkeypatch.setattr(torch.cuda, "get_device_properties", fake.cuda.get_device_properties)
    monkeypatch.setattr(torch.version, "hip", fake.version.hip)


@pytest.mark.parametrize("name, want", [("mi300x", torch.bfloat16), ("rx6900xt", torch.float16),
                                        ("h100", torch.bfloat16)])  # fmt: skip
def test_choose_amp_dtype_on_a_gpu_reads_the_gpu_target(monkeypatch, name, want):
    """choose_amp_dtype's GPU branch: the simulated build's device properties give the target (gcnArchName only on
    ROCm builds); the probe runs on the device it is given (faked: no GPU here) and both low-precision dtypes run."""
    from tests.conftest import SPECS

    _gpus_of(monkeypatch, SPECS[name][0])
    probed = []
    monkeypatch.setattr(hp, "probe_dtypes", lambda d: probed.append(d) or {torch.float32: True, torch.bfloat16: True,
                                                                            torch.float16: True})  # fmt: skip
    gpu = torch.device("cuda")  # portcheck: ignore=PC101 (never touched: the probe is faked)
    dtype, why = hp.choose_amp_dtype(gpu)
    assert dtype == want and probed == [gpu], why
    if want == torch.float16:
        assert "gfx1030 has no bfloat16 matrix units" in why


@pytest.mark.parametrize(
    "device, current, want",
    [
        ("cuda:0", 0, torch.bfloat16),
        ("cuda:1", 0, torch.float16),
        ("cuda", 1, torch.float16),
        ("cuda", 0, torch.bfloat16),
    ],
)
def test_choose_amp_dtype_asks_about_the_gpu_it_is_given(monkeypatch, device, current, want):
    """Two different GPUs (RX 7900 XTX gfx1100 at index 0, RX 6900 XT gfx1030 at 1): the dtype is for the device
    given, or for torch's current GPU when it has no index; detect() describes the first GPU only."""
    from tests.conftest import ROCM_BUILD, RX6900XT, RX7900XTX
    from tests.fakes import fake_torch

    fake = fake_torch(**ROCM_BUILD, gpus=[RX7900XTX, RX6900XT])
    fake.cuda._current = current  # as after torch.cuda.set_device(current)
    _gpus_of(monkeypatch, fake)
    monkeypatch.setattr(hp, "probe_dtypes", lambda d: {torch.float32: True, torch.bfloat16: True, torch.float16: True})
    dtype, why = hp.choose_amp_dtype(torch.device(device))
    assert dtype == want, why
    assert ("gfx1030 has no bfloat16 matrix units" in why) is (want == torch.float16)


def test_probe_ops_allocate_on_the_probed_device(monkeypatch):
    """The probe must run on the device it is asked about (on a CPU-only machine a CPU probe would look the same)."""
    seen, real = [], torch.randn
    monkeypatch.setattr(torch, "randn", lambda *a, device=None, **k: seen.append(device) or real(*a, **k))
    hp._matmul(CPU)
    hp._conv(CPU)
    assert seen == [CPU, CPU, CPU]  # one matrix, then the convolution's input and weight


ALL = {torch.float32: True, torch.bfloat16: True, torch.float16: True}
FP16_ONLY = {torch.float32: True, torch.bfloat16: False, torch.float16: True}
NONE = {torch.float32: True, torch.bfloat16: False, torch.float16: False}
BF16_GPU = "bfloat16 runs on this GPU: float32's range, no GradScaler needed"


@pytest.mark.parametrize("backend, works, cpu_bf16, arch, want", [
    ("rocm", ALL, False, "gfx942", (torch.bfloat16, BF16_GPU)),
    ("mps", ALL, False, None, (torch.bfloat16, BF16_GPU)),
    ("rocm", ALL, False, "gfx1030", (torch.float16, "gfx1030 has no bfloat16 matrix units: float16 with a GradScaler")),
    ("cuda", FP16_ONLY, False, "sm_90", (torch.float16, "no fast bfloat16 here: float16 with a GradScaler")),
    ("cuda", ALL, False, None, (torch.float16, "no fast bfloat16 here: float16 with a GradScaler")),
    ("rocm", NONE, False, "gfx942", (None, "no low-precision dtype runs here: stay in float32")),
    ("cpu", ALL, True, None, (torch.bfloat16, "CPU with AVX512-BF16/AMX: bfloat16 autocast")),
    ("cpu", ALL, None, None,
     (None, "CPU without bf16 instructions: float32 (low precision would be emulated and slower)")),
])  # fmt: skip
def test_every_recommendation_and_its_reason(backend, works, cpu_bf16, arch, want):
    assert hp.recommend_amp_dtype(backend, works, cpu_bf16, arch) == want


def test_probe_runs_each_op_on_the_given_device():
    seen = []
    hp.probe_dtypes(CPU, ops=(seen.append,))
    assert seen == [CPU, CPU]  # once per low-precision dtype


def test_cpu_bf16_defaults_to_unknown_no():
    assert hp.recommend_amp_dtype("cpu", ALL)[0] is None  # without evidence of bf16 instructions: float32


ASSERTED = [("sm_80", True), ("sm_90", True), ("sm_120", True), ("sm_75", False), ("gfx90a", True), ("gfx942", True),
            ("gfx950", True), ("gfx908", False), ("gfx1100", False), ("gfx1201", False), ("gfx1030", False),
            (None, False)]  # fmt: skip


@pytest.mark.parametrize("arch, asserted", ASSERTED)
def test_speed_claims_are_asserted_only_where_measured_libraries_back_them(arch, asserted):
    assert hp.asserts_amp_speedup(arch) is asserted


def test_miopen_nhwc_only_where_it_pays():
    """Lessons 02 and 03 turn MIOpen's NHWC path on for Instinct only: on Radeon RDNA3 it was measured slower
    (pytorch#170764), and torch 2.11 made it opt-in again."""
    from helpers.precision import suggests_nhwc

    assert all(suggests_nhwc(a) for a in ("gfx90a", "gfx942", "gfx950"))
    assert not any(suggests_nhwc(a) for a in ("gfx1100", "gfx1201", "gfx1030", "sm_90", None))
