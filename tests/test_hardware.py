"""helpers.hardware: the GPUs that sysfs shows (PCI bus, KFD topology), integrated Radeons, wheel advice."""

import dataclasses

from helpers import device as hd
from helpers import hardware as hw
from tests.fakes import (
    H100_PCI,
    MI250X_PCI,
    MI300X_PCI,
    NIC_PCI,
    RADEON_680M_PCI,
    RADEON_780M_PCI,
    RADEON_PCI,
    XDNA_NPU_PCI,
    PciDevice,
    fake_torch,
    make_root,
)


def test_pci_vendors(tmp_path):
    devs = [MI300X_PCI, MI250X_PCI, RADEON_PCI, H100_PCI, XDNA_NPU_PCI, NIC_PCI,
            PciDevice("0x120000", "0x1002", "some_other_driver"),  # class 0x12, AMD, not a GPU driver
            PciDevice("0x120000", "0x1002")]  # an MI300X whose driver is not loaded: still a GPU  # fmt: skip
    root = make_root(tmp_path, pci=devs)
    (root / "sys/bus/pci/devices/0000").mkdir()  # unreadable entries are skipped (this one is listed first)
    assert hw.pci_gpu_vendors(str(root / "sys/bus/pci/devices")) == ("AMD", "AMD", "AMD", "NVIDIA", "AMD")
    assert hw.pci_gpu_vendors(str(tmp_path / "missing")) == ()


def test_kfd_targets_decode_gfx_target_version(tmp_path):
    """amdkfd writes gfx_target_version as major * 10000 + minor * 100 + stepping, in decimal (kfd_topology.c); the
    stepping is a hex digit of the target's name (gfx90a: 9, 0, 10)."""
    ids = [("0x74a1", 90402), ("0x740c", 90010), ("0x15bf", 110003), ("0x1586", 110501), ("0x1681", 100305)]
    gpus = [PciDevice("0x030000", "0x1002", "amdgpu", dev, v) for dev, v in ids]
    make_root(tmp_path, pci=gpus, kfd=True)
    assert hw.kfd_targets(str(tmp_path)) == {"0x74a1": "gfx942", "0x740c": "gfx90a", "0x15bf": "gfx1103",
                                             "0x1586": "gfx1151", "0x1681": "gfx1035"}  # fmt: skip
    nodes = tmp_path / "sys/class/kfd/kfd/topology/nodes"
    assert "gfx_target_version 0\n" in (nodes / "0/properties").read_text()  # node 0, the CPU, is left out
    gpus = hw.kfd_gpus(str(tmp_path))  # node 1 is the first GPU, its render node what a container is given
    assert [(g["node"], g["render_node"]) for g in gpus][:2] == [(1, "/dev/dri/renderD128"), (2, "/dev/dri/renderD129")]
    (nodes / "9").mkdir()
    (nodes / "9/properties").write_text("gfx_target_version not-a-number\n")  # a malformed node: skipped
    assert len(hw.kfd_targets(str(tmp_path))) == 5 and hw.kfd_targets(str(tmp_path / "none")) == {}


def test_integrated_gpus_are_told_from_discrete_ones(tmp_path):
    """A Ryzen APU's Radeon is a VGA controller (class 0x0300) like any Radeon card: the KFD target, or without the
    amdgpu driver the PCI device id, tells that it is the CPU's integrated GPU."""
    laptop = make_root(tmp_path / "laptop", pci=[RADEON_780M_PCI, XDNA_NPU_PCI], kfd=True)
    assert hw.amd_igpus(str(laptop)) == ("gfx1103",)
    no_driver = make_root(tmp_path / "no_driver", pci=[dataclasses.replace(RADEON_680M_PCI, driver=None)])
    assert not (no_driver / "sys/class/kfd").exists() and hw.amd_igpus(str(no_driver)) == ("gfx1035",)
    desktop = make_root(tmp_path / "desktop", pci=[RADEON_PCI, PciDevice("0x030000", "0x1002", "amdgpu", "0x164e",
                                                                          100306)], kfd=True)  # fmt: skip
    f = hd.read_facts(fake_torch("2.14.1+cpu"), str(desktop), environ={})
    assert f.amd_igpus == ("gfx1036",) and f.amd_discrete  # an RX 7900 XTX beside the Ryzen 7000's own graphics
    assert any("no ROCm support" in w for w in hd.detect(f).warnings)  # the card deserves the ROCm wheel
    unknown = make_root(tmp_path / "unknown", pci=[PciDevice("0x030000", "0x1002", None, "0x7551")])
    assert hw.amd_igpus(str(unknown)) == ()  # an id that is not in the APU table: a discrete GPU


def test_igpu_advice_names_the_wheel_that_has_the_target():
    assert "PyTorch's ROCm wheels list gfx1103" in hw.igpu_advice("gfx1103")
    assert 'pip install "torch[device-gfx1035]"' in hw.igpu_advice("gfx1035")
    assert "PyTorch's own ROCm wheels have no kernels for gfx1035" in hw.igpu_advice("gfx1035")
    assert hw.igpu_advice("gfx90c").startswith("no ROCm build of torch ships kernels for gfx90c")
    assert all("shares the system's memory" in hw.igpu_advice(g) for g in ("gfx1103", "gfx1035", "gfx90c"))
