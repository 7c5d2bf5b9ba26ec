import ast
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers.portcheck import RULES, cuda_only_folders, main, rocm_test, scan, scan_cpp, scan_python, scan_source
from tests.test_portcheck_fixtures import expected

ROOT = Path(__file__).parent.parent
FIXTURES = Path(__file__).parent / "portcheck" / "fixtures"
CPP = FIXTURES / "pc2xx_cpp"


@pytest.mark.parametrize(
    ("test", "rocm"),
    [
        ("IS_ROCM", True), ("not IS_HIP_EXTENSION", False), ("torch.version.hip is not None", True),
        ("torch.version.hip is None", False), ("is_rocm()", True), ("A and not USE_ROCM", False),
        ("A and B", None), ("IS_ROCM and not IS_ROCM", None), ("A or IS_ROCM", None), ("SHIP_IT", None),
        ("torch.version.hip == '6.4'", None), ("torch.version.cuda is not None", None), ("x[0]", None),
    ],
)  # fmt: skip
def test_which_if_tests_mean_building_for_rocm(test, rocm):
    assert rocm_test(ast.parse(test, mode="eval").body) is rocm


def test_cuda_only_folders_leave_out_folders_a_rocm_build_also_uses():
    src = (
        "if IS_ROCM:\n    s = ['k/amd/a.hip.cpp', 'common/x.cpp']\n"
        "else:\n    s = ['k/nv/a.cu', 'common/y.cu', 'k/z.cu']\n"
        "if A and not IS_ROCM:\n    s += ['opt/b.cu']\nelse:\n    s += ['opt/c.cpp']\n"
    )
    # the else of `if IS_ROCM` (line 1) is CUDA-only. common/ holds ROCm sources too, k/ holds k/amd, and opt/c.cpp is
    # in the else of `if A and not IS_ROCM`, which CUDA builds take too (when not A)
    assert cuda_only_folders(os.path.join("proj", "setup.py"), ast.parse(src)) == {os.path.join("proj", "k", "nv"): 1}


def test_a_setup_py_that_builds_nothing_for_rocm_is_no_port_yet():
    # `if not IS_ROCM:` around the only sources: on ROCm nothing is built, so the kernels still need porting
    src = "if not IS_ROCM:\n    ext = ['kernels/a.cu']\nsetup(ext_modules=ext)\n"
    assert cuda_only_folders("setup.py", ast.parse(src)) == {}
    assert cuda_only_folders("setup.py", ast.parse(src + "hip = ['hip/a.cpp']\n")) == {}  # built on both
    with_rocm = src.replace("\nsetup", "\nelse:\n    ext = ['hip/a.cpp']\nsetup")
    assert cuda_only_folders("setup.py", ast.parse(with_rocm)) == {"kernels": 1}


def test_every_rule_has_a_fixture_and_an_example_that_it_reports():
    """Each rule's example (shown in the rule reference) is scanned here, so the docs cannot show one it misses."""
    covered = {rule for p in FIXTURES.rglob("*.*") for _, _, rule, _ in expected(p)}
    assert covered == set(RULES)
    files = {"PC201": "k.cu", "PC202": "k.cu", "PC203": "k.cu", "PC204": "k.cu", "PC205": "build.sh",
             "PC206": "setup.py", "PC307": "install.sh"}  # fmt: skip
    for r in RULES.values():
        name = files.get(r.id, "example.py")
        found = {f.rule for f in scan_source(name, r.example.encode())}
        assert r.id in found, (r.id, r.example, found)


def test_severity_is_decided_in_one_place():
    """A finding's severity is its rule's, or its context's (model.CONTEXT); no rule sets one of its own."""
    rules = FIXTURES.parent.parent.parent / "helpers" / "portcheck" / "rules"
    for p in rules.glob("*.py"):
        assert not re.search(r'\.add\([^)]*"(error|warning|info)"', p.read_text()), p


def test_ported_lesson_assets_are_clean():
    assets = sorted((ROOT / "notebooks" / "assets").rglob("*"))
    ported = [p for p in assets if p.is_file() and "legacy" not in p.name and "_cuda32" not in p.name]
    for p in ported:
        assert scan([str(p)])["findings"] == [], p


