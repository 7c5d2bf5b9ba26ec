import dataclasses
import glob
import os

import pytest
import torch

from helpers import device as hd
from helpers import hardware as hw
from tests.conftest import CUDA_ARCHES, MACHINES, MI250X
from tests.fakes import (
    fake_torch,
    make_root,
)

# name -> (backend, arch, arch_supported, words that must appear in the warnings)
EXPECTED = {
    "mi300x": ("rocm", "gfx942", True, []),
    "mi250x": ("rocm", "gfx90a", True, []),
    "rx7900xtx": ("rocm", "gfx1100", True, []),
    "rx6900xt": ("rocm", "gfx1030", True, []),
    "h100": ("cuda", "sm_90", True, []),
    "cpu": ("cpu", None, None, []),
    "mps": ("mps", None, None, []),
    "cuda_wheel_on_amd": ("cpu", None, None, ["AMD GPU present", "no ROCm support"]),
    "rocm_missing_arch": ("rocm", "gfx1035", False, ["no kernels for gfx1035"]),
    "ryzen_laptop": ("cpu", None, None, []),  # the CPU's Radeon 780M: no advice to install a ROCm wheel
    "container_no_kfd": ("cpu", None, None, ["/dev/kfd is missing", "--group-add $(stat -c %g /dev/kfd)"]),
}


def test_every_simulated_machine_has_an_expectation():
    assert set(EXPECTED) == set(MACHINES)


def test_detect(machine):
    name, facts = machine
    backend, arch, supported, words = EXPECTED[name]
    info = hd.detect(facts)
    assert (info.backend, info.arch, info.arch_supported) == (backend, arch, supported)
    text = " ".join(info.warnings)
    for w in words:
        assert w in text
    if not words:
        assert info.warnings == ()
    assert info.device.type == {"rocm": "cuda", "cuda": "cuda", "mps": "mps", "cpu": "cpu"}[backend]
    assert dataclasses.is_dataclass(info) and info.torch_version == facts.torch_version


def test_detect_details():
    info = hd.detect(MACHINES["mi300x"])
    assert info.count == 8 and info.memory_gb == 192.0 and info.name == "AMD Instinct MI300X"
    assert info.hip_version and "HIP 7.14" in hd.describe(info) and "gfx942" in hd.describe(info)
    with pytest.raises(dataclasses.FrozenInstanceError):
        info.backend = "cuda"


def test_visible_devices_disagree():
    facts = dataclasses.replace(MACHINES["mi300x"], env={"HIP_VISIBLE_DEVICES": "0", "CUDA_VISIBLE_DEVICES": "1"})
    assert any("disagree" in w for w in hd.detect(facts).warnings)
    same = dataclasses.replace(facts, env={"HIP_VISIBLE_DEVICES": "0,1", "CUDA_VISIBLE_DEVICES": "0,1"})
    assert hd.detect(same).warnings == ()


@pytest.mark.parametrize(
    "name, want",
    [("mi300x", "cuda"), ("h100", "cuda"), ("mps", "mps"), ("cpu", "cpu"), ("container_no_kfd", "cpu")],
)
def test_pick_device_auto(name, want):
    assert hd.pick_device(facts=MACHINES[name]).type == want


def test_pick_device_auto_without_torch_accelerator():
    # torch < 2.6 (older ROCm images) has no torch.accelerator: facts.accelerator is None
    old = dataclasses.replace(MACHINES["mi250x"], accelerator=None)
    assert hd.pick_device(facts=old) == torch.device("cuda")  # portcheck: ignore=PC101


def test_pick_device_explicit_and_env():
    mi = MACHINES["mi300x"]
    assert hd.pick_device("cuda:3", facts=mi) == torch.device("cuda", 3)  # portcheck: ignore=PC101
    assert hd.pick_device("cpu", facts=mi) == torch.device("cpu")
    env = dataclasses.replace(mi, env={"COURSE_DEVICE": "cpu"})
    assert hd.pick_device(facts=env) == torch.device("cpu")
    assert hd.pick_device("cuda", facts=env).type == "cuda"  # the argument wins


@pytest.mark.parametrize(
    "prefer, env, words",
    [
        ("cuda", None, ["'cuda'", "not available", "available: cpu"]),
        (None, "gpu0", ["unknown device 'gpu0'", "$COURSE_DEVICE", "cpu"]),
        ("rocm", None, ["AMD GPUs are 'cuda'"]),
        ("hip:0", None, ["AMD GPUs are 'cuda'"]),
        ("mps", None, ["not available"]),
    ],
)
def test_pick_device_errors_are_one_line(prefer, env, words):
    facts = dataclasses.replace(MACHINES["cpu"], env={"COURSE_DEVICE": env} if env else {})
    with pytest.raises(hd.DeviceError) as e:
        hd.pick_device(prefer, facts=facts)
    msg = str(e.value)
    assert "\n" not in msg
    for w in words:
        assert w in msg


