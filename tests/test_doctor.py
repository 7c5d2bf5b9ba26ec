import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from helpers import doctor
from helpers.device import detect
from helpers.doctor import Machine, run_checks
from helpers.install import Install
from tests.conftest import MACHINES

GiB = 2**30
OK_DEV = {"/dev/kfd": "ok", "/dev/dri": "ok"}
GPU_OPS = {"tiny op": None, "bf16 op": None}


SITE = "/opt/venv/lib/python3.12/site-packages"
# PyTorch's ROCm 7.14 wheel with a system ROCm 7.14 (its hipcc) on bare metal; a PyPI wheel in the course's venv
ROCM_INSTALL = Install(f"{SITE}/torch", rocm_sdk_core="7.14.0", system_rocm="/opt/rocm/core-7.14",
                       hipcc="/usr/bin/hipcc")  # fmt: skip
PYPI_INSTALL = Install("/home/me/course/.venv/lib/python3.12/site-packages/torch")


def machine(name, **kw):
    f = MACHINES[name]
    gpu = f.cuda_available
    base = dict(
        facts=f,
        install=ROCM_INSTALL if f.hip_version else PYPI_INSTALL,
        python=(3, 12, 3),
        dev_access=OK_DEV if f.dev_kfd else {"/dev/kfd": "missing", "/dev/dri": "missing"},
        # Ubuntu 24.04 hosts: /dev/kfd and the render nodes belong to render (GID 110 here), video is 44
        dev_groups={"/dev/kfd": (110, "render"), "/dev/dri": (110, "render")} if f.dev_kfd else {},
        gids=(44, 110, 1000),
        shm_bytes=8 * GiB,
        op_errors=GPU_OPS,
        # torch.cuda.mem_get_info: (free, total) of the first GPU; free is below total (the runtime keeps some)
        free_memory=(f.gpus[0].total_memory - 2 * GiB, f.gpus[0].total_memory) if gpu else None,
        torchvision="0.29.1",
    )
    return Machine(**{**base, **kw})


def verdicts(m):
    return {c.name: c.status for c in run_checks(m)}


# name -> checks that must have these statuses
EXPECTED = {
    "mi300x": {
        "torch build": "PASS",
        "GPU target in this build": "PASS",
        "/dev/kfd and /dev/dri": "PASS",
        "free GPU memory": "PASS",
    },
    "mi250x": {"torch build": "PASS", "GPU target in this build": "PASS"},
    "rx7900xtx": {"torch build": "PASS", "GPU target in this build": "PASS"},
    "rx6900xt": {"torch build": "PASS", "GPU target in this build": "PASS"},
    "h100": {"torch build": "PASS", "/dev/kfd and /dev/dri": "SKIP"},
    "cpu": {"torch build": "WARN", "GPU target in this build": "SKIP", "free GPU memory": "SKIP"},
    "mps": {"torch build": "PASS", "/dev/kfd and /dev/dri": "SKIP"},
    "cuda_wheel_on_amd": {"torch build": "FAIL"},
    "rocm_missing_arch": {"GPU target in this build": "FAIL"},
    "ryzen_laptop": {"torch build": "WARN", "/dev/kfd and /dev/dri": "SKIP", "torch install": "PASS"},
    "container_no_kfd": {"/dev/kfd and /dev/dri": "FAIL", "torch build": "FAIL"},
}


@pytest.mark.parametrize("name", sorted(MACHINES))
def test_simulated_machines(name):
    v = verdicts(machine(name))
    for check, status in EXPECTED[name].items():
        assert v[check] == status, (name, check, v)
    fails = [c for c, s in v.items() if s == "FAIL"]
    assert bool(fails) == (name in {"cuda_wheel_on_amd", "rocm_missing_arch", "container_no_kfd"})
    r = doctor.report(run_checks(machine(name)))
    assert r["ok"] == (not fails) and sum(r["summary"].values()) == len(r["checks"])


def test_every_failing_check_has_a_fix():
    for name in MACHINES:
        for c in run_checks(machine(name)):
            if c.status in ("FAIL", "WARN"):
                assert c.fix, (name, c)