def test_the_project_itself_reports_only_legacy_assets():
    result = scan([str(ROOT)], exclude=["tests/portcheck/fixtures/*"])
    assert result["errors"] == []
    paths = {os.path.relpath(f["path"], ROOT) for f in result["findings"]}
    assert all(p.startswith("notebooks/assets/") for p in paths), paths
    assert "notebooks/assets/legacy_resnet_cuda.py" in paths


def test_suppression_comments():
    src = b"import torch\nx = torch.zeros(1).cuda()  # portcheck: ignore\n"
    src += b'y = torch.load("a")  # portcheck: ignore=PC101\n'
    assert [(f.line, f.rule) for f in scan_python("s.py", src)] == [(3, "PC104")]


def test_select_ignore_fail_on_and_exit_codes(capsys):
    bad = str(FIXTURES / "pc1xx_api" / "py_bad.py")
    assert main([bad]) == 1  # PC109 "rccl" breaks on ROCm
    out = capsys.readouterr().out
    assert re.search(r"py_bad\.py:15:\d+: PC101 warning ", out) and "findings in 1 file (" in out
    pc101 = [f["severity"] for f in scan([bad])["findings"] if f["rule"] == "PC101"]
    assert re.search(rf"^\s+{len(pc101)}  PC101 \({len(pc101)} warnings\) ", out, re.M)
    assert re.search(r"^  error: breaks on ROCm", out, re.M) and re.search(r"^  warning: runs on ROCm", out, re.M)
    assert main([bad, "--select", "PC101"]) == 0  # a hard-coded GPU runs on ROCm: no failure by default
    assert main([bad, "--select", "PC101", "--fail-on", "warning"]) == 1  # unless CPU portability is enforced
    assert main([bad, "--select", "PC111", "--fail-on", "warning"]) == 0 and main([bad, "--select", "PC111",
                "--fail-on", "info"]) == 1  # fmt: skip
    capsys.readouterr()
    assert main([bad, "--select", "PC11", "--json"]) == 0  # only warnings/info selected
    data = json.loads(capsys.readouterr().out)
    assert data["schema"] == 1 and set(data["summary"]) == {"PC110", "PC111", "PC112", "PC113", "PC114"}
    assert main([bad, "--ignore", "PC1"]) == 0
    assert main([str(FIXTURES / "pc1xx_api" / "py_good.py"), "--fail-on", "info"]) == 0
    with pytest.raises(SystemExit) as e:
        main([bad, "--select", "PC999"])
    assert e.value.code == 2
    assert main([str(FIXTURES / "missing.py")]) == 2
    assert "no such file" in capsys.readouterr().err


def test_cli_entry_points():
    r = subprocess.run(
        [sys.executable, "-m", "helpers.portcheck", str(CPP / "kernel_bad.cu"), "--json"],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 1 and json.loads(r.stdout)["summary"]["PC202"] == 8


def test_robust_walk(tmp_path):
    (tmp_path / "ok.py").write_text("import torch\nm = torch.nn.Linear(1, 1).cuda()\n")
    (tmp_path / "latin1.py").write_bytes("# -*- coding: utf-8 -*-\nname = 'caf\xe9'\n".encode("latin-1"))
    (tmp_path / "blob.cu").write_bytes(b"\x00\x01\x02" * 100)
    (tmp_path / "loop").symlink_to(tmp_path)  # a directory symlink loop
    (tmp_path / "dangling.py").symlink_to(tmp_path / "nowhere.py")
    for skipped in (".git", "node_modules", "build", ".venv", "myenv"):
        (tmp_path / skipped).mkdir()
        (tmp_path / skipped / "x.py").write_text("import torch\ntorch.zeros(1).cuda()\n")
    (tmp_path / "myenv" / "pyvenv.cfg").write_text("home = /usr\n")
    unreadable = tmp_path / "secret.py"
    unreadable.write_text("x = 1\n")
    unreadable.chmod(0)
    result = scan([str(tmp_path)])
    rules = {(os.path.basename(f["path"]), f["rule"]) for f in result["findings"]}
    assert ("ok.py", "PC101") in rules and ("latin1.py", "PC900") in rules
    assert not any(f["path"].count("x.py") for f in result["findings"])
    err_paths = {os.path.basename(e["path"]) for e in result["errors"]}
    assert "dangling.py" in err_paths
    if os.geteuid() != 0:  # root reads everything
        assert "secret.py" in err_paths


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=2000))
def test_garbage_python_never_crashes(data):
    for f in scan_python("g.py", data):
        assert f.rule in RULES


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=2000))
def test_garbage_cpp_never_crashes(text):
    for f in scan_cpp("g.cu", text):
        assert f.rule in RULES


