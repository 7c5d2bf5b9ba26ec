"""tools/image_user.py against the /etc/passwd and /etc/group of each documented rocm/pytorch layout."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent
from tools.image_user import plan

BASE_PASSWD = "root:x:0:0:root:/root:/bin/bash\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n"
BASE_GROUP = "root:x:0:\nvideo:x:44:\nplugdev:x:46:\n"
# Ubuntu 24.04 base images: "ubuntu" is UID 1000 (docker.io/library/ubuntu:24.04).
UBUNTU_2404 = "ubuntu:x:1000:1000:Ubuntu:/home/ubuntu:/bin/bash\n"
# PyTorch CI images (.ci/docker/common/install_user.sh): 'echo "jenkins:x:1000:1000::/var/lib/jenkins:" >> /etc/passwd',
# and on 24.04 'userdel -r ubuntu'; some runners use UID 1001.
JENKINS = "jenkins:x:{uid}:{uid}::/var/lib/jenkins:\n"
LAYOUTS = {
    "ubuntu 24.04 base": (BASE_PASSWD + UBUNTU_2404, BASE_GROUP + "ubuntu:x:1000:\n", []),
    "pytorch CI image": (BASE_PASSWD + JENKINS.format(uid=1000), BASE_GROUP + "jenkins:x:1000:\n",
                         [["useradd", "--create-home", "--shell", "/bin/bash", "ubuntu"]]),
    "pytorch CI image, UID 1001": (BASE_PASSWD + JENKINS.format(uid=1001), BASE_GROUP + "jenkins:x:1001:\n",
                                   [["useradd", "--create-home", "--shell", "/bin/bash", "--uid", "1000", "ubuntu"]]),
    "ubuntu 22.04 base": (BASE_PASSWD, BASE_GROUP,
                          [["useradd", "--create-home", "--shell", "/bin/bash", "--uid", "1000", "ubuntu"]]),
}  # fmt: skip


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_each_layout_gets_a_user_without_a_clash(layout):
    passwd, group, want = LAYOUTS[layout]
    commands = plan("ubuntu", passwd, group)
    assert commands[:-1] == want and commands[-1] == ["usermod", "-aG", "video", "ubuntu"]
    assert not any("jenkins" in c for cmd in commands for c in cmd), "never reuses the sudo-capable account"


def test_a_leftover_group_of_the_same_name_is_reused():
    commands = plan("ubuntu", BASE_PASSWD + JENKINS.format(uid=1000), BASE_GROUP + "ubuntu:x:1000:\n")
    assert commands[0] == ["useradd", "--create-home", "--shell", "/bin/bash", "--gid", "ubuntu", "ubuntu"]


def test_render_group_joined_when_the_image_has_one():
    assert plan("ubuntu", UBUNTU_2404, "video:x:44:\nrender:x:992:\n") == [["usermod", "-aG", "video,render", "ubuntu"]]
    assert plan("ubuntu", UBUNTU_2404, "root:x:0:\n") == []


def test_cli_dry_run_on_a_fixture_tree(tmp_path):
    (tmp_path / "etc").mkdir()
    (tmp_path / "etc/passwd").write_text(BASE_PASSWD + JENKINS.format(uid=1000))
    (tmp_path / "etc/group").write_text(BASE_GROUP)
    script = [sys.executable, str(ROOT / "tools" / "image_user.py")]
    r = subprocess.run(script + ["--root", str(tmp_path), "--dry-run", "ubuntu"], capture_output=True, text=True)
    assert r.returncode == 0 and "+ useradd --create-home --shell /bin/bash ubuntu" in r.stdout
    bad = subprocess.run(script + ["--root", str(tmp_path / "missing"), "ubuntu"], capture_output=True, text=True)
    assert bad.returncode == 2 and bad.stderr.startswith("error:") and "Traceback" not in bad.stderr