def test_broken_torch_is_a_fail_not_a_crash():
    m = Machine(torch_error="ImportError: libamdhip64.so.6: cannot open shared object file", shm_bytes=None)
    checks = run_checks(m)
    assert [c.status for c in checks if c.name == "import torch"] == ["FAIL"]
    assert doctor.report(checks)["ok"] is False
    assert "fail" in doctor.format_report(checks)


def test_missing_sys_and_dev_information():
    m = machine("mi300x", dev_access={}, gids=(), shm_bytes=None, op_errors={}, free_memory=None, torchvision=None)
    v = verdicts(m)
    assert v["/dev/shm"] == "SKIP" and v["tiny op on the GPU"] == "SKIP" and v["free GPU memory"] == "SKIP"
    assert v["/dev/kfd and /dev/dri"] == "SKIP"


def test_access_decides_not_group_names():
    """The container the course starts: the host's GIDs passed by number (--group-add $(stat -c %g /dev/kfd)), names
    absent in the image. The runtime can open the devices: a PASS, whatever the groups are called (or not)."""
    numeric = machine("mi300x", dev_groups={"/dev/kfd": (993, None), "/dev/dri/renderD128": (992, None)},
                      dev_access={"/dev/kfd": "ok", "/dev/dri/renderD128": "ok"}, gids=(992, 993, 1000))  # fmt: skip
    checks = {c.name: c for c in run_checks(numeric)}
    assert checks["/dev/kfd and /dev/dri"].status == "PASS" and "render/video groups" not in checks
    assert not [c for c in checks.values() if c.status in ("WARN", "FAIL")], checks
    # In render by name, but /dev/kfd still refuses (a host whose kfd belongs to another group): a FAIL
    denied = machine("mi300x", dev_access={"/dev/kfd": "denied", "/dev/dri": "ok"}, gids=(44, 110),
                     dev_groups={"/dev/kfd": (993, None), "/dev/dri": (110, "render")})  # fmt: skip
    c = {c.name: c for c in run_checks(denied)}["/dev/kfd and /dev/dri"]
    assert c.status == "FAIL" and "group 993, no name in this image" in c.detail and "GIDs 44, 110" in c.detail
    assert "--group-add 993" in c.fix and "usermod" not in c.fix  # no name to add the user to
    named = machine("mi300x", dev_access={"/dev/kfd": "denied", "/dev/dri": "ok"}, gids=(44,))
    c = {c.name: c for c in run_checks(named)}["/dev/kfd and /dev/dri"]
    assert "--group-add 110" in c.fix and "sudo usermod -aG render $USER" in c.fix


def test_hsa_override():
    mi = dataclasses.replace(MACHINES["mi300x"], env={"HSA_OVERRIDE_GFX_VERSION": "9.4.2"})
    assert verdicts(machine("mi300x", facts=mi))["HSA_OVERRIDE_GFX_VERSION"] == "FAIL"
    rx = dataclasses.replace(MACHINES["rx7900xtx"], env={"HSA_OVERRIDE_GFX_VERSION": "11.0.0"})
    assert verdicts(machine("rx7900xtx", facts=rx))["HSA_OVERRIDE_GFX_VERSION"] == "WARN"


def test_visible_devices_clash_and_ops():
    f = dataclasses.replace(MACHINES["mi300x"], env={"HIP_VISIBLE_DEVICES": "0", "CUDA_VISIBLE_DEVICES": "1"})
    assert verdicts(machine("mi300x", facts=f))["visible-device variables"] == "WARN"
    v = verdicts(machine("mi300x", op_errors={"tiny op": "RuntimeError: HIP error", "bf16 op": "RuntimeError: x"}))
    assert v["tiny op on the GPU"] == "FAIL" and v["bf16 op on the GPU"] == "WARN"