def test_pick_device_index_out_of_range():
    with pytest.raises(hd.DeviceError, match="cuda:0, cuda:1, cpu"):
        hd.pick_device("cuda:2", facts=MACHINES["mi250x"])


def test_pick_device_messages_word_for_word():
    with pytest.raises(hd.DeviceError) as e:
        hd.pick_device("gpu0", facts=MACHINES["mi250x"])
    assert str(e.value) == "unknown device 'gpu0' (argument); available here: cuda:0, cuda:1, cpu"
    env = dataclasses.replace(MACHINES["mi250x"], env={"COURSE_DEVICE": "hip"})
    with pytest.raises(hd.DeviceError) as e:
        hd.pick_device(facts=env)
    assert str(e.value) == ("'hip' ($COURSE_DEVICE) is not a PyTorch device type: AMD GPUs are 'cuda' in PyTorch; "
                            "available here: cuda:0, cuda:1, cpu")  # fmt: skip


def test_pick_device_on_a_mac_and_a_bare_cuda():
    assert hd.available_devices(MACHINES["mps"]) == ["mps", "cpu"]
    old_mac = dataclasses.replace(MACHINES["mps"], accelerator=None)  # torch < 2.6: no torch.accelerator
    assert hd.pick_device(facts=old_mac) == torch.device("mps")
    assert hd.pick_device("cuda", facts=MACHINES["h100"]) == torch.device("cuda")  # portcheck: ignore=PC101


def test_read_facts_reads_its_root_and_by_default_this_machine(tmp_path, monkeypatch):
    cpu_torch = fake_torch("2.14.1+cpu")
    f = hd.read_facts(cpu_torch, str(tmp_path), environ={})
    assert f.gpus == () and f.arch_list == () and not f.dev_kfd and not f.dev_dri
    (tmp_path / "dev" / "dri").mkdir(parents=True)
    assert hd.read_facts(cpu_torch, str(tmp_path), environ={}).dev_dri
    seen = []
    monkeypatch.setattr(os.path, "exists", lambda p: seen.append(p) or False)
    monkeypatch.setattr(glob, "glob", lambda p: seen.append(p) or [])
    hd.read_facts(cpu_torch, environ={})
    assert "/dev/kfd" in seen and "/sys/bus/pci/devices/*" in seen  # the real /dev and sysfs
    seen.clear()
    assert hw.pci_gpu_vendors() == () and seen == ["/sys/bus/pci/devices/*"]


def test_read_facts_through_fake_builds(tmp_path):
    h100, mi300x = MACHINES["h100"], MACHINES["mi300x"]
    # CUDA builds: gcnArchName holds the name; the target must come from the compute capability
    assert h100.gpus[0].arch == "sm_90" and h100.gpus[0].name == "NVIDIA H100 80GB HBM3"
    assert mi300x.gpus[0].arch == "gfx942:sramecc+:xnack-" and len(mi300x.gpus) == 8
    assert mi300x.dev_kfd and mi300x.dev_dri and not MACHINES["container_no_kfd"].dev_kfd
    assert mi300x.pci_gpu_vendors == ("AMD",) * 8  # class 0x1200, the NIC left out
    assert MACHINES["cuda_wheel_on_amd"].pci_gpu_vendors == ("AMD",) * 8
    assert MACHINES["ryzen_laptop"].pci_gpu_vendors == ("AMD",)  # the NPU is not a GPU
    assert MACHINES["cpu"].accelerator is None and MACHINES["mps"].accelerator == "mps"
    assert MACHINES["cuda_wheel_on_amd"].accelerator is None  # built for CUDA, none usable
    old = hd.read_facts(fake_torch("2.5.1+rocm6.2", hip="6.2.41133", gpus=[MI250X], accelerator=False),
                        str(make_root(tmp_path)), environ={"HIP_VISIBLE_DEVICES": "0", "HOME": "/root"})  # fmt: skip
    assert old.accelerator is None and old.cuda_available and old.env == {"HIP_VISIBLE_DEVICES": "0"}


def test_this_machine():
    info = hd.detect()
    assert info.backend in {"cpu", "cuda", "rocm", "mps"}
    assert info.torch_version == torch.__version__
    assert hd.pick_device().type == info.device.type
    assert "backend:" in hd.describe()


