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

from helpers.portcheck import RULES, _rocm_test, cuda_only_folders, main, scan, scan_cpp, scan_python

ROOT = Path(__file__).parent.parent
CORPUS = Path(__file__).parent / "portcheck_corpus"
BAD = [
    "py_bad.py",
    "broken.py",
    "kernel_bad.cu",
    "CMakeLists.txt",
    "deps_bad.py",
    "triton_bad.py",
    "train_bad.sh",
    "bad_build/setup.py",
]
GOOD = ["py_good.py", "kernel_good.cu", "good_build/setup.py", "deps_good.py", "triton_good.py", "good_build/train.sh"]


def expected(path: Path) -> set:
    """(line, rule) pairs from the `expect: PC...` markers in a corpus file."""
    out = set()
    for i, line in enumerate(path.read_text().splitlines(), 1):
        m = re.search(r"expect: ((?:PC\d+\s*)+)", line)
        if m:
            out |= {(i, rule) for rule in m.group(1).split()}
    return out


def found(path: Path) -> set:
    return {(f["line"], f["rule"]) for f in scan([str(path)])["findings"]}


@pytest.mark.parametrize("name", BAD)
def test_rules_fire_at_the_exact_line(name):
    assert found(CORPUS / name) == expected(CORPUS / name)


@pytest.mark.parametrize("name", GOOD)
def test_silent_on_the_fixed_version(name):
    assert found(CORPUS / name) == set()


def test_a_setup_py_that_builds_other_sources_for_rocm_turns_their_findings_into_info():
    """flash-attention's setup.py builds csrc/flash_attn only `if not ... and not IS_ROCM` and csrc/flash_attn_ck for
    ROCm: the CUDA-only folder is no porting bug until someone builds it for ROCm. Markers: `expect: PC201 info`."""
    root = CORPUS / "split_build"
    want = set()
    for p in sorted(root.rglob("*.c*")):
        for i, line in enumerate(p.read_text().splitlines(), 1):
            m = re.search(r"expect: (PC\d+) (error|info)", line)
            want |= {(str(p), i, m.group(1), m.group(2))} if m else set()
    result = scan([str(root)])
    assert {(f["path"], f["line"], f["rule"], f["severity"]) for f in result["findings"]} == want
    assert all("only built for CUDA: " + str(root / "setup.py") + ":9 " in f["message"]
               for f in result["findings"] if f["severity"] == "info")  # fmt: skip
    # scanned without its setup.py, portcheck cannot know: the findings keep their rules' severities
    alone = scan([str(root / "kernels" / "nvidia")])["findings"]
    assert len(alone) == 4 and all(f["severity"] == RULES[f["rule"]].severity for f in alone)


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
    assert _rocm_test(ast.parse(test, mode="eval").body) is rocm


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


def test_every_rule_has_a_test_case():
    covered = set().union(*({r for _, r in expected(CORPUS / n)} for n in BAD))
    assert covered == set(RULES)


def test_ported_lesson_assets_are_clean():
    assets = sorted((ROOT / "notebooks" / "assets").rglob("*"))
    ported = [p for p in assets if p.is_file() and "legacy" not in p.name and "_cuda32" not in p.name]
    for p in ported:
        assert scan([str(p)])["findings"] == [], p


def test_the_project_itself_reports_only_legacy_assets():
    result = scan([str(ROOT)], exclude=["tests/portcheck_corpus/*", "tests/portcheck/fixtures/*"])
    assert result["errors"] == []
    paths = {os.path.relpath(f["path"], ROOT) for f in result["findings"]}
    assert all(p.startswith("notebooks/assets/") for p in paths), paths
    assert "notebooks/assets/legacy_resnet_cuda.py" in paths


def test_suppression_comments():
    src = b"import torch\nx = torch.zeros(1).cuda()  # portcheck: ignore\n"
    src += b'y = torch.load("a")  # portcheck: ignore=PC101\n'
    assert [(f.line, f.rule) for f in scan_python("s.py", src)] == [(3, "PC104")]


def test_select_ignore_and_exit_codes(capsys, monkeypatch):
    monkeypatch.chdir(CORPUS)  # from the repository's root, the corpus is in a test folder: its PC101s are warnings
    bad = str(CORPUS / "py_bad.py")
    assert main([bad]) == 1
    out = capsys.readouterr().out
    assert re.search(r"py_bad\.py:15:\d+: PC101 error ", out) and "findings in 1 files" in out
    pc101 = [f["severity"] for f in scan([bad])["findings"] if f["rule"] == "PC101"]  # the summary counts what each got
    want = ", ".join(f"{pc101.count(s)} {s}" for s in ("error", "warning", "info") if s in pc101)
    assert "warning" in want and re.search(rf"^\s+{len(pc101)}  PC101 \({want}\) ", out, re.M), want
    assert main([bad, "--select", "PC11", "--json"]) == 0  # only warnings/info selected
    data = json.loads(capsys.readouterr().out)
    assert data["schema"] == 1 and set(data["summary"]) == {"PC110", "PC111", "PC112", "PC113", "PC114"}
    assert main([bad, "--ignore", "PC1"]) == 0
    assert main([str(CORPUS / "py_good.py")]) == 0
    with pytest.raises(SystemExit) as e:
        main([bad, "--select", "PC999"])
    assert e.value.code == 2
    assert main([str(CORPUS / "missing.py")]) == 2
    assert "no such file" in capsys.readouterr().err


def test_cli_entry_points():
    r = subprocess.run(
        [sys.executable, "-m", "helpers.portcheck", str(CORPUS / "kernel_bad.cu"), "--json"],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 1 and json.loads(r.stdout)["summary"]["PC202"] == 6


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
    assert main([str(CORPUS / "py_bad.py"), "--format", "sarif"]) == 1
    sarif = json.loads(capsys.readouterr().out)
    validator.validate(sarif)
    results, rules = sarif["runs"][0]["results"], sarif["runs"][0]["tool"]["driver"]["rules"]
    assert len(results) == len(expected(CORPUS / "py_bad.py")) and {r["id"] for r in rules} == set(RULES)
    first = min(results, key=lambda r: r["locations"][0]["physicalLocation"]["region"]["startLine"])
    assert first["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].endswith("portcheck_corpus/py_bad.py")
    assert rules[first["ruleIndex"]]["id"] == first["ruleId"] and first["level"] in {"error", "warning", "note"}
    broken = {**sarif, "version": "2.0.0"}
    assert not validator.is_valid(broken)  # the validator can say no


def test_stdin_and_changed_files(tmp_path, monkeypatch, capsys):
    import io

    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"import torch\nx = torch.zeros(1).cuda()\n")))
    assert main(["--stdin", "train.py", "--json"]) == 1
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


def test_a_cuda_call_that_feeds_a_collective_is_a_warning_not_an_error(tmp_path):
    """The fairseq study's gradient-norm helper: a tensor moved to the GPU and handed to all_reduce is right under
    NCCL/RCCL and wrong only in a CPU-only (gloo) run: a warning that says so. torch.gather is no collective, and a
    .cuda() whose result feeds nothing distributed stays an error."""
    src = tmp_path / "norms.py"
    src.write_text(
        "import torch\nimport torch.distributed as dist\nfrom mylib import distributed_utils\n\n\n"
        "def global_norm(norm, group=None):\n"
        "    squared = norm.cuda().float() ** 2\n"  # line 7
        "    distributed_utils.all_reduce(squared, group=group)\n"
        "    return squared.sqrt()\n\n\n"
        "def share(t):\n"
        "    dist.broadcast(t.cuda(), src=0)\n"  # line 13
        "\n\n"
        "def gather_all(out, t):\n"
        "    dist.all_gather(out, tensor=t.cuda())\n"  # line 17: the input is not the first argument
        "\n\n"
        "def warm_up(group, weight):\n"
        "    probe = torch.zeros(1, device='cuda')\n"  # line 21: a device= keyword
        "    dist.all_reduce(probe, group=group)\n"
        "    weight.data = weight.data.cuda()\n"  # line 23: an attribute, not a name
        "    dist.all_reduce(weight.data, group=group)\n"
        "\n\n"
        "def pick(t, idx):\n"
        "    picked = t.cuda()\n"  # line 28
        "    return torch.gather(picked, 1, idx)\n"
    )
    found = {(f["line"], f["severity"]) for f in scan([str(src)])["findings"] if f["rule"] == "PC101"}
    assert found == {(7, "warning"), (13, "warning"), (17, "warning"), (21, "warning"), (23, "warning"), (28, "error")}
    (first,) = [f for f in scan([str(src)])["findings"] if f["line"] == 7]
    assert "feeds all_reduce" in first["message"] and "dist.get_backend()" in first["message"]