def test_small_shm_low_memory_old_versions():
    v = verdicts(machine("mi300x", shm_bytes=64 * 2**20, free_memory=(GiB, 192 * GiB), python=(3, 9, 1)))
    assert v["/dev/shm"] == "WARN" and v["free GPU memory"] == "WARN" and v["Python"] == "WARN"
    old = dataclasses.replace(MACHINES["mi250x"], torch_version="2.4.1+rocm6.1")
    v = verdicts(machine("mi250x", facts=old, torchvision="0.19.1"))
    assert v["torch version"] == "FAIL" and v["torchvision"] == "PASS"
    assert verdicts(machine("cpu", torchvision="0.24.0"))["torchvision"] == "WARN"
    assert (
        verdicts(
            machine("cpu", torchvision=None, torchvision_error="RuntimeError: operator torchvision::nms does not exist")
        )["torchvision"]
        == "FAIL"
    )
    numpy = {c.name: c for c in run_checks(machine("cpu", numpy_error="A module compiled with NumPy 1.x"))}["numpy"]
    assert numpy.status == "FAIL" and "numpy 1.x and 2.x" in numpy.fix and not numpy.fix.startswith("pip install")
    assert verdicts(machine("cpu", python=(3, 10, 12)))["Python"] == "WARN"  # the pins need >= 3.11
    assert verdicts(machine("cpu", python=(3, 11, 7)))["Python"] == "PASS"


def test_this_machine_cli():
    r = subprocess.run([sys.executable, "-m", "helpers.doctor", "--json"], capture_output=True, text=True)
    data = json.loads(r.stdout)
    assert data["schema"] == 1 and r.returncode == (0 if data["ok"] else 1)
    assert {c["status"] for c in data["checks"]} <= {"PASS", "WARN", "FAIL", "SKIP"}
    names = [c["name"] for c in data["checks"]]
    assert "import torch" in names and "numpy" in names
    human = subprocess.run([sys.executable, "-m", "helpers.doctor"], capture_output=True, text=True)
    assert human.returncode == r.returncode and "pass," in human.stdout


@pytest.mark.parametrize("name,code", [("mi300x", 0), ("container_no_kfd", 1), ("cuda_wheel_on_amd", 1)])
def test_main_exit_code_follows_the_verdicts(monkeypatch, capsys, name, code):
    monkeypatch.setattr(doctor, "gather", lambda: machine(name))
    assert doctor.main([]) == code
    text = capsys.readouterr().out
    assert ("NOT ready" in text) == bool(code) and text.splitlines()[-1].endswith("ready" if not code else "first")
    assert doctor.main(["--json"]) == code
    out = capsys.readouterr().out
    data = json.loads(out)
    assert out.startswith('{\n  "schema": 1,\n  "ok": ')
    assert data["ok"] is (code == 0) and (data["summary"]["FAIL"] == 0) is (code == 0)
    assert [c["name"] for c in data["checks"]] == [c.name for c in run_checks(machine(name))]


def test_gather_reads_dev_groups_and_runs_the_ops(monkeypatch):
    """gather() on this machine, with the OS reads replaced by ones that answer differently per path."""
    monkeypatch.setattr(doctor, "_render_node", lambda: "/dev/dri/renderD129")
    monkeypatch.setattr(doctor, "_access", lambda p: {"/dev/kfd": "denied"}.get(p, "ok"))
    monkeypatch.setattr(doctor, "_gids", lambda: (44,))
    monkeypatch.setattr(doctor, "_owner", lambda p: {"/dev/kfd": (110, "render")}.get(p))
    monkeypatch.setattr(doctor, "_shm", lambda: 3 * GiB)
    m = doctor.gather()
    assert m.dev_access == {"/dev/kfd": "denied", "/dev/dri/renderD129": "ok"}
    assert m.gids == (44,) and m.dev_groups == {"/dev/kfd": (110, "render")}
    assert m.shm_bytes == 3 * GiB and m.torch_error is None
    assert m.op_errors == {"tiny op": None, "bf16 op": None}  # both ran on the CPU and gave 512
    assert m.facts.torch_version == torch.__version__ and m.numpy_error is None
    assert m.torchvision == __import__("torchvision").__version__