def test_pc101_fix_falls_back_for_real():
    # current_accelerator() alone returns the build's accelerator even when none is usable (check_available=False)
    fix = RULES["PC101"].fix
    assert "check_available=True" in fix or "is_available()" in fix


def test_sarif_output_is_valid_sarif_2_1_0(capsys):
    """--format sarif validates against the official schema (shipped in Microsoft's SARIF multitool, see Makefile)."""
    import jsonschema

    schema_path = Path(os.environ.get("SARIF_SCHEMA", ROOT / ".venv/npm/node_modules/@microsoft/"
                                                        "sarif-multitool-linux/sarif-2.1.0.json"))  # fmt: skip
    if not schema_path.is_file():
        pytest.skip(f"no SARIF schema at {schema_path} (make unit installs it with npm)")
    schema = json.loads(schema_path.read_text())
    validator = jsonschema.validators.validator_for(schema)(schema)
    assert main([str(FIXTURES / "pc1xx_api" / "py_bad.py"), "--format", "sarif"]) == 1
    sarif = json.loads(capsys.readouterr().out)
    validator.validate(sarif)
    results, rules = sarif["runs"][0]["results"], sarif["runs"][0]["tool"]["driver"]["rules"]
    assert len(results) == len(expected(FIXTURES / "pc1xx_api" / "py_bad.py"))
    assert {r["id"] for r in rules} == set(RULES)
    first = min(results, key=lambda r: r["locations"][0]["physicalLocation"]["region"]["startLine"])
    assert first["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].endswith("fixtures/pc1xx_api/py_bad.py")
    assert rules[first["ruleIndex"]]["id"] == first["ruleId"] and first["level"] in {"error", "warning", "note"}
    broken = {**sarif, "version": "2.0.0"}
    assert not validator.is_valid(broken)  # the validator can say no


def test_stdin_and_changed_files(tmp_path, monkeypatch, capsys):
    import io

    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"import torch\nx = torch.zeros(1).cuda()\n")))
    assert main(["--stdin", "train.py", "--json", "--fail-on", "warning"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert [(f["path"], f["line"], f["rule"]) for f in data["findings"]] == [("train.py", 2, "PC101")]

    repo = tmp_path / "repo"
    repo.mkdir()
    git = ["git", "-C", str(repo), "-c", "user.email=a@b", "-c", "user.name=a"]
    (repo / "old.py").write_text("import torch\nm = torch.nn.Linear(1, 1).cuda()\n")
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "x"], check=True)
    (repo / "new.py").write_text("import pynvml\n")
    subprocess.run([*git, "add", "new.py"], check=True)
    monkeypatch.chdir(repo)
    assert main(["--changed", "HEAD", "--json"]) == 0  # pynvml is a warning; old.py did not change
    paths = {os.path.basename(f["path"]) for f in json.loads(capsys.readouterr().out)["findings"]}
    assert paths == {"new.py"}
    assert main(["--changed", "no-such-rev"]) == 2 and "git cannot list" in capsys.readouterr().err
    assert main([]) == 2 and "--changed REV or --stdin NAME" in capsys.readouterr().err


def test_pre_commit_manifest():
    """pre-commit's own validator accepts .pre-commit-hooks.yaml, and the hook's entry is our console script."""
    import tomllib

    import yaml

    hooks = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert [h["id"] for h in hooks] == ["portcheck"] and hooks[0]["entry"] in scripts
    ok = subprocess.run([sys.executable, "-m", "pre_commit", "validate-manifest", str(ROOT / ".pre-commit-hooks.yaml")],
                        capture_output=True, text=True)  # fmt: skip
    assert ok.returncode == 0, ok.stdout + ok.stderr