def test_a_module_that_times_the_gpu_and_never_tests_for_one_is_gpu_only_by_design(tmp_path):
    """A kernel benchmark or autotuner (the torchsparse study's tune.py): .cuda() there is info, not an error. The
    same calls in a module that tests for a GPU somewhere stay errors: its author meant it to run without one."""
    bench = tmp_path / "kernel_timing.py"  # (not named bench_*.py: that would make it a benchmark suite's file)
    bench.write_text(
        "import time\nimport torch\n\n\n"
        "def time_kernel(fn, x, repeat=10):\n"
        "    x = x.cuda()\n"  # line 6
        "    torch.cuda.synchronize()\n"  # line 7
        "    start = time.perf_counter()\n"
        "    for _ in range(repeat):\n"
        "        fn(x)\n"
        "    torch.cuda.synchronize()\n"
        "    return (time.perf_counter() - start) / repeat\n"
    )
    (f,) = scan([str(bench)])["findings"]
    assert (f["line"], f["rule"], f["severity"]) == (6, "PC101", "info")
    assert "the module times the GPU at line 7, never tests for a GPU" in f["message"]
    bench.write_text(bench.read_text() + "\n\nUSE_GPU = torch.cuda.is_available()\n")
    (f,) = scan([str(bench)])["findings"]
    assert (f["line"], f["rule"], f["severity"]) == (6, "PC101", "error")


def test_a_gpu_test_suite_is_guarded_by_its_skip_markers_and_otherwise_warned_not_failed(tmp_path, monkeypatch):
    """detectron2- and Megatron-style test suites: a module-wide pytestmark skip guards every line; a test folder's
    unguarded GPU test is a warning (it fails a CPU-only test run; the fix is a skip marker), while the same line in
    a module users run stays an error, and so does a test file scanned as a plain file outside a test folder."""
    marked = tmp_path / "proj" / "tests" / "test_marked.py"
    marked.parent.mkdir(parents=True)
    marked.write_text("import pytest\nimport torch\n\n"
                      "pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason='GPU')\n\n\n"
                      "def test_sum():\n    assert torch.ones(2).cuda().sum() == 2\n")  # fmt: skip
    unmarked = marked.with_name("helpers_gpu.py")
    unmarked.write_text("import torch\n\n\ndef make():\n    return torch.zeros(2).cuda()\n")  # line 5
    shipped = tmp_path / "proj" / "lib" / "helpers_gpu.py"
    shipped.parent.mkdir()
    shipped.write_text(unmarked.read_text())
    found = {(os.path.relpath(f["path"], tmp_path / "proj"), f["line"], f["severity"])
             for f in scan([str(tmp_path / "proj")])["findings"]}  # fmt: skip
    assert found == {
        (os.path.join("tests", "helpers_gpu.py"), 5, "warning"),
        (os.path.join("lib", "helpers_gpu.py"), 5, "error"),
    }
    (f,) = scan([str(unmarked)])["findings"]  # a file given by an absolute path: only its own name can say "test"
    assert f["severity"] == "error"
    monkeypatch.chdir(tmp_path / "proj")  # a relative path, as pre-commit and --changed give them, says it all
    (f,) = scan([os.path.join("tests", "helpers_gpu.py")])["findings"]
    assert f["severity"] == "warning"
    (f,) = scan([str(tmp_path / "proj" / "tests")])["findings"]
    assert f["severity"] == "warning" and "pytest.mark.skipif" in f["message"]


def test_a_module_of_gpu_kernels_is_gpu_only_by_design(tmp_path):
    """mamba's Triton and TileLang kernel modules allocate their outputs with device="cuda": their kernels run on
    nothing else. Such a module that tests for a GPU nowhere reports PC101 as info; one that does, as an error."""
    ops = tmp_path / "scan_ops.py"
    ops.write_text(
        "import torch\nimport triton\nimport triton.language as tl\n\n\n"
        "def scan(x):\n"
        "    out = torch.empty(x.shape, device='cuda')\n"  # line 7
        "    return out\n"
    )
    (f,) = scan([str(ops)])["findings"]
    assert (f["line"], f["severity"]) == (7, "info") and "imports a GPU kernel language at line 2" in f["message"]
    ops.write_text(ops.read_text() + "\n\nON_GPU = torch.cuda.is_available()\n")
    (f,) = scan([str(ops)])["findings"]
    assert (f["line"], f["severity"]) == (7, "error")


def test_only_skip_markers_and_machine_checks_guard_and_only_what_they_skip(tmp_path):
    """What a review found guarding too much: a pytestmark or class marker does not guard code that runs at import
    (a module or class body); an unrelated decorator, an assert on a tensor's device and a skipIf that skips WITH a GPU
    guard nothing; a tensor method on a variable named dists is no collective; an optional Triton import does not make
    a module GPU-only."""
    src = tmp_path / "mod.py"
    src.write_text(
        "import pytest\nimport torch\nimport unittest\n\n"
        "device = 'cuda' if torch.cuda.is_available() else 'cpu'\n"
        "pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason='GPU')\n"
        "W = torch.randn(4, 4).cuda()\n"  # 7: runs at collection
        "\n\n"
        "@unittest.skipUnless(torch.cuda.is_available(), 'GPU')\n"
        "class T(unittest.TestCase):\n"
        "    buf = torch.ones(2, device='cuda')\n"  # 12: a class body runs at import
        "\n"
        "    def test_a(self):\n"
        "        return torch.ones(1).cuda()\n"  # 15: guarded
    )
    assert {(f["line"], f["severity"]) for f in scan([str(src)])["findings"]} == {(7, "error"), (12, "error")}
    src.write_text(
        "import torch\nimport torch.distributed as dist\nimport unittest\n\n"
        "try:\n    import triton\nexcept ImportError:\n    triton = None\n"
        "device = 'cuda' if torch.cuda.is_available() else 'cpu'\n\n\n"
        "@unittest.skipIf(torch.cuda.is_available(), 'a CPU-only test')\n"
        "def cpu_only():\n"
        "    return torch.ones(1).cuda()\n"  # 14: skipped WITH a GPU: not guarded
        "\n\n"
        "def check(x, y):\n"
        "    assert y.device == x.device\n"  # a tensor's device, not the machine
        "    return x.cuda()\n"  # 19
        "\n\n"
        "def knn(dists, idx):\n"
        "    return dists.gather(1, idx.cuda())\n"  # 23: a tensor method, no collective
        "\n\n"
        "def spawn(rank):\n"
        "    assert torch.cuda.device_count() > rank\n"
        "    return torch.device('cuda', rank)\n"  # 28: guarded by the machine check
    )
    assert {(f["line"], f["severity"]) for f in scan([str(src)])["findings"]} == {
        (14, "error"),
        (19, "error"),
        (23, "error"),
    }


def test_a_warp_of_32_is_left_alone_only_in_branches_built_for_rdna_alone(tmp_path):
    kernel = tmp_path / "k.cu"
    kernel.write_text(
        "#if !defined(__gfx1100__)\n#define WARP_A 32\n#endif\n"  # 2: negated: everything but gfx1100
        "#if defined(__gfx1100__) || defined(__HIP_PLATFORM_AMD__)\n#define WARP_B 32\n#endif\n"  # 5: every AMD GPU
        "#if defined(__gfx1100__) || \\\n    defined(__gfx90a__)\n#define WARP_C 32\n#endif\n"  # 9: continued: gfx9
        "#if defined(USE_ROCM) // RDNA (__gfx1100__) runs wave32\n#define WARP_D 32\n#endif\n"  # 12: a comment
        "#if defined(__gfx1100__) || \\\n    defined(__gfx1201__) /* RDNA */\n#define WARP_E 32\n"  # 16: RDNA only
        "#elif defined(__gfx942__)\n#define WARP_F 32\n#endif\n"  # 18: CDNA
    )
    assert sorted(f["line"] for f in scan([str(kernel)])["findings"] if f["rule"] == "PC201") == [2, 5, 9, 12, 18]