def test_run_ops_reports_a_wrong_answer_and_an_error(monkeypatch):
    real_ones = torch.ones

    def ones(*shape, dtype=None, device=None):
        if dtype == torch.bfloat16:
            raise RuntimeError("HIP error: invalid device function\nmore")
        return real_ones(*shape, dtype=dtype, device=device) * 2  # a wrong result, not an exception

    monkeypatch.setattr(torch, "ones", ones)
    errors = doctor._run_ops(torch.device("cpu"))
    assert errors["bf16 op"] == "RuntimeError: HIP error: invalid device function"
    assert errors["tiny op"].startswith("AssertionError")


def test_gather_reads_free_memory_on_a_gpu(monkeypatch):
    """The GPU branch: torch.cuda.mem_get_info(device) returns (free, total) bytes (torch/cuda/memory.py)."""
    import helpers.device as hd

    seen = {}

    def mem_get_info(device=None):
        seen["mem"] = device
        return (20 * GiB, 24 * GiB)

    gpu = torch.device("cuda")  # portcheck: ignore=PC101 (never touched: torch.cuda is faked)
    monkeypatch.setattr(hd, "pick_device", lambda prefer, facts: gpu)
    monkeypatch.setattr(torch.cuda, "mem_get_info", mem_get_info)
    monkeypatch.setattr(doctor, "_run_ops", lambda device: seen.setdefault("ops", device) and {"tiny op": None})
    m = doctor.gather()
    assert m.free_memory == (20 * GiB, 24 * GiB) and seen == {"mem": gpu, "ops": gpu}
    assert m.op_errors == {"tiny op": None}


def test_gather_turns_a_broken_torch_into_a_finding(monkeypatch):
    import helpers.device as hd

    def broken(*a, **k):
        raise OSError("libamdhip64.so.7: cannot open shared object file")

    monkeypatch.setattr(hd, "read_facts", broken)
    m = doctor.gather()
    assert m.torch_error == "OSError: libamdhip64.so.7: cannot open shared object file" and m.facts is None
    assert m.dev_access  # read before torch


SNAPSHOT = Path(__file__).parent / "snapshots" / "doctor_reports.txt"