@pytest.mark.parametrize("arch, arch_list, ok", [
    ("sm_90", ("sm_80", "compute_80"), True),  # PTX for 8.0 is JIT-compiled on a 9.0 GPU
    ("sm_90", ("sm_80", "sm_86"), False),  # a cubin runs within its major version only: no PTX, no kernels
    ("sm_89", CUDA_ARCHES, True),  # L40S / RTX 4090: the wheel's sm_86 cubins run on 8.9
    ("sm_121", CUDA_ARCHES, True),  # DGX Spark (GB10): sm_120 cubins
    ("sm_80", ("sm_86",), False),  # ... but not on an older minor version
    ("sm_90", ("sm_90a",), True),  # arch-specific cubins run on that exact target
    ("sm_100", ("sm_90a", "sm_90"), False),
    ("sm_89", ("sm_86",), True),
    ("sm_103", ("sm_100a",), False),  # GB300: the B200-specific cubins do not run on it
    ("sm_86", ("sm_75", "compute_90"), False),  # PTX for a newer target does not run on an older GPU
    ("sm_120", ("sm_90", "compute_120"), True),
    ("gfx942", ("gfx90a", "gfx942"), True),
    ("gfx1103", ("gfx1100", "gfx1101"), False),  # ROCm: exact targets only, no PTX-like fallback
])  # fmt: skip
def test_arch_supported_reads_ptx_entries(arch, arch_list, ok):
    assert hd._arch_supported(arch, arch_list) is ok


ROCM_VERSIONS = "versions: torch 2.14.1+rocm7.14, HIP 7.14.60001"
NO_GFX1035 = (
    "warning: this torch build has no kernels for gfx1035 (built for gfx908, gfx90a, gfx942, gfx950, gfx1030, "
    "gfx1100, gfx1101, gfx1102, gfx1103, gfx1200, gfx1201, gfx1150, gfx1151): AMD's multi-arch wheels have it: "
    'pip install "torch[device-gfx1035]" --index-url https://repo.amd.com/rocm/whl-multi-arch/'
)


@pytest.mark.parametrize("name, lines", [
    ("mi300x", ["backend: rocm  device: cuda:0  (AMD Instinct MI300X)", ROCM_VERSIONS,
                "gpu: 8 x gfx942, 192.0 GiB, in this build: yes"]),
    ("h100", ["backend: cuda  device: cuda:0  (NVIDIA H100 80GB HBM3)", "versions: torch 2.14.1+cu130, CUDA 13.0",
              "gpu: 1 x sm_90, 79.2 GiB, in this build: yes"]),
    ("cpu", ["backend: cpu  device: cpu  (CPU)", "versions: torch 2.14.1+cpu"]),
    ("rocm_missing_arch", ["backend: rocm  device: cuda:0  (AMD Radeon 680M)", ROCM_VERSIONS,
                           "gpu: 1 x gfx1035, 8.0 GiB, in this build: NO", NO_GFX1035]),
])  # fmt: skip
def test_describe_lines(name, lines):
    assert hd.describe(hd.detect(MACHINES[name])).splitlines() == lines


def test_warnings_word_for_word():
    """The exact warnings of the machines that get one, plus two more: an NVIDIA GPU under a CPU wheel, and a ROCm
    build that sees /dev/kfd but no GPU (e.g. a driver too old for the ROCm in the wheel)."""
    assert hd.detect(MACHINES["cuda_wheel_on_amd"]).warnings == (
        "AMD GPU present but this torch has no ROCm support (torch.version.hip is None): install a ROCm wheel "
        f"(--index-url {hd.ROCM_WHEEL_INDEX}) or use a rocm/pytorch image",
    )
    nvidia_cpu = dataclasses.replace(MACHINES["cpu"], pci_gpu_vendors=("NVIDIA",))
    assert hd.detect(nvidia_cpu).warnings == ("NVIDIA GPU present but this torch has no CUDA support: install a CUDA "
                                              "wheel",)  # fmt: skip
    no_driver = dataclasses.replace(MACHINES["h100"], cuda_available=False, gpus=(), arch_list=())
    assert hd.detect(no_driver).warnings == ("NVIDIA GPU present and a CUDA 13.0 build, but torch sees no GPU: check "
                                             "the driver (nvidia-smi shows the newest CUDA it supports)",)  # fmt: skip
    no_gpu = dataclasses.replace(MACHINES["container_no_kfd"], dev_kfd=True, dev_dri=True)
    info = hd.detect(no_gpu)
    assert info.backend == "cpu" and info.warnings == (
        "ROCm build of torch but no usable GPU: run `python -m helpers.doctor`",
    )
    empty = dataclasses.replace(MACHINES["rocm_missing_arch"], arch_list=())
    assert "(built for nothing)" in hd.detect(empty).warnings[0]