def test_the_folders_above_the_project_never_make_it_a_test(tmp_path, monkeypatch):
    """A CI job named test checks out the project in workspace/test: scanned from there, its code stays code."""
    project = tmp_path / "test"
    (project / "pkg").mkdir(parents=True)
    (project / "pkg" / "core.py").write_text("import torch\n\nx = torch.zeros(1).cuda()\n")
    monkeypatch.chdir(project)
    (f,) = scan(["."])["findings"]
    assert f["severity"] == "error"
    (f,) = scan([str(project / "pkg" / "core.py")])["findings"]  # --changed gives absolute paths
    assert f["severity"] == "error"


def test_guards_from_other_modules_gpu_only_libraries_and_collectives_fed_through_lists(tmp_path, monkeypatch):
    """What ten projects outside the study showed (torchtune, accelerate, detr): a GPU check imported from another
    module of the project (also through a package's re-export, or a relative import) guards like one written in
    place; a module that cannot be imported without a GPU-only library (MS-AMP, Transformer Engine) is GPU code by
    design; a tensor that reaches an NCCL collective through a list or another variable is a warning, as a direct
    argument is. A name that is no GPU check, and a module that never imports the check, stay errors."""
    pkg = tmp_path / "proj" / "pkg"
    (pkg / "utils").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "utils" / "_guard.py").write_text(
        "import torch\n\nHAS_FLEX = torch.cuda.is_available() and torch.cuda.get_device_capability() >= (7, 5)\n"
        "BLOCK = 128\n\n\ndef has_gpu():\n    return torch.cuda.device_count() > 0\n"
    )
    (pkg / "utils" / "__init__.py").write_text("from ._guard import HAS_FLEX\n")  # a re-export
    attn = pkg / "attn.py"
    attn.write_text(
        "from pkg.utils import HAS_FLEX as FLEX\n"  # line 1
        "from .utils._guard import BLOCK, has_gpu\n\n\n"
        "def mask(ids):\n"
        "    if FLEX:\n"
        "        return ids.to('cuda')\n"  # line 7: guarded through the imported flag
        "    if has_gpu():\n"
        "        ids = ids.cuda()\n"  # line 9: guarded through the imported function
        "    if BLOCK:\n"
        "        ids = ids.cuda()\n"  # line 11: BLOCK is no GPU check
        "    return ids\n"
    )
    other = pkg / "other.py"
    other.write_text("def mask(ids):\n    if HAS_FLEX:\n        return ids.to('cuda')\n")  # never imported: line 3
    fp8 = pkg / "bench_fp8.py"
    fp8.write_text("import msamp\nimport torch\n\nmodel = torch.nn.Linear(8, 8).to('cuda')\naccelerator = None\n")
    comm = pkg / "comm.py"
    comm.write_text(
        "import torch\nimport torch.distributed as dist\n\n\n"
        "def gather(n, world):\n"
        "    sizes, pad = [], torch.empty(n, device='cuda')\n"  # line 6: reaches all_gather through cat
        "    for _ in range(world):\n"
        "        sizes.append(torch.zeros(1, device='cuda'))\n"  # line 8: through the list
        "    dist.all_gather(sizes, torch.cat((torch.ones(1), pad)))\n"
        "    return torch.zeros(1, device='cuda')\n"  # line 10: returned, not gathered
    )
    result = scan([str(tmp_path / "proj")])["findings"]
    found = {(os.path.basename(f["path"]), f["line"], f["severity"]) for f in result}
    assert found == {
        ("_guard.py", 3, "warning"),  # PC107: a compute capability means something else on ROCm
        ("attn.py", 11, "error"),
        ("other.py", 3, "error"),
        ("bench_fp8.py", 4, "info"),
        ("comm.py", 6, "warning"),
        ("comm.py", 8, "warning"),
        ("comm.py", 10, "error"),
    }, found
    (msg,) = [f["message"] for f in result if f["path"].endswith("bench_fp8.py")]
    assert "imports msamp, which runs on a GPU only, at line 1" in msg
    monkeypatch.chdir(tmp_path / "proj")  # one file, as pre-commit gives it: the guard module is read from disk
    assert {f["line"] for f in scan([os.path.join("pkg", "attn.py")])["findings"]} == {11}


def test_a_benchmark_suite_is_warned_not_failed(tmp_path):
    """lightning-thunder's benchmarks/ (outside the study): a timing suite exists to measure GPUs, like a test suite
    it is no user's program, so its PC101 is a warning that says why; the same line elsewhere stays an error."""
    line = "import torch\n\nx = torch.ones(4).cuda()\n"
    for rel in ("benchmarks/targets.py", "tools/benchmark_attn.py", "ops/matmul_bench.py", "lib/benchmarking.py"):
        (tmp_path / "proj" / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "proj" / rel).write_text(line)
    result = scan([str(tmp_path / "proj")])["findings"]
    found = {os.path.relpath(f["path"], tmp_path / "proj").replace(os.sep, "/"): f for f in result}
    assert {k: f["severity"] for k, f in found.items()} == {
        "benchmarks/targets.py": "warning",
        "tools/benchmark_attn.py": "warning",
        "ops/matmul_bench.py": "warning",
        "lib/benchmarking.py": "error",
    }
    assert "a benchmark: it times the GPU" in found["benchmarks/targets.py"]["message"]


def _severities(folder) -> dict:
    """{(file name, line): severity} of PC101/PC109 findings under folder."""
    return {(os.path.basename(f["path"]), f["line"]): f["severity"] for f in scan([str(folder)])["findings"]
            if f["rule"] in ("PC101", "PC109")}  # fmt: skip


def test_guards_reach_no_further_than_what_they_test(tmp_path):
    """A review's reproductions of guards read too widely: each line below is unguarded on a CPU-only machine and
    stays an error; the lines marked ok are guarded and silent."""
    cases = {
        "count.py": "def setup(model, args, n_gpus):\n"
        "    if args.num_gpus > 1:\n"
        "        model = torch.nn.DataParallel(model).cuda()\n"  # ok: two GPUs or more asked for
        "    else:\n"
        "        model = model.cuda()\n"  # 5: the one-GPU or CPU path
        "    if args.num_gpus >= 1:\n"
        "        model.cuda()\n"  # ok: GPUs asked for, like use_gpu (a config's count is 0 for a CPU run: SlowFast)
        "    x = torch.zeros(3, device='cuda') if n_gpus else None\n"  # ok: the same
        "    if args.num_gpus >= 0:\n"
        "        model.cuda()\n",  # 10: true without GPUs too
        "refine.py": "import argparse\nimport torch\nparser = argparse.ArgumentParser()\n"
        "parser.add_argument('--device', default='cuda')\n"  # 4: refined under a GPU test, never replaced by a CPU
        "args = parser.parse_args()\n"
        "if torch.cuda.is_available() and args.local_rank >= 0:\n"
        "    args.device = f'cuda:{args.local_rank}'\n",
        "attrs.py": "import argparse\nimport torch\n\n\ndef get_args():\n"
        "    p = argparse.ArgumentParser()\n"
        "    p.add_argument('--device', default='cuda')\n"  # 7: self.device below is another attribute
        "    return p.parse_args()\n\n\n"
        "class Trainer:\n"
        "    def __init__(self, args):\n"
        "        self.device = torch.device('cuda', args.rank) if torch.cuda.is_available() else 'cpu'\n",  # ok
        "names.py": "import torch\n"
        "device = 'cuda'\n"  # 2: the IfExp below reads it where a GPU is, and so does evaluate() where none is
        "def step(batch):\n"
        "    return batch.to(device) if torch.cuda.is_available() else batch\n"
        "def pick():\n"
        "    device = 'cuda'\n"  # ok: replaced by a CPU device two lines down, in the same function
        "    if not torch.cuda.is_available():\n"
        "        device = 'cpu'\n"
        "def main():\n"
        "    device = 'cuda'\n"  # 10: another function's device
        "def evaluate(x):\n"
        "    return x.to(device)\n",
        "comm.py": "import torch\nimport torch.distributed as dist\n\n\n"
        "def train(rank, world):\n"
        "    model = torch.nn.Linear(2, 2).cuda()\n"  # 6: the model is no collective's tensor, only its weight is
        "    dist.broadcast(model.weight, src=0)\n"
        "    dist.all_reduce(world.counts)\n"
        "    world = torch.ones(1).cuda()\n",  # 9: assigned after the last collective
        "vendors.py": "import torch.distributed as dist\n"
        "def init(device):\n"
        "    if device != 'hpu':\n"
        "        dist.init_process_group(backend='hccl')\n"  # 4: the branch that is not Gaudi's
        "    if device == 'hpu':\n"
        "        dist.init_process_group(backend='rccl')\n"  # 6: no 'rccl' backend anywhere
        "    if device == 'hpu':\n"
        "        dist.init_process_group(backend='hccl')\n",  # ok: Gaudi's
        "exits.py": "import torch\nimport torch.distributed as dist\n"
        "def save(accelerator, x):\n"
        "    if not accelerator.is_main_process:\n"
        "        return\n"
        "    torch.zeros(3, device='cuda')\n"  # 6: the main process of a CPU run too
        "def reduce(x):\n"
        "    if not dist.is_available():\n"
        "        return x\n"
        "    return torch.tensor(x, device='cuda')\n",  # 10
    }
    for name, text in cases.items():
        (tmp_path / name).write_text(text)
    assert _severities(tmp_path) == {
        ("count.py", 5): "error", ("count.py", 10): "error",
        ("refine.py", 4): "error", ("attrs.py", 7): "error", ("names.py", 2): "error", ("names.py", 10): "error",
        ("comm.py", 6): "error", ("comm.py", 9): "error", ("vendors.py", 4): "error", ("vendors.py", 6): "error",
        ("exits.py", 6): "error", ("exits.py", 10): "error",
    }  # fmt: skip