def scenarios():
    """Every simulated machine as it is, and the MI300X and the CPU laptop with each fact broken in turn."""
    yield from ((name, machine(name)) for name in sorted(MACHINES))
    mi, cpu = machine("mi300x"), machine("cpu")
    yield (
        "mi300x, /dev/kfd denied, not in render",
        dataclasses.replace(mi, dev_access={"/dev/kfd": "denied", "/dev/dri/renderD128": "ok"}, gids=(44,)),
    )
    yield "mi300x, devices missing", dataclasses.replace(mi, dev_access={"/dev/kfd": "missing", "/dev/dri": "missing"})
    yield (
        "mi300x, ops fail, 1 GiB free",
        dataclasses.replace(
            mi,
            op_errors={"tiny op": "RuntimeError: HIP error: invalid device function", "bf16 op": "RuntimeError: x"},
            free_memory=(GiB, 192 * GiB),
        ),
    )
    yield (
        "mi300x, override, clash, as root",
        dataclasses.replace(
            mi,
            gids=(0,),
            facts=dataclasses.replace(
                mi.facts,
                env={"HSA_OVERRIDE_GFX_VERSION": "9.4.2", "HIP_VISIBLE_DEVICES": "0", "CUDA_VISIBLE_DEVICES": "1"},
            ),
        ),
    )
    yield (
        "rx7900xtx, override",
        machine(
            "rx7900xtx", facts=dataclasses.replace(MACHINES["rx7900xtx"], env={"HSA_OVERRIDE_GFX_VERSION": "11.0.0"})
        ),
    )
    yield (
        "cpu, old torch and torchvision, python 3.10, small shm",
        dataclasses.replace(
            cpu,
            python=(3, 10, 12),
            shm_bytes=64 * 2**20,
            torchvision="0.19.1",
            facts=dataclasses.replace(cpu.facts, torch_version="2.4.1+cpu"),
        ),
    )
    yield (
        "cpu, torchvision and numpy broken",
        dataclasses.replace(
            cpu,
            torchvision=None,
            torchvision_error="RuntimeError: operator torchvision::nms does not exist",
            numpy_error="A module that was compiled using NumPy 1.x cannot be run in NumPy 2.1.0",
        ),
    )
    yield (
        "torch import fails (known)",
        Machine(
            python=(3, 12, 3),  # not this machine's: the snapshot is the same under every Python
            torch_error="ImportError: libamdhip64.so.7: cannot open shared object file: No such file or directory",
            shm_bytes=8 * GiB,
        ),
    )
    yield "torch import fails (unknown)", Machine(python=(3, 12, 3), torch_error="ImportError: something else",
                                                  shm_bytes=None)  # fmt: skip
    yield "rocm build, /sys not mounted", machine("container_no_kfd", facts=dataclasses.replace(
        MACHINES["container_no_kfd"], pci_gpu_vendors=()))  # fmt: skip
    yield "mi300x, exactly 2 GiB free", dataclasses.replace(mi, free_memory=(2 * GiB, 192 * GiB))
    yield "mi300x, just under 2 GiB free", dataclasses.replace(mi, free_memory=(2 * GiB - 1, 192 * GiB))
    yield "h100 with a CPU wheel", machine("h100", facts=dataclasses.replace(
        MACHINES["cpu"], pci_gpu_vendors=("NVIDIA",)), free_memory=None)  # fmt: skip
    yield "mi300x, runtime read", dataclasses.replace(mi, runtime="HIP runtime 7.14.60001, MIOpen 3.5.1")
    yield (
        "cpu, torch 2.5.0 with torchvision 0.24.0, 1 GiB shm",
        dataclasses.replace(
            cpu, torchvision="0.24.0", shm_bytes=2**30, facts=dataclasses.replace(cpu.facts, torch_version="2.5.0")
        ),
    )
    yield (
        "L40S (sm_89) with the CUDA wheel",
        machine(
            "h100",
            facts=dataclasses.replace(
                MACHINES["h100"],
                gpus=(dataclasses.replace(MACHINES["h100"].gpus[0], name="NVIDIA L40S", arch="sm_89"),),
            ),
        ),
    )
    yield "nothing readable", dataclasses.replace(mi, dev_access={}, gids=(), shm_bytes=None, op_errors={},
                                                  free_memory=None, torchvision=None)  # fmt: skip


def render_all() -> str:
    parts = []
    for name, m in scenarios():
        checks = run_checks(m)
        fixes = {c.name: c.fix for c in checks}  # shown for WARN/FAIL only: a PASS must carry none
        parts.append(f"## {name}\n{doctor.format_report(checks)}\n{json.dumps(doctor.report(checks)['summary'])}\n"
                     f"{json.dumps(fixes)}\n")  # fmt: skip
    return "\n".join(parts)


def test_reports_match_the_reviewed_snapshot(monkeypatch):
    """The exact text each simulated machine gets, reviewed in tests/snapshots/doctor_reports.txt. After a deliberate
    change: UPDATE_SNAPSHOTS=1 pytest tests/test_doctor.py, then read the diff before committing it."""
    monkeypatch.setattr(doctor.platform, "node", lambda: "seat-07")
    text = render_all()
    if os.environ.get("UPDATE_SNAPSHOTS") == "1":
        SNAPSHOT.write_text(text)
    assert text == SNAPSHOT.read_text()


def test_a_machine_without_a_hostname_is_this_machine(monkeypatch):
    monkeypatch.setattr(doctor.platform, "node", lambda: "")  # platform.node() is "" when the name is unknown
    header = doctor.format_report(run_checks(machine("cpu"))).splitlines()[0]
    assert header == f"{'course doctor':<28} (this machine)"


