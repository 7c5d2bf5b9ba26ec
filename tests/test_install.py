"""helpers.install.read_install, the seam: installed distributions and ROCm paths, on fakes of both."""

import os
from types import SimpleNamespace

from helpers import install


class Metadata(dict):
    """A distribution's METADATA: one value per key, get_all() for keys that repeat (Provides-Extra)."""

    def get_all(self, key, failobj=None):
        return self.get("_all", {}).get(key, failobj)


class Dist:
    """importlib.metadata.Distribution: .metadata["Name"] as the wheel spells it, .version, its extras."""

    def __init__(self, name, version, extras=None):
        self.metadata = Metadata({"Name": name, "_all": {"Provides-Extra": extras} if extras else {}})
        self.version = version


def test_read_install_on_an_amd_multi_arch_venv(tmp_path, monkeypatch):
    """What a ROCm 10.x image (or pip install "torch[device-gfx942]" from AMD's index) leaves: a torch whose metadata
    offers the device-* extras, the device packages, ROCm from pip; and /opt/rocm/core -> /opt/rocm/core-10.1."""
    torch_dir = tmp_path / "venv/site-packages/torch"
    torch_dir.mkdir(parents=True)
    (torch_dir / "__init__.py").write_text("")
    (torch_dir / "_rocm_init.py").write_text("")  # PyTorch's own ROCm 7.14 wheels may ship it too (pytorch#191625)
    (tmp_path / "opt/rocm/core-10.1").mkdir(parents=True)
    os.symlink(tmp_path / "opt/rocm/core-10.1", tmp_path / "opt/rocm/core")
    dists = [Dist("torch", "2.14.0+rocm10.1.0", ["device-all", "device-gfx942", "device-gfx950"]),
             Dist("amd_torch_device_gfx942", "2.14.0"),
             Dist("amd-torch-device-gfx950", "2.14.0"), Dist("rocm-sdk-core", "10.1.0"),
             Dist("numpy", "2.4.6")]  # fmt: skip
    monkeypatch.setattr("importlib.metadata.distributions", lambda: dists)
    monkeypatch.setattr(install.shutil, "which", lambda name: None)
    got = install.read_install(SimpleNamespace(__file__=str(torch_dir / "__init__.py")), root=str(tmp_path))
    assert got.torch_dir == str(torch_dir) and got.amd_build
    assert got.device_packages == ("gfx942", "gfx950") and got.rocm_sdk_core == "10.1.0"
    assert got.rocm_sdk_devel is None and got.hipcc is None
    assert got.system_rocm == str(tmp_path / "opt/rocm/core-10.1")


def test_read_install_on_a_pypi_venv_and_an_old_opt_rocm(tmp_path, monkeypatch):
    torch_dir = tmp_path / "torch"
    torch_dir.mkdir()
    (tmp_path / "opt/rocm").mkdir(parents=True)  # before ROCm 7.14: /opt/rocm itself
    (torch_dir / "_rocm_init.py").write_text("")  # not AMD's build for that: it has no device-* extras
    monkeypatch.setattr("importlib.metadata.distributions", lambda: [Dist("torch", "2.14.1+rocm7.14", ["optree"])])
    monkeypatch.setattr(install.shutil, "which", lambda name: "/opt/rocm/bin/hipcc" if name == "hipcc" else None)
    got = install.read_install(SimpleNamespace(__file__=str(torch_dir / "__init__.py")), root=str(tmp_path))
    assert not got.amd_build and got.device_packages == () and got.rocm_sdk_core is None
    assert got.system_rocm == str(tmp_path / "opt/rocm") and got.hipcc == "/opt/rocm/bin/hipcc"
    empty = tmp_path / "empty"
    empty.mkdir()
    assert install.read_install(SimpleNamespace(__file__=str(torch_dir / "x")), root=str(empty)).system_rocm is None


def test_read_install_on_this_machine():
    import torch

    got = install.read_install()
    assert got.torch_dir == os.path.dirname(torch.__file__)