def test_imported_guards_are_gpu_tests_of_the_project_and_never_crash(tmp_path):
    """Only a GPU test counts when imported (not torch.distributed's, MPS's or a device string), only from the project
    (the packages above the file, or one folder above a script's), and a module too deep to read is skipped."""
    proj = tmp_path / "proj"
    (proj / "pkg").mkdir(parents=True)
    (proj / "scripts").mkdir()
    (proj / "pkg" / "__init__.py").write_text("")
    (proj / "pkg" / "comm.py").write_text(
        "import torch\nimport torch.distributed as dist\n\n\n"
        "def is_dist():\n    return dist.is_available() and dist.is_initialized()\n\n\n"
        "HAS_MPS = torch.backends.mps.is_available()\n"
        "device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
        "HAS_GPU = torch.cuda.device_count() > 0\n"
    )
    (proj / "pkg" / "tables.py").write_text("WEIGHTS = " + "+".join(f"[{i}]" for i in range(3000)) + "\n")
    (proj / "pkg" / "train.py").write_text(
        "from pkg.comm import HAS_GPU, HAS_MPS, device, is_dist\n"
        "from pkg.tables import WEIGHTS\n\n\n"
        "def f(m):\n"
        "    if is_dist():\n        m.cuda()\n"  # 7
        "    if HAS_MPS:\n        m.cuda()\n"  # 9
        "    if device:\n        m.cuda()\n"  # 11
        "    if WEIGHTS:\n        m.cuda()\n"  # 13
        "    if HAS_GPU:\n        m.cuda()\n"  # ok
    )
    # outside the project (a name that is no user's switch: `if USE_GPU:` is one, wherever it comes from)
    (tmp_path / "config.py").write_text("import torch\nGPU_OK = torch.cuda.is_available()\n")
    (proj / "scripts" / "run.py").write_text("from config import GPU_OK\n\nif GPU_OK:\n    torch.ones(1).cuda()\n")
    found = _severities(proj)
    assert {k for k, v in found.items() if v == "error"} == {("train.py", n) for n in (7, 9, 11, 13)} | {("run.py", 4)}
    (deep,) = scan([str(proj / "pkg" / "tables.py")])["findings"]  # scanned itself: a PC900, not a crash
    assert deep["rule"] == "PC900" and "RecursionError" in deep["message"]


def test_nccl_process_groups_early_exits_gpu_switches_and_templates(tmp_path):
    """What a third set of projects outside the study showed (LoRA's Hugging Face examples, InternVL's evaluation
    scripts, pytorch_geometric's multi-GPU example, LPIPS): a branch or a script that starts an NCCL process group runs
    with a GPU per process, so PC101 there is a warning; a module that quits where there are fewer than two GPUs
    guards the rest of it; `if self.use_gpu:` guards its branch, not its else; a cookiecutter template is no Python."""
    files = {
        "hf.py": "import torch\n"
        "if args.local_rank == -1 or args.no_cuda:\n"
        "    device = torch.device('cuda' if torch.cuda.is_available() and not args.no_cuda else 'cpu')\n"
        "else:\n"
        "    torch.cuda.set_device(args.local_rank)\n"
        "    device = torch.device('cuda', args.local_rank)\n"  # 6: warning, the NCCL branch
        "    torch.distributed.init_process_group(backend='nccl')\n"
        "model = model.cuda()\n",  # 8: error, every run takes it
        "evaluate.py": "import torch\n\n\n"
        "def evaluate(model):\n"
        "    return model.cuda()\n"  # 5: warning, the script always starts NCCL
        "\n\nif __name__ == '__main__':\n"
        "    torch.distributed.init_process_group(backend='nccl', world_size=2)\n"
        "    evaluate(None)\n",
        "model_parallel.py": "import sys\nimport torch\n\n"
        "if torch.cuda.device_count() < 2:\n"
        "    sys.exit('needs two GPUs')\n"
        "a = torch.ones(2).to('cuda:0')\n",  # ok
        "lpips.py": "class Net:\n"
        "    def forward(self, x):\n"
        "        if self.use_gpu:\n"
        "            x = x.cuda()\n"  # ok
        "        else:\n"
        "            x = x.cuda()\n"  # 6: error, the CPU path
        "        return x\n",
    }
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    template = tmp_path / "templates" / "{{cookiecutter.name}}" / "run_{{cookiecutter.name}}.py"
    template.parent.mkdir(parents=True)
    template.write_text("{% if cookiecutter.gpu %}\nimport torch\n{% endif %}\n")
    assert _severities(tmp_path) == {
        ("hf.py", 6): "warning", ("hf.py", 8): "error", ("evaluate.py", 5): "warning", ("lpips.py", 6): "error",
    }  # fmt: skip
    found = {(os.path.basename(f["path"]), f["rule"], f["severity"]) for f in scan([str(tmp_path)])["findings"]}
    assert ("run_{{cookiecutter.name}}.py", "PC900", "info") in found
    (nccl,) = [f for f in scan([str(tmp_path / "hf.py")])["findings"] if f["line"] == 6]
    assert "the NCCL process group started at line 7" in nccl["message"]


def test_functions_named_for_the_gpu_and_nccl_started_by_a_project_function(tmp_path):
    """What a fourth set of projects outside the study showed (LAVIS, mmcv's test helpers, DINO): a function named for
    the GPU (move_to_cuda, collect_results_gpu) is GPU code by design, so its caller decides: a warning; and a script
    whose main block calls a project function that starts NCCL (utils.init_distributed_mode(args)) runs with a GPU
    per process, read one import away in each spelling, while a function that starts NCCL only in a branch does not
    count, and neither does one that picks the device (cpu_or_gpu)."""
    pkg = tmp_path / "proj"
    (pkg / "pkg").mkdir(parents=True)
    (pkg / "pkg" / "__init__.py").write_text("")
    dist_init = ("import sys\nimport torch\nimport torch.distributed as dist\n\n\n"
                 "def init_distributed_mode(args):\n"
                 "    if not torch.cuda.is_available():\n        sys.exit('needs a GPU')\n"
                 "    dist.init_process_group(backend='nccl')\n\n\n"
                 "def maybe_init(args):\n"
                 "    if args.distributed:\n        dist.init_process_group(backend='nccl')\n")  # fmt: skip
    (pkg / "utils.py").write_text(dist_init)
    (pkg / "pkg" / "dist_utils.py").write_text(dist_init)
    main = "\n\n\ndef extract(model):\n    return model.cuda()\n\n\nif __name__ == '__main__':\n    {}(args)\n"
    cases = {
        "eval_a.py": "import utils" + main.format("utils.init_distributed_mode"),  # 5: warning
        "eval_b.py": "from pkg import dist_utils" + main.format("dist_utils.init_distributed_mode"),  # 5: warning
        "eval_c.py": "from pkg.dist_utils import init_distributed_mode as init" + main.format("init"),  # 5: warning
        "eval_d.py": "import pkg.dist_utils" + main.format("pkg.dist_utils.init_distributed_mode"),  # 5: warning
        "eval_e.py": "import utils" + main.format("utils.maybe_init"),  # 5: error, NCCL only sometimes
        "eval_f.py": "import utils" + main.format("utils.other"),  # 5: error
        "helpers_gpu.py": "import torch\n\n\ndef move_to_cuda(batch):\n    return batch.cuda()\n\n\n"  # 5
        "def collect_results_gpu(part):\n    return torch.empty(2, device='cuda')\n\n\n"  # 9: warning
        "def cpu_or_gpu(x):\n    return x.cuda()\n\n\n"  # 13: error, a function that picks
        "def load(x):\n    return x.cuda()\n",  # 17: error
    }  # fmt: skip
    for name, text in cases.items():
        (pkg / name).write_text(text)
    found = _severities(pkg)
    assert {k: v for k, v in found.items() if k[0] != "utils.py" and k[0] != "dist_utils.py"} == {
        ("eval_a.py", 5): "warning", ("eval_b.py", 5): "warning", ("eval_c.py", 5): "warning",
        ("eval_d.py", 5): "warning", ("eval_e.py", 5): "error", ("eval_f.py", 5): "error",
        ("helpers_gpu.py", 5): "warning", ("helpers_gpu.py", 9): "warning", ("helpers_gpu.py", 13): "error",
        ("helpers_gpu.py", 17): "error",
    }  # fmt: skip
    (named,) = [f for f in scan([str(pkg / "helpers_gpu.py")])["findings"] if f["line"] == 5]
    assert "in move_to_cuda(), a function named for the GPU" in named["message"]