def test_the_os_reads(tmp_path, monkeypatch):
    """_access, _render_node, _shm, _gids and _owner on real files, and with the OS answering otherwise."""
    ok = tmp_path / "kfd"
    ok.write_text("")
    assert doctor._access(str(ok)) == "ok" and doctor._access(str(tmp_path / "none")) == "missing"
    monkeypatch.setattr(doctor.os, "access", lambda p, mode: mode != os.R_OK | os.W_OK)
    assert doctor._access(str(ok)) == "denied"  # (root may open anything: the refusal is simulated)
    monkeypatch.undo()

    def nodes(pattern):
        assert pattern == "/dev/dri/renderD*"
        return ["/dev/dri/renderD129", "/dev/dri/renderD128"]

    monkeypatch.setattr(doctor.glob, "glob", nodes)
    assert doctor._render_node() == "/dev/dri/renderD128"
    monkeypatch.setattr(doctor.glob, "glob", lambda pattern: [])
    assert doctor._render_node() == "/dev/dri"
    monkeypatch.undo()

    st = os.statvfs("/dev/shm")
    assert doctor._shm() == st.f_frsize * st.f_blocks > 0

    def unreadable(path):
        raise OSError(2, "No such file or directory", path)

    monkeypatch.setattr(doctor.os, "statvfs", unreadable)
    assert doctor._shm() is None
    monkeypatch.undo()

    import grp

    assert doctor._gids() == tuple(sorted({*os.getgroups(), os.getegid()}))
    monkeypatch.setattr(doctor.os, "getgroups", lambda: [2**31 - 7, 44, 44])  # duplicates, a GID with no name
    monkeypatch.setattr(doctor.os, "getegid", lambda: 1000)
    assert doctor._gids() == (44, 1000, 2**31 - 7)
    monkeypatch.undo()

    assert doctor._owner(str(ok)) == (os.stat(ok).st_gid, grp.getgrgid(os.stat(ok).st_gid).gr_name)
    assert doctor._owner(str(tmp_path / "none")) is None
    real_stat = os.stat
    monkeypatch.setattr(doctor.os, "stat", lambda p: os.stat_result((*real_stat(p)[:5], 2**31 - 7, *real_stat(p)[6:])))
    assert doctor._owner(str(ok)) == (2**31 - 7, None)  # a host GID given by number: no name in the image


def test_version_parts():
    assert doctor.checks._version("2.14.1+rocm7.14") == (2, 14) and doctor.checks._version("2.5.0a0+git1234") == (2, 5)
    assert doctor.checks._version("2.dev") == (2, 0)


def test_runtime_reads_collect_env(monkeypatch):
    from types import SimpleNamespace

    from torch.utils import collect_env

    info = SimpleNamespace(hip_runtime_version="7.14.60001", miopen_runtime_version="3.5.1",
                           nvidia_driver_version="580.65.06")  # fmt: skip
    monkeypatch.setattr(collect_env, "get_env_info", lambda: info)
    assert doctor._runtime(MACHINES["mi300x"]) == "HIP runtime 7.14.60001, MIOpen 3.5.1"
    assert doctor._runtime(MACHINES["h100"]) == "NVIDIA driver 580.65.06"
    assert doctor._runtime(MACHINES["cpu"]) == ""

    def fails():
        raise FileNotFoundError("rocminfo")

    monkeypatch.setattr(collect_env, "get_env_info", fails)
    assert doctor._runtime(MACHINES["mi300x"]) == ""


def test_gather_reports_broken_imports_and_who_runs_it(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "torchvision", None)  # import torchvision raises ImportError

    def from_numpy(a):
        raise RuntimeError("Numpy is not available")

    monkeypatch.setattr(torch, "from_numpy", from_numpy)
    monkeypatch.setattr(doctor, "_runtime", lambda facts: "HIP runtime (fake)")
    m = doctor.gather()
    assert m.torchvision is None and m.torchvision_error.startswith("ModuleNotFoundError: import of torchvision")
    assert m.numpy_error == "RuntimeError: Numpy is not available" and m.runtime == "HIP runtime (fake)"