def test_a_bundled_copy_of_a_package_is_no_dependency_on_it(tmp_path):
    """A copy of apex that a project ships (Jukebox) imports apex in its own tests and examples, which is no
    dependency on it; the project's own import of apex is, and so is a folder merely named apex."""
    (tmp_path / "apex" / "tests").mkdir(parents=True)
    (tmp_path / "apex" / "setup.py").write_text("from setuptools import setup\n\nsetup(name='apex')\n")
    (tmp_path / "apex" / "tests" / "test_amp.py").write_text("import apex\nfrom apex import amp\n")  # ok: apex's own
    (tmp_path / "integrations" / "apex").mkdir(parents=True)  # a project's own folder named apex: no copy of apex
    (tmp_path / "integrations" / "apex" / "amp.py").write_text("import apex\n")  # 1: reported
    (tmp_path / "train.py").write_text("from apex import amp\n\nmodel, opt = amp.initialize(model, opt)\n")  # 1, 3
    (tmp_path / "encoders.py").write_text(
        "from dataclasses import dataclass\n\nimport attr\nimport torch\nfrom torch import nn\n\n\n"
        "@attr.s(eq=False)\nclass TextEmbedding(nn.Module):\n"
        "    device: torch.device = attr.ib(default=torch.device('cuda'))\n\n\n"  # 10: warning
        "@dataclass\nclass Config:\n    device: str = 'cuda'\n"  # 15: warning
    )
    found = {(os.path.basename(f["path"]), f["line"], f["rule"]): f["severity"]
             for f in scan([str(tmp_path)])["findings"] if f["rule"] in ("PC101", "PC303")}  # fmt: skip
    assert found == {
        ("train.py", 1, "PC303"): "warning", ("train.py", 3, "PC303"): "warning", ("amp.py", 1, "PC303"): "warning",
        ("encoders.py", 10, "PC101"): "warning", ("encoders.py", 15, "PC101"): "warning",
    }  # fmt: skip


def test_an_unused_import_of_tritons_nvidia_libdevice_is_a_warning(tmp_path):
    """VILA's quantisation kernels import triton.language.extra.cuda's libdevice and never call it: every Triton
    wheel ships both backends' language modules (setup.py copies nvidia and amd), so that import works on ROCm; a
    kernel that calls it does not compile for an AMD GPU. An FP in round 10 (11 files), labelled from the code."""
    src = tmp_path / "kern.py"
    src.write_text(
        "import triton\nimport triton.language as tl\nfrom triton.language.extra.cuda import libdevice\n\n\n"
        "@triton.jit\n"
        "def k(x_ptr, n, BLOCK: tl.constexpr):\n"
        "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
        "    tl.store(x_ptr + offs, tl.load(x_ptr + offs) * 2, mask=offs < n)\n"
    )
    (f,) = scan([str(src)])["findings"]
    assert (f["rule"], f["line"], f["severity"]) == ("PC305", 3, "warning") and "not used here" in f["message"]
    src.write_text(src.read_text().replace("tl.load(x_ptr + offs) * 2", "libdevice.exp(tl.load(x_ptr + offs))"))
    (f,) = scan([str(src)])["findings"]
    assert (f["rule"], f["line"], f["severity"]) == ("PC305", 3, "error")
    for handed_on in (  # a review's cases: what it imports is used, or handed on to kernels elsewhere
        "from triton.language.extra.cuda import *\n\nY = libdevice.exp\n",
        "from triton.language.extra.cuda import libdevice\n__all__ = ['libdevice']\n",
    ):
        src.write_text(handed_on)
        assert [(f["line"], f["severity"]) for f in scan([str(src)])["findings"]] == [(1, "error")], handed_on
    src.write_text("import triton.language.extra.cuda as tlc\n\nX = tlc.libdevice\n")
    assert [(f["line"], f["severity"]) for f in scan([str(src)])["findings"]] == [(1, "error")]
    src.write_text("import triton\nimport triton.language.extra.cuda\n\nX = triton.language.extra.cuda.libdevice\n")
    assert [(f["line"], f["severity"]) for f in scan([str(src)])["findings"]] == [(4, "error")]


