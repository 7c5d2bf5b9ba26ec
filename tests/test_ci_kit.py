"""The CI kit fits together: the workflows name files that exist, docker-run passes the profile into the image, and
nbval runs the lessons side by side only where that cannot skew a GPU measurement."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).parent.parent
CI_FILES = [ROOT / ".github" / "workflows" / "notebooks.yml", ROOT / "examples" / "gitlab-ci.yml"]


def commands(path: Path) -> str:
    doc = yaml.safe_load(path.read_text())
    found = []

    def walk(node):
        if isinstance(node, dict):
            for k, v in node.items():
                if k in ("run", "script") and isinstance(v, str | list):
                    found.extend([v] if isinstance(v, str) else v)
                else:
                    walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(doc)
    return "\n".join(found)


def test_ci_files_run_the_readme_test_command_and_existing_profiles():
    for path in CI_FILES:
        cmds = commands(path)
        assert "bash .ci/run" in cmds and "make docker-test" in cmds, path
        profiles = re.findall(r"PARAMS=(\S+)", cmds)
        assert set(profiles) == {"params/smoke.yaml", "params/full.yaml"}, (path, profiles)
        assert all((ROOT / p).is_file() for p in profiles)


def test_the_gpu_job_never_runs_pull_requests_from_forks():
    job = yaml.safe_load(CI_FILES[0].read_text())["jobs"]["amd-gpu"]
    assert "amd-gpu" in job["runs-on"] and "self-hosted" in job["runs-on"]
    assert "github.event.pull_request.head.repo.full_name == github.repository" in job["if"]
    labels = yaml.safe_load((ROOT / ".github" / "actionlint.yaml").read_text())["self-hosted-runner"]["labels"]
    assert "amd-gpu" in labels


def make_dry_run(*args) -> str:
    """The `docker run` line that `make -n` prints (no make variables inherited from a `make test` around us)."""
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
    r = subprocess.run(["make", "--no-print-directory", "-n", *args], cwd=ROOT, capture_output=True, text=True,
                       timeout=60, env=env)  # fmt: skip
    assert r.returncode == 0, r.stderr
    return next(line for line in r.stdout.splitlines() if line.startswith("docker run"))


def test_docker_run_mounts_and_passes_the_profile():
    cmd = make_dry_run("docker-run", "PARAMS=params/full.yaml")
    assert '-v "$PWD/params:/workspace/course/params:ro"' in cmd, cmd
    assert cmd.rstrip().endswith("make run PARAMS=params/full.yaml"), cmd
    assert make_dry_run("docker-run").rstrip().endswith("make run")


@pytest.mark.parametrize("gpu", ["cuda", "mps", None])
def test_lessons_run_two_at_a_time_only_where_torch_sees_no_gpu(tmp_path, gpu):
    """Two lessons on one GPU would skew lessons 02's and 03's speed ratios: with a GPU (CUDA and ROCm builds answer
    torch.cuda, Apple's torch.backends.mps), one after another with torch's threads; without, two at a time."""
    fake = tmp_path / "torch"
    fake.mkdir()
    (fake / "__init__.py").write_text(
        "from types import SimpleNamespace as NS\n"
        f"cuda = NS(is_available=lambda: {gpu == 'cuda'})\n"
        f"backends = NS(mps=NS(is_available=lambda: {gpu == 'mps'}))\n"
    )
    python = tmp_path / "python"
    python.write_text(f'#!/bin/sh\nPYTHONPATH={tmp_path} exec {sys.executable} "$@"\n')
    python.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
    r = subprocess.run(["make", "--no-print-directory", "-n", "nbval", "COURSE_SYSTEM_PYTHON=1", f"PYTHON={python}"],
                       cwd=ROOT, capture_output=True, text=True, timeout=60, env=env)  # fmt: skip
    assert r.returncode == 0, r.stderr
    two_at_a_time = "-n 2 --dist loadfile" in r.stdout
    assert two_at_a_time == (gpu is None) and ("OMP_NUM_THREADS=1" in r.stdout) == (gpu is None), r.stdout