def test_python_range_and_a_torch_without_facts():
    assert verdicts(machine("cpu", python=(3, 13, 1)))["Python"] == "PASS"  # tested on 3.11-3.13
    assert verdicts(machine("cpu", python=(3, 14, 0)))["Python"] == "WARN"
    old = {c.name: c for c in run_checks(machine("cpu", python=(3, 10, 12)))}["Python"]  # the py3.10 ROCm images
    assert old.status == "WARN" and "need 3.11 or newer" in old.fix
    checks = run_checks(Machine())  # neither an import error nor facts: torch is there but unusable
    assert [(c.name, c.status, c.detail) for c in checks if c.name == "import torch"] == [
        ("import torch", "FAIL", "torch unusable")
    ]


def test_run_ops_reports_an_empty_message(monkeypatch):
    def ones(*a, **k):
        raise RuntimeError()

    monkeypatch.setattr(torch, "ones", ones)
    assert doctor._run_ops(torch.device("cpu")) == {"tiny op": "RuntimeError: ", "bf16 op": "RuntimeError: "}


def test_a_working_nvidia_gpu_beside_an_amd_igpu_passes():
    """A Ryzen desktop or laptop with an NVIDIA GPU: the CPU's integrated Radeon is an AMD display device on the PCI
    bus (class 0x0300). The CUDA build works on the NVIDIA GPU: no FAIL, and no advice to install the ROCm wheel."""
    from tests.conftest import CUDA_BUILD, H100, H100_PCI, RADEON_PCI, simulate
    from tests.fakes import fake_torch

    f = simulate(fake_torch(**CUDA_BUILD, gpus=[H100]), dict(pci=[RADEON_PCI, H100_PCI], dri=1))
    assert f.pci_gpu_vendors == ("AMD", "NVIDIA")
    m = machine("h100", facts=f)
    checks = {c.name: c for c in run_checks(m)}
    assert checks["torch build"].status == "PASS" and "AMD GPU is on the bus too" in checks["torch build"].detail
    assert not [c for c in checks.values() if c.status == "FAIL"], checks
    assert not [w for w in detect(f).warnings if "ROCm" in w]


def test_gather_survives_a_gpu_it_cannot_use(monkeypatch):
    """A GPU listed but not usable (another process holds it in exclusive mode): mem_get_info raises; the doctor
    reports through its op checks instead of crashing."""
    import helpers.device as hd

    def mem_get_info(device=None):
        raise RuntimeError("CUDA error: CUDA-capable device(s) is/are busy or unavailable")

    gpu = torch.device("cuda")  # portcheck: ignore=PC101 (never touched: torch.cuda is faked)
    monkeypatch.setattr(hd, "pick_device", lambda prefer, facts: gpu)
    monkeypatch.setattr(torch.cuda, "mem_get_info", mem_get_info)
    monkeypatch.setattr(doctor, "_run_ops", lambda device: {"tiny op": "RuntimeError: busy or unavailable"})
    m = doctor.gather()
    assert m.free_memory is None and m.op_errors == {"tiny op": "RuntimeError: busy or unavailable"}


def test_a_ryzen_laptop_with_pypis_torch_is_ready_and_told_about_its_igpu():
    """A Ryzen 7 7840U laptop: its Radeon 780M (gfx1103) is part of the CPU. PyPI's torch (a CUDA build) runs the
    lessons on the CPU: a WARN that names what is true for that GPU, no FAIL, no /dev/kfd check, no advice in
    describe() to install a ROCm wheel."""
    checks = {c.name: c for c in run_checks(machine("ryzen_laptop"))}
    assert not [c for c in checks.values() if c.status == "FAIL"], checks
    build = checks["torch build"]
    assert build.status == "WARN" and "integrated GPU (gfx1103)" in build.detail and "run on the CPU" in build.detail
    assert "PyTorch's ROCm wheels list gfx1103" in build.fix and "torch[device-gfx1103]" in build.fix
    assert "shares the system's memory" in build.fix
    kfd = checks["/dev/kfd and /dev/dri"]
    assert kfd.status == "SKIP" and "CPU's graphics" in kfd.detail
    assert detect(MACHINES["ryzen_laptop"]).warnings == ()