def test_the_word_accelerator_is_no_gpu_test_but_a_users_accelerator_choice_is(tmp_path):
    """A test naming `accelerator` is no GPU test (`if accelerator.is_main_process:`, HF Accelerate's main process;
    `if args.accelerator == "cpu":`). torch.accelerator's own tests still count; the user's
    accelerator compared with the GPU (`== "cuda"`, Lightning's `== "gpu"`) is a request for it, like a device."""
    src = tmp_path / "train.py"
    src.write_text(
        "import torch\n\n\n"
        "def run(args, accelerator, x):\n"
        "    if accelerator.is_main_process:\n        x = x.cuda()\n"  # 6
        "    if args.accelerator == 'cpu':\n        x = x.cuda()\n"  # 8
        "    if args.accelerator == 'gpu':\n        x = x.cuda()\n"  # ok
        "    if args.accelerator == 'cuda':\n        x = x.cuda()\n"  # ok
        "    if torch.accelerator.is_available():\n        x = x.cuda()\n"  # ok
        "    return x\n"
    )
    assert [(f["line"], f["severity"]) for f in scan([str(src)])["findings"]] == [(6, "warning"), (8, "warning")]


def test_text_output_gives_a_rules_fix_once_per_file_and_whole_descriptions():
    """notebooks/assets printed the same PC101 fix twelve times and cut the summary's descriptions mid-word."""
    from helpers.portcheck import format_text

    one = scan([str(ROOT / "notebooks" / "assets" / "legacy_resnet_cuda.py")])
    pc101 = [f for f in one["findings"] if f["rule"] == "PC101"]
    assert len(pc101) > 5 and format_text(one).count(f"    fix: {RULES['PC101'].fix}") == 1
    result = scan([str(ROOT / "notebooks" / "assets")])
    out = format_text(result)
    for rule in result["summary"]:
        assert re.search(rf"^\s+\d+  {rule} \([^)]*\) {re.escape(RULES[rule].message)}$", out, re.M), rule


def test_the_rule_reference_in_the_docs_is_made_from_the_rules():
    import importlib.util

    spec = importlib.util.spec_from_file_location("ref", ROOT / "tools" / "portcheck_reference.py")
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    text = tool.DOC.read_text()
    assert tool.rewritten(text) == text, "docs/portcheck.md is out of step: run python tools/portcheck_reference.py"
    assert all(f"| {r} | {RULES[r].severity} |" in text for r in RULES)


@pytest.mark.parametrize(
    ("condition", "value"),
    [
        ("__CUDA_ARCH__ >= 800", False),
        ("defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800", False),
        ("__CUDA_ARCH__ < 800", True),  # undefined is 0: HIP compiles this branch, not its #else
        ("!defined(__CUDA_ARCH__)", True),
        ("(defined(__CUDA_ARCH__) && (__CUDA_ARCH__ >= 900)) || defined(__CLION_IDE__)", False),
        ("FOO && __CUDA_ARCH__ >= 800", False),
        ("FOO || __CUDA_ARCH__ >= 800", None),  # FOO decides
        ("CUDA_VERSION >= 11000", False),  # cuda.h's: HIP's TORCH_HIP_VERSION (702 for ROCm 7.2) or nothing
        ("CUDA_VERSION < 9000 || defined(USE_AMD_ROCM)", True),
        ("defined(CUDA_VERSION)", None),  # the build decides
        ("CUDA_VERSION >= 700", None),  # (no CUDA version: TORCH_HIP_VERSION could pass it)
        ("MY_CUDA_VERSION >= 11000", None),
        ("0", False),  # `#if 0`: no compiler compiles it
        ("1 || FOO", True),
        ("__CUDA_ARCH__ ** 99999999999", None),
    ],
)
def test_a_condition_is_read_as_hip_reads_it(condition, value):
    from helpers.portcheck.context.cpp import hip_value

    assert hip_value(condition) is value


def test_a_cmake_rocm_switch_is_a_macro_defined_only_where_the_build_is_for_rocm():
    from helpers.portcheck.context.build import rocm_definitions

    cmake = """
if(FAISS_ENABLE_GPU)
  if(FAISS_ENABLE_ROCM)  # the ROCm build
    add_definitions(-DUSE_AMD_ROCM)
  else()
    add_definitions(-DUSE_NVIDIA_CUDA)
  endif()
endif()
if(WITH_CUDA OR WITH_HIP)
  add_compile_definitions(WITH_GPU)
endif()
if(NOT USE_HIP)
  target_compile_definitions(ops PRIVATE CPU_ONLY=1)
endif()
"""
    rocm, elsewhere = rocm_definitions(cmake)
    assert rocm == {"USE_AMD_ROCM"}
    assert {"USE_NVIDIA_CUDA", "WITH_GPU", "CPU_ONLY"} <= elsewhere