def test_gpu_counts_of_a_config_modules_without_parameters_and_cpu_choices(tmp_path):
    """What a fifth set of projects outside the study showed (SlowFast, FastChat): `if cfg.NUM_GPUS:` (also `> 0`, in
    an `and`) is the branch a user asked GPUs for, its else the CPU run; nn.CrossEntropyLoss().cuda() has nothing to
    move and runs anywhere, so it is not reported (with a class weight it has a buffer); a --device default of "cuda"
    whose choices list "cpu"
    is a warning; a project function that may return before starting NCCL does not make its caller NCCL code."""
    cases = {
        "slowfast.py": "import torch\nfrom torch import nn\n\n\ndef step(cfg, inputs, w):\n"
        "    if cfg.NUM_GPUS:\n        inputs = inputs.cuda(non_blocking=True)\n"  # ok
        "    if cfg.DETECTION.ENABLE and cfg.NUM_GPUS > 0:\n        inputs = inputs.cuda()\n"  # ok
        "    else:\n        inputs = inputs.cuda()\n"  # 11: error, the CPU run
        "    if cfg.NUM_GPUS or cfg.FORCE:\n        inputs = inputs.cuda()\n"  # 13: error, taken without GPUs too
        "    loss = nn.CrossEntropyLoss(reduction='mean').cuda()\n"  # ok
        "    soft = torch.nn.Softmax(dim=1).cuda()\n"  # ok
        "    weighted = nn.CrossEntropyLoss(weight=w).cuda()\n"  # 16: error, a buffer
        "    lin = nn.Linear(2, 2).cuda()\n"  # 17: error, parameters
        "    return inputs, loss, soft, weighted, lin\n",
        "cli.py": "import argparse\n\nparser = argparse.ArgumentParser()\n"
        "parser.add_argument('--device', choices=['cpu', 'cuda', 'mps'], default='cuda')\n"  # 4: warning
        "parser.add_argument('--eval-device', default='cuda')\n",  # 5: error
        "dist_utils.py": "import torch.distributed as dist\n\n\ndef init(args):\n"
        "    if not args.distributed:\n        return\n"
        "    dist.init_process_group(backend='nccl')\n",
        "run.py": "import dist_utils\n\n\ndef go(m):\n    return m.cuda()\n\n\n"  # 5: error
        "if __name__ == '__main__':\n    dist_utils.init(args)\n",
    }  # fmt: skip
    for name, text in cases.items():
        (tmp_path / name).write_text(text)
    assert _severities(tmp_path) == {
        ("slowfast.py", 11): "error", ("slowfast.py", 13): "error", ("slowfast.py", 16): "error",
        ("slowfast.py", 17): "error",
        ("cli.py", 4): "warning", ("cli.py", 5): "error", ("run.py", 5): "error",
    }  # fmt: skip
    (cli,) = [f for f in scan([str(tmp_path / "cli.py")])["findings"] if f["line"] == 4]
    assert "a run without --device fails on a CPU-only machine" in cli["message"]


def test_a_review_of_the_rules_from_projects_outside_the_study(tmp_path):
    """A review's reproductions against the rules above: a count under `not`, in an `or`, or set in the code guards
    nothing; modules that hold parameters (AdaptiveLogSoftmaxWithLoss) or may get a weight (**kwargs) are moved; a
    function that tests for a GPU is no GPU code by design, and one named for the GPU that this module calls where
    nothing tests for one fails there; the NCCL function that counts is the one Python binds last (not a shadowed
    import, not a @contextmanager), and `import utils` in a package is the root's; a call chain too deep to walk is a
    PC900 finding, not a crash."""
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    nccl = "import torch.distributed as dist\n\n\ndef init():\n    dist.init_process_group(backend='nccl')\n"
    (tmp_path / "pkg" / "utils.py").write_text(nccl)
    (tmp_path / "utils.py").write_text(nccl.replace("nccl", "gloo"))
    (tmp_path / "dist_nccl.py").write_text(nccl)
    main = "\n\n\ndef go(m):\n    return m.cuda()\n\n\nif __name__ == '__main__':\n    {}()\n"
    cases = {
        "counts.py": "def f(cfg, args, x, y):\n"
        "    if not cfg.NUM_GPUS > 0:\n        x = x.cuda()\n"  # 3: error
        "    if args.num_gpus > 0 or args.force:\n        x = x.cuda()\n"  # 5: error
        "    if cfg.NUM_GPUS and x or y:\n        x = x.cuda()\n"  # 7: error
        "    num_gpus = 1\n    if num_gpus > 0:\n        x = x.cuda()\n"  # 10: error
        "    return x\n",
        "modules.py": "from torch import nn\n\n\ndef f(kw):\n"
        "    a = nn.AdaptiveLogSoftmaxWithLoss(in_features=8, n_classes=10, cutoffs=[4]).cuda()\n"  # 5: error
        "    b = nn.CrossEntropyLoss(**kw).cuda()\n"  # 6: error
        "    return a, b\n",
        "named.py": "import torch\n\n\ndef has_gpu():\n    return torch.zeros(1, device='cuda') is not None\n\n\n"  # 5
        "def move_to_cuda(batch):\n    return batch.cuda()\n\n\n"  # 9: error, called unguarded below
        "def evaluate(batch):\n    return move_to_cuda(batch)\n",
        "shadowed.py": "from dist_nccl import init\n\n\ndef init():\n    pass" + main.format("init"),  # 9: error
        "ctx.py": "import contextlib\nimport torch.distributed as dist\n\n\n@contextlib.contextmanager\ndef init():\n"
        "    dist.init_process_group(backend='nccl')\n    yield" + main.format("init"),  # 12: error
    }  # fmt: skip
    for name, text in cases.items():
        (tmp_path / name).write_text(text)
    (tmp_path / "pkg" / "train.py").write_text("import utils" + main.format("utils.init"))  # 5: error (gloo)
    found = {k: v for k, v in _severities(tmp_path).items() if k[0] != "utils.py" and k[0] != "dist_nccl.py"}
    assert found == {
        ("counts.py", 3): "error", ("counts.py", 5): "error", ("counts.py", 7): "error", ("counts.py", 10): "error",
        ("modules.py", 5): "error", ("modules.py", 6): "error", ("named.py", 5): "error", ("named.py", 9): "error",
        ("shadowed.py", 9): "error", ("ctx.py", 12): "error", ("train.py", 5): "error",
    }  # fmt: skip
    deep = tmp_path / "deep.py"
    deep.write_text("utils.f" + "()" * 1000 + "\n")
    (finding,) = scan([str(deep)])["findings"]
    assert (finding["rule"], finding["severity"]) == ("PC900", "error")  # (scanned, or on another Python not parsed)
    assert re.search(r"nested too deeply|RecursionError", finding["message"])