def test_an_integrated_gpu_listed_before_a_card_is_named():
    """A ROCm wheel on a Ryzen 7000 desktop with an RX 7900 XTX: HIP lists the CPU's Raphael graphics (gfx1036)
    too, and torch's GPU 0 may be it. The fix names it and the card beside it."""
    from tests.conftest import ROCM_BUILD, RX7900XTX, simulate
    from tests.fakes import RADEON_PCI, PciDevice, fake_torch, rocm_gpu

    raphael = rocm_gpu("AMD Radeon Graphics", "gfx1036", 10, 3, 2.0, warp_size=32)
    raphael_pci = PciDevice("0x030000", "0x1002", "amdgpu", "0x164e", 100306)
    f = simulate(fake_torch(**ROCM_BUILD, gpus=[raphael, RX7900XTX]), dict(pci=[raphael_pci, RADEON_PCI], kfd=1, dri=1))
    target = {c.name: c for c in run_checks(machine("rx7900xtx", facts=f))}["GPU target in this build"]
    assert target.status == "FAIL" and "gfx1036 is the CPU's integrated GPU" in target.fix
    assert "HIP_VISIBLE_DEVICES=1" in target.fix and "torch[device-gfx1036]" in target.fix


def test_torch_install_tells_the_four_ways_apart():
    from helpers.install import torch_verdict

    mi, h100 = MACHINES["mi300x"], MACHINES["h100"]
    status, detail, _ = torch_verdict(mi, ROCM_INSTALL, "gfx942", op_failed=False)
    assert status == "PASS" and detail.startswith("PyTorch's ROCm wheel") and "ROCm 7.14.0 from pip" in detail
    image = Install(f"{SITE}/torch", amd_build=True, device_packages=("gfx942",), rocm_sdk_core="10.1.0")
    status, detail, _ = torch_verdict(mi, image, "gfx942", op_failed=False)
    assert status == "PASS" and "AMD's multi-arch wheel" in detail and "device packages: gfx942" in detail
    assert "/opt/venv/" in detail  # which Python this is
    wrong = dataclasses.replace(image, device_packages=("gfx1100",))
    status, detail, fix = torch_verdict(mi, wrong, "gfx942", op_failed=True)
    assert status == "FAIL" and "hipErrorInvalidImage" in detail
    assert fix.startswith('pip install "torch[device-gfx942]" "torchvision[device-gfx942]" --index-url https://')
    assert torch_verdict(mi, wrong, "gfx942", op_failed=False)[0] == "WARN"  # a generic package may carry them
    assert torch_verdict(h100, PYPI_INSTALL, "sm_90", False)[1].startswith("a CUDA 13.0 wheel")
    assert torch_verdict(MACHINES["cpu"], PYPI_INSTALL, None, False)[1].startswith("a CPU-only wheel")


def test_rocm_compiler_for_lesson_05():
    from helpers.install import compiler_verdict

    mi = MACHINES["mi300x"]
    runtime_only = Install(f"{SITE}/torch", amd_build=True, device_packages=("gfx942",), rocm_sdk_core="10.1.0")
    status, detail, fix = compiler_verdict(mi, runtime_only)  # the ROCm 10.x images: no rocm-sdk-devel
    assert status == "WARN" and 'pip install "rocm[devel]" && rocm-sdk init' in fix and "ROCM_HOME=$(rocm-sdk" in fix
    assert compiler_verdict(mi, dataclasses.replace(runtime_only, rocm_sdk_devel="10.1.0"))[0] == "PASS"
    assert compiler_verdict(mi, ROCM_INSTALL) == ("PASS", "hipcc: /usr/bin/hipcc", "")
    assert compiler_verdict(MACHINES["h100"], PYPI_INSTALL)[0] == "SKIP"
    names = [c.name for c in run_checks(machine("h100"))]
    assert "ROCm compiler" not in names and "torch install" in names  # an NVIDIA machine is not asked