def test_detect_counts_and_names_without_a_gpu():
    for name, dev_name in (("cpu", "CPU"), ("mps", "Apple MPS")):
        info = hd.detect(MACHINES[name])
        assert (info.count, info.name, info.memory_gb, info.arch) == (1, dev_name, None, None)
    gpu = torch.device("cuda", 0)  # portcheck: ignore=PC101 (a description only: nothing runs on it)
    nomem = hd.DeviceInfo("rocm", gpu, "X", 1, None, "gfx942", "2.14.1", "7.14", None, True)
    assert hd.describe(nomem).splitlines()[2] == "gpu: 1 x gfx942, in this build: yes"


def test_runtime_gpus_that_torch_cannot_index_are_no_gpu(tmp_path):
    """HIP_VISIBLE_DEVICES="" on ROCm: the HIP runtime ignores an empty value (clr), so is_available() is True, but
    torch parses the variable itself and device_count() is 0 (torch/cuda/__init__.py). Nothing can run on cuda:0:
    detect() and pick_device("auto") agree on the CPU (pick_device took torch.accelerator's "cuda" before)."""
    from tests.conftest import MI300X, ROCM_BUILD
    from tests.fakes import fake_torch, make_root

    t = fake_torch(**ROCM_BUILD, gpus=[MI300X])
    t.cuda.device_count = lambda: 0  # what torch answers with HIP_VISIBLE_DEVICES=""
    f = hd.read_facts(t, str(make_root(tmp_path, kfd=True, dri=True)), environ={"HIP_VISIBLE_DEVICES": ""})
    assert f.gpus == () and not f.cuda_available and f.accelerator == "cuda"
    assert hd.detect(f).backend == "cpu" and hd.pick_device("auto", f) == torch.device("cpu")


def test_memory_gib_is_what_a_lesson_sizes_its_work_by():
    """A GPU's total memory (get_device_properties(device), torch/cuda/__init__.py), a Mac's recommended working set
    (torch.mps.recommended_max_memory, torch >= 2.5), nothing for the CPU."""
    from types import SimpleNamespace

    from tests.conftest import MI300X

    seen = []
    fake = SimpleNamespace(
        cuda=SimpleNamespace(get_device_properties=lambda d: seen.append(d) or MI300X),
        mps=SimpleNamespace(recommended_max_memory=lambda: 5 * 2**30 + 2**29),  # an 8 GB Mac: about 5.5 GiB
    )
    gpu1 = torch.device("cuda", 1)  # portcheck: ignore=PC101 (never touched: torch is faked)
    assert round(hd.memory_gib(gpu1, fake), 2) == 191.98 and seen == [gpu1]
    assert hd.memory_gib(torch.device("mps"), fake) == 5.5
    assert hd.memory_gib(torch.device("mps"), SimpleNamespace(mps=SimpleNamespace())) is None  # an older torch
    assert hd.memory_gib(torch.device("cpu"), fake) is None


def test_with_index_names_the_current_gpu_for_a_child_process():
    """An index-less "cuda" is the current GPU in this process and GPU 0 in a fresh one: children get the index."""
    from types import SimpleNamespace

    fake = SimpleNamespace(device=torch.device, cuda=SimpleNamespace(current_device=lambda: 3))
    assert hd.with_index(torch.device("cuda"), fake) == torch.device("cuda", 3)  # portcheck: ignore=PC101
    assert hd.with_index(torch.device("cuda", 1), fake) == torch.device("cuda", 1)  # portcheck: ignore=PC101
    assert hd.with_index(torch.device("mps"), fake) == torch.device("mps")


def test_save_as_from_writes_a_gpu_checkpoint_and_leaves_this_process_as_it_was(tmp_path):
    """Lessons 01 and 04 need a checkpoint as a GPU machine writes it: storages tagged "cuda:0" (or "cuda:8"). The
    tagger runs in a child process: a plain save and load here still works afterwards."""
    import io
    import zipfile

    state = torch.nn.Linear(3, 2).state_dict()
    hd.save_as_from("cuda:8", state, tmp_path / "gpu.pt")
    with zipfile.ZipFile(tmp_path / "gpu.pt") as z:
        assert b"cuda:8" in z.read(next(n for n in z.namelist() if n.endswith("data.pkl")))
    loaded = torch.load(tmp_path / "gpu.pt", map_location="cpu")
    assert all(torch.equal(loaded[k], v) for k, v in state.items())
    buf = io.BytesIO()
    torch.save(state, buf)
    buf.seek(0)
    assert torch.load(buf)["weight"].device.type == "cpu"  # no tagger left here  # portcheck: ignore=PC104