def test_a_chosen_device_a_comparison_and_a_collective_only_with_gpus(tmp_path):
    """What a sixth set of projects outside the study showed (Stable Diffusion's scripts, SlowFast): a device already
    chosen and compared with the GPU guards its branch, and the comparison itself moves nothing; a tensor that reaches
    a collective only in the branch that runs with GPUs (`if num_gpus > 1: dist.broadcast(idx)`) is still created on
    every run, so its .cuda() stays an error."""
    (tmp_path / "txt2img.py").write_text(
        "import torch\n\n\ndef load(model, device, opt):\n"
        "    if device == torch.device('cuda'):\n        model.cuda()\n"  # ok, both
        "    elif device == torch.device('cpu'):\n        model.cpu()\n"
        "    d = torch.device('cuda') if opt.device == 'cuda' else torch.device('cpu')\n"  # ok
        "    return torch.ones(2).to('cuda'), d\n"  # 10: error
    )
    (tmp_path / "contrastive.py").write_text(
        "import torch\nimport torch.distributed as dist\n\n\ndef shuffle(self, x):\n"
        "    idx = torch.randperm(x.shape[0]).cuda()\n"  # 6: error, a CPU run takes it
        "    if self.num_gpus > 1:\n        dist.broadcast(idx, src=0)\n"
        "    buf = torch.zeros(3).cuda()\n"  # 9: warning, always reaches all_reduce
        "    dist.all_reduce(buf)\n    return x[idx], buf\n"
    )
    assert _severities(tmp_path) == {
        ("txt2img.py", 10): "error", ("contrastive.py", 6): "error", ("contrastive.py", 9): "warning",
    }  # fmt: skip


def test_nccl_started_through_main_and_a_gpu_the_user_picked(tmp_path):
    """What a seventh set of projects outside the study showed (SwAV, MoCo v3): a script whose __main__ block calls
    main(), which calls the project's init_distributed_mode() (NCCL, no way out), runs with NCCL as a whole; `if
    args.gpu is not None:` (>= 0, != -1) is the branch for the GPU a user picked, its else the CPU run."""
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "__init__.py").write_text("")
    (tmp_path / "src" / "utils.py").write_text(
        "import torch.distributed as dist\n\n\ndef init_distributed_mode(args):\n"
        "    dist.init_process_group(backend='nccl')\n    return\n"
    )
    (tmp_path / "eval_linear.py").write_text(
        "from src.utils import init_distributed_mode\n\n\ndef main(args):\n    init_distributed_mode(args)\n"
        "    train(args)\n\n\ndef train(args):\n    return torch.ones(2).cuda()\n\n\n"  # 10: warning
        "if __name__ == '__main__':\n    main(args)\n"
    )
    (tmp_path / "eval_once.py").write_text(
        "from src.utils import init_distributed_mode\n\n\ndef main(args):\n    if args.single:\n        return\n"
        "    init_distributed_mode(args)\n\n\ndef train(args):\n    return torch.ones(2).cuda()\n\n\n"  # 11: error
        "if __name__ == '__main__':\n    main(args)\n"
    )
    (tmp_path / "main_moco.py").write_text(
        "def step(args, images):\n"
        "    if args.gpu is not None:\n        images = images.cuda(args.gpu, non_blocking=True)\n"  # ok
        "    if args.gpu_id >= 0:\n        images = images.cuda(args.gpu_id)\n"  # ok
        "    if args.gpu != -1:\n        images = images.cuda(args.gpu)\n"  # ok
        "    if args.gpu is None:\n        images = images.cuda()\n"  # 9: error
        "    if args.gpu != 0:\n        images = images.cuda()\n"  # 11: error, 0 is a GPU too
        "    return images\n"
    )
    assert _severities(tmp_path) == {
        ("eval_linear.py", 10): "warning", ("eval_once.py", 11): "error", ("main_moco.py", 9): "error",
        ("main_moco.py", 11): "error",
    }  # fmt: skip


def test_a_bundled_copy_of_a_package_and_the_fields_of_a_module(tmp_path):
    """What an eighth set of projects outside the study showed (Jukebox, GLIDE): a copy of apex that a project ships
    imports apex in its own tests and examples, which is no dependency on it (the project's own import of apex is);
    a field default of an nn.Module written as an attrs class or dataclass is its constructor's parameter default, a
    warning like a function's (a config dataclass's field stays an error)."""
    (tmp_path / "apex" / "tests").mkdir(parents=True)
    (tmp_path / "apex" / "setup.py").write_text("from setuptools import setup\n\nsetup(name='apex')\n")
    (tmp_path / "apex" / "tests" / "test_amp.py").write_text("import apex\nfrom apex import amp\n")  # ok: apex's own
    (tmp_path / "integrations" / "apex").mkdir(parents=True)  # a project's own folder named apex: no copy of apex
    (tmp_path / "integrations" / "apex" / "amp.py").write_text("import apex\n")  # 1: error
    (tmp_path / "train.py").write_text("from apex import amp\n\nmodel, opt = amp.initialize(model, opt)\n")  # 1, 3
    (tmp_path / "encoders.py").write_text(
        "from dataclasses import dataclass\n\nimport attr\nimport torch\nfrom torch import nn\n\n\n"
        "@attr.s(eq=False)\nclass TextEmbedding(nn.Module):\n"
        "    device: torch.device = attr.ib(default=torch.device('cuda'))\n\n\n"  # 10: warning
        "@dataclass\nclass Config:\n    device: str = 'cuda'\n"  # 15: error
    )
    found = {(os.path.basename(f["path"]), f["line"], f["rule"]): f["severity"]
             for f in scan([str(tmp_path)])["findings"] if f["rule"] in ("PC101", "PC303")}  # fmt: skip
    assert found == {
        ("train.py", 1, "PC303"): "error", ("train.py", 3, "PC303"): "error", ("amp.py", 1, "PC303"): "error",
        ("encoders.py", 10, "PC101"): "warning", ("encoders.py", 15, "PC101"): "error",
    }  # fmt: skip


def test_a_review_of_the_chosen_device_the_picked_gpu_nccl_starters_and_fields(tmp_path):
    """A second review's reproductions: comparing the user's device choice is no CPU fallback, guards only under `==`
    (not `not`, not `or` with another way in) and not a device the code sets; `args.gpu` guards only when its default
    picks no GPU (None or -1, not 0, not the string "-1"); what an NCCL starter runs before it starts NCCL runs without
    it; `main` rebound to another function is not the starter; a plain class attribute, or code that runs at import,
    is no constructor default."""
    cases = {
        "ifexp.py": "import argparse\nimport torch\n\np = argparse.ArgumentParser()\n"
        "p.add_argument('--device', default='cuda')\nargs = p.parse_args()\n"  # 5: error
        "device = args.device if args.device == 'cuda' else 'cpu'\n",
        "chosen.py": "def run(model, args, device):\n"
        "    if not args.device == 'cuda':\n        model = model.cuda()\n"  # 3: error
        "    if args.device == 'cuda' or args.half:\n        model = model.cuda()\n"  # 5: error
        "    if args.device == 'cuda' and args.half:\n        model = model.cuda()\n"  # ok
        "    device = 'cuda'\n    if device == 'cuda':\n        model = model.cuda()\n"  # 8 and 10: error
        "    return model\n",
        "gpu_zero.py": "import argparse\n\np = argparse.ArgumentParser()\n"
        "p.add_argument('--gpu', type=int, default=0)\n"
        "p.add_argument('--gpu_id', type=int, default=-1)\nargs = p.parse_args()\n"
        "if args.gpu >= 0:\n    model = model.cuda(args.gpu)\n"  # 8: error, 0 picks a GPU
        "if args.gpu_id != '-1':\n    model = model.cuda()\n"  # 10: error, a string
        "if args.gpu_id != -1:\n    model = model.cuda()\n",  # ok
        "single.py": "import sys\nimport torch\nimport torch.distributed as dist\n\n\ndef init():\n"
        "    dist.init_process_group(backend='nccl')\n\n\ndef main(single):\n    if single:\n"
        "        model = torch.nn.Linear(2, 2).cuda()\n        sys.exit(0)\n    init()\n"  # 12: error
        "    return torch.ones(2).cuda()\n"  # 15: warning
        "\n\nif __name__ == '__main__':\n    main(len(sys.argv) == 1)\n",
        "rebound.py": "import torch\nimport torch.distributed as dist\n\n\ndef main():\n"
        "    dist.init_process_group(backend='nccl')\n\n\ndef cpu_main():\n    pass\n\n\nmain: object = cpu_main\n"
        "if __name__ == '__main__':\n    main()\n    model = torch.nn.Linear(2, 2).cuda()\n",  # 16: error
        "fields.py": "import torch\nfrom torch import nn\n\n\nclass Net(nn.Module):\n    device: str = 'cuda'\n"  # 6
        "    table: torch.Tensor = torch.ones(1, device='cuda')\n",  # 7: error, runs at import
    }  # fmt: skip
    for name, text in cases.items():
        (tmp_path / name).write_text(text)
    assert _severities(tmp_path) == {
        ("ifexp.py", 5): "error", ("chosen.py", 3): "error", ("chosen.py", 5): "error", ("chosen.py", 8): "error",
        ("chosen.py", 10): "error",
        ("gpu_zero.py", 8): "error", ("gpu_zero.py", 10): "error", ("single.py", 12): "error",
        ("single.py", 15): "warning", ("rebound.py", 16): "error", ("fields.py", 6): "error",
        ("fields.py", 7): "error",
    }  # fmt: skip


def test_a_parameter_default_set_in_the_body(tmp_path):
    """StyleGAN's MetricOptions (rounds 7 to 9 outside the study): `device if device is not None else
    torch.device("cuda")`, or `if device is None: device = "cuda"`, is the parameter's default written in the body: a
    warning, like `def f(device="cuda")`; the same value for a name that is no parameter stays an error."""
    (tmp_path / "metric_utils.py").write_text(
        "import torch\n\n\nclass MetricOptions:\n    def __init__(self, device=None, rank=0):\n"
        "        self.device = device if device is not None else torch.device('cuda', rank)\n\n\n"  # 6: warning
        "def load(path, device=None):\n    if device is None:\n        device = 'cuda'\n"  # 11: warning
        "    return torch.load(path, map_location=device)\n\n\n"
        "def other(x):\n    dev = None\n    return dev if dev is not None else torch.device('cuda')\n"  # 17: error
    )
    assert _severities(tmp_path) == {
        ("metric_utils.py", 6): "warning", ("metric_utils.py", 11): "warning", ("metric_utils.py", 17): "error",
    }  # fmt: skip


def test_a_second_review_of_the_guards(tmp_path):
    """A second review's reproductions: NCCL covers a block only from where nothing before can leave it; a way out
    counts only when its test is true where there is no GPU (not `and` another option, not an Accelerator's process);
    an `if` guards its GPU branch, not its else; a switch set in the code is no user's request; a fallback is a CPU
    value for the same attribute in the same class; a dataclass field is a config default too."""
    cases = {
        "nccl_return.py": "import torch\nimport torch.distributed as dist\n\n\ndef main(args):\n"
        "    if args.world_size == 1:\n"
        "        return torch.nn.Linear(2, 2).cuda()\n"  # 7: error, the single-process path
        "    dist.init_process_group('nccl')\n"
        "    return torch.nn.Linear(2, 2).cuda()\n",  # 9: warning
        "nccl_sometimes.py": "import os\nimport torch\nimport torch.distributed as dist\n\n\n"
        "def train():\n    return torch.nn.Linear(2, 2).cuda()\n\n\n"  # 7: error
        "if __name__ == '__main__':\n"
        "    if 'RANK' in os.environ: dist.init_process_group('nccl')\n"
        "    train()\n",
        "exits.py": "import sys\nimport torch\n\n\ndef main(accelerator, args):\n"
        "    is_main = accelerator.is_main_process\n"
        "    if not is_main:\n        return\n"
        "    x = torch.ones(2).cuda()\n"  # 9: error
        "    if not torch.cuda.is_available() and args.require_gpu:\n        sys.exit('no GPU')\n"
        "    return torch.ones(2).cuda()\n"  # 12: error
        "\n\nif __name__ == '__main__':\n"
        "    if not torch.cuda.is_available():\n        sys.exit('GPU required')\n"
        "    y = torch.ones(2).cuda()\n",  # ok
        "skipped.py": "import pytest\nimport torch\n\nif not torch.cuda.is_available():\n"
        "    pytest.skip('needs a GPU', allow_module_level=True)\n"
        "x = torch.ones(2).cuda()\n",  # ok
        "branches.py": "import torch\n\nuse_gpu = True\n\n\ndef f(x, num_gpus, rank):\n"
        "    if torch.cuda.is_available():\n        x = x.cuda()\n"  # ok
        "    else:\n        y = torch.ones(2, device='cuda')\n"  # 10: error, the else of a GPU test
        "    d = torch.device('cuda', rank) if num_gpus > 1 else torch.device('cuda')\n"  # 11: error, its else
        "    if use_gpu:\n        x = x.cuda()\n"  # 13: error, a switch set in the code
        "    return x, y, d\n",
        "configs.py": "from dataclasses import dataclass\n\nimport torch\n\n\n"
        "class A:\n    def __init__(self):\n        self.device = 'cuda'\n\n\n"  # 8: error, B's fallback is B's
        "class B:\n    def __init__(self):\n        if not torch.cuda.is_available():\n"
        "            self.device = 'cpu'\n"
        "\n\n@dataclass\nclass TrainConfig:\n"
        "    device: str = 'cuda'\n",  # 19: error
    }  # fmt: skip
    for name, text in cases.items():
        (tmp_path / name).write_text(text)
    assert _severities(tmp_path) == {
        ("nccl_return.py", 7): "error", ("nccl_return.py", 9): "warning", ("nccl_sometimes.py", 7): "error",
        ("exits.py", 9): "error", ("exits.py", 12): "error", ("branches.py", 10): "error",
        ("branches.py", 11): "error", ("branches.py", 13): "error", ("configs.py", 8): "error",
        ("configs.py", 19): "error",
    }  # fmt: skip
    broken = tmp_path / "broken.py"
    broken.write_text("def report(d):\n    print(f\"config: {{d['lr']}\")\n")  # an f-string typo, no template
    real = tmp_path / "real.py"
    real.write_text(
        'MODEL = "{{ cookiecutter.model_name }}"\n{% if cookiecutter.use_gpu %}\ndevice = "cuda"\n{% endif %}\n'
    )
    assert [f["severity"] for f in scan([str(broken)])["findings"]] == ["error"]
    assert [f["severity"] for f in scan([str(real)])["findings"]] == ["info"]


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


def test_a_switch_to_use_the_gpu_is_a_users_choice_in_any_spelling(tmp_path):
    """VISSL: `if cfg.NEAREST_NEIGHBOR.USE_CUDA:` with a CPU else, and `copy_to_gpu = is_on_gpu(self._losses)` then
    `if copy_to_gpu: criterion.cuda()`: FPs in round 10 (7 findings), labelled from the code. A switch set to a
    constant in the code is still nobody's choice."""
    src = tmp_path / "knn.py"
    src.write_text(
        "import torch\n\n\n"
        "def knn(cfg, feats, losses):\n"
        "    if cfg.NEAREST_NEIGHBOR.USE_CUDA:\n        feats = feats.cuda()\n"
        "    copy_to_gpu = is_on_gpu(losses)\n"
        "    if copy_to_gpu:\n        feats = feats.cuda()\n"
        "    enable_cuda = True\n"
        "    if enable_cuda:\n        feats = feats.cuda()\n"  # 12: set here, asked by no user
        "    return feats\n"
    )
    assert [(f["line"], f["severity"]) for f in scan([str(src)])["findings"]] == [(12, "error")]
    # found by a review: a class's constant, an annotated constant and an option that is on unless turned off are
    # set in the code too; a dataclass field (a user sets it) and a store_true option are a user's choice
    src.write_text(
        "import argparse\nimport dataclasses\nimport torch\n\n\n"
        "class Config:\n    USE_CUDA = True\n\n\n"
        "@dataclasses.dataclass\nclass Opts:\n    use_gpu: bool = True\n\n\n"
        "def f(x, opts: Opts):\n"
        "    if Config().USE_CUDA:\n        x = x.cuda()\n"  # 17
        "    if opts.use_gpu:\n        x = x.cuda()\n"  # ok
        "    return x\n\n\n"
        "ENABLE_CUDA: bool = True\nif ENABLE_CUDA:\n    y = torch.ones(1).cuda()\n"  # 25
        "p = argparse.ArgumentParser()\n"
        "p.add_argument('--enable_cuda', action='store_false')\n"
        "p.add_argument('--use_gpu', action='store_true')\n"
        "args = p.parse_args()\n"
        "if args.enable_cuda:\n    z = torch.ones(1).cuda()\n"  # 31
        "if args.use_gpu:\n    w = torch.ones(1).cuda()\n"  # ok
    )
    assert [(f["line"], f["severity"]) for f in scan([str(src)])["findings"]] == [
        (17, "error"), (25, "error"), (31, "error")]  # fmt: skip
    # a second review's: what a user sets stays a guard (a dataclass field read through a parameter, an option that a
    # False class constant of the same name does not touch, a strategy object picked by a GPU test); what the code
    # turns on does not (an annotated or decorated class's constant, a store_false option read through self.args, an
    # int option defaulting to 1)
    src.write_text(
        "import argparse\nimport dataclasses\nimport torch\n\n\n"
        "@dataclasses.dataclass\nclass Opts:\n    use_gpu: bool = False\n\n\n"
        "class CPUBackend:\n    use_cuda = False\n\n\n"
        "class Settings:\n    ON_GPU: bool = True\n\n\n"
        "def to_device(batch, use_gpu):\n    if use_gpu:\n        batch = batch.cuda()\n    return batch\n\n\n"  # ok
        "p = argparse.ArgumentParser()\n"
        "p.add_argument('--use_cuda', action='store_true')\n"
        "p.add_argument('--cpu', dest='enable_cuda', action='store_false')\n"
        "p.add_argument('--to_gpu', type=int, default=1)\n"
        "args = p.parse_args()\n"
        "if args.use_cuda:\n    a = torch.ones(1).cuda()\n"  # ok: asked
        "if Settings().ON_GPU:\n    b = torch.ones(1).cuda()\n"  # 33
        "if args.to_gpu:\n    c = torch.ones(1).cuda()\n"  # 35
        "\n\nclass Trainer:\n    def __init__(self, args):\n        self.args = args\n\n"
        "    def run(self, m):\n        if self.args.enable_cuda:\n            m = m.cuda()\n        return m\n"  # 44
    )
    assert [(f["line"], f["severity"]) for f in scan([str(src)])["findings"]] == [
        (33, "error"), (35, "error"), (44, "error")]  # fmt: skip


def test_the_test_script_of_a_cuda_extension_is_gpu_code_by_design(tmp_path):
    """Deformable-DETR's models/ops/test.py (and its copies in Mask2Former and the DETR family) compares the
    MSDeformAttn CUDA kernel with the PyTorch reference: GPU code by design, 20 FPs in rounds 10 and 12, labelled from
    the code. A test.py whose folder's setup.py builds no CUDAExtension is a project's script (often its evaluation
    entry point): still an error."""
    ops = tmp_path / "ops"
    ops.mkdir()
    (ops / "setup.py").write_text(
        "from setuptools import setup\nfrom torch.utils.cpp_extension import CUDAExtension\n"
        "setup(ext_modules=[CUDAExtension('MultiScaleDeformableAttention', ['src/vision.cpp'])])\n"
    )
    (ops / "test.py").write_text("import torch\n\nshapes = torch.as_tensor([(6, 4)]).cuda()\n")
    (f,) = scan([str(tmp_path)])["findings"]
    assert (f["line"], f["severity"]) == (3, "error")  # no project around the folder: it may be the project itself
    (tmp_path / "README.md").write_text("# a project\n")
    (f,) = scan([str(tmp_path)])["findings"]
    assert (f["line"], f["severity"]) == (3, "warning") and "CUDA extension" in f["message"]
    # a test.py at the root of what is scanned is the project's own script (its evaluation, often)
    (f,) = scan([str(ops)])["findings"]
    assert (f["line"], f["severity"]) == (3, "error")
    # a setup.py that only names CUDAExtension in a comment builds none
    (ops / "setup.py").write_text("from setuptools import setup\n# the CUDAExtension build was removed\nsetup()\n")
    (f,) = scan([str(tmp_path)])["findings"]
    assert (f["line"], f["severity"]) == (3, "error")


def test_cuda_code_a_rocm_build_never_compiles_is_not_reported(tmp_path):
    """causal-conv1d (bundled in Vim, round 14, labelled FP from the code) keeps its 32-bit-mask shuffle under
    `#ifndef USE_ROCM`, with HIP's own in the `#else`: no ROCm build compiles it. The macros torch's ROCm extension
    builds define for every file (USE_ROCM, __HIP_PLATFORM_AMD__) decide; a condition a ROCm build may take either way
    (an `||`, also on a continued line, a negated group, __HIPCC__ that a .cpp's host compiler lacks, the
    __HIP_PLATFORM_HCC__ that ROCm 6 dropped) keeps the finding: a second review's cases."""
    src = tmp_path / "common.h"
    src.write_text(
        "#ifndef USE_ROCM\n"
        "__device__ float sx(float v, int o) { return __shfl_xor_sync(uint32_t(-1), v, o); }\n"  # 2: never on ROCm
        "#else\n"
        "__device__ float sx(float v, int o) { return __shfl_xor(v, o); }\n"
        "#endif\n"
        "#if defined(__HIP_PLATFORM_AMD__)\n"
        "#define WARP 64\n"
        "#else\n"
        "#define WARP_SIZE 32\n"  # 9: the NVIDIA branch
        "#endif\n"
        "#if !defined(USE_ROCM) || defined(FORCE_32)\n"
        "#define MASK_ALL 0xffffffff\n"  # 12: a ROCm build with FORCE_32 compiles it
        "#endif\n"
        "__device__ int lane() { return threadIdx.x % 32; }\n"  # 14: everywhere
        "#if !(defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 700 && !defined(USE_ROCM))\n"
        "#define SHFL(v, o) __shfl_xor_sync(0xffffffff, v, o)\n"  # 16: always on ROCm
        "#endif\n"
        "#if (!defined(USE_ROCM) && CUDA_VERSION >= 9000) \\\n    || defined(USE_ROCM)\n"
        "#define SHFL2(v, o) __shfl_xor_sync(0xffffffff, v, o)\n"  # 20: on ROCm too
        "#endif\n"
        "#ifndef __HIPCC__\n#define WARP_SIZE 32\n#endif\n"  # 23: a .cpp's host compiler on ROCm
        "#ifdef __HIP_PLATFORM_HCC__\n#define W 64\n#else\n#define WARP_SIZE 32\n#endif\n"  # 28: ROCm 6 and later
    )
    assert [(f["line"], f["rule"]) for f in scan([str(src)])["findings"]] == [
        (12, "PC202"), (14, "PC201"), (16, "PC202"), (20, "PC202"), (23, "PC201"), (28, "PC201")]  # fmt: skip


def test_only_an_assert_that_stops_a_cpu_run_guards_the_rest(tmp_path):
    """A review found `assert args.cpu or torch.cuda.is_available()` counted as a guard: a CPU run with --cpu passes
    it and reaches the hard-coded GPU. An assert guards what follows only when it is false wherever there is no GPU."""
    src = tmp_path / "run.py"
    src.write_text(
        "import torch\n\n\n"
        "def main(args, rank):\n"
        "    assert args.cpu or torch.cuda.is_available()\n"
        "    a = torch.ones(1).cuda()\n"  # 6
        "    assert torch.cuda.is_available() and rank >= 0\n"
        "    b = torch.ones(1).cuda()\n"  # ok
        "\n\ndef other(rank):\n"
        "    assert rank < torch.cuda.device_count(), 'one GPU per rank'\n"
        "    return torch.ones(1).cuda()\n"  # ok
    )
    assert [(f["line"], f["severity"]) for f in scan([str(src)])["findings"]] == [(6, "error")]


def test_the_word_accelerator_is_no_gpu_test_but_a_users_accelerator_choice_is(tmp_path):
    """A review found any test naming `accelerator` counted as a GPU test (`if accelerator.is_main_process:`, HF
    Accelerate's main process; `if args.accelerator == "cpu":`). torch.accelerator's own tests still count; the user's
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
    assert [(f["line"], f["severity"]) for f in scan([str(src)])["findings"]] == [(6, "error"), (8, "error")]


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
