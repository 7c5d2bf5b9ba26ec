import json
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers.diagnose import RULES, diagnose, diagnose_lines, format_diagnosis, install, main

# Every real message of ../shared/ROCM_FACTS.md ("Real error messages"), and more seen in the wild: printed text only,
# never a sentence written to contain a rule's keyword (tests/corpus/errors.jsonl holds hundreds more, with sources).
REAL = [
    ("hipErrorNoBinaryForGpu: Unable to find code object for all current devices!", "arch_not_supported"),
    (
        "RuntimeError: HIP error: invalid device function\nFor debugging consider passing AMD_SERIALIZE_KERNEL=3",
        "arch_not_supported",
    ),
    ("torch.AcceleratorError: HIP error: hipErrorInvalidDeviceFunction", "arch_not_supported"),
    ("Illegal instruction (core dumped)", "illegal_instruction"),
    (
        "torch.OutOfMemoryError: HIP out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of "
        "191.98 GiB of which 1.2 GiB is free.",
        "out_of_memory",
    ),
    ("RuntimeError: No HIP GPUs are available", "device_permissions"),
    ("Unable to open /dev/kfd read-write: Permission denied", "device_permissions"),
    ("AssertionError: Torch not compiled with CUDA enabled", "wrong_wheel"),
    (
        "RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!",
        "device_mismatch",
    ),
    (
        "RuntimeError: Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is False.",
        "device_mismatch",
    ),
    ("RuntimeError: \"addmm_impl_cpu_\" not implemented for 'Half'", "dtype_unsupported"),
    ("ValueError: Invalid backend: 'rccl'", "distributed_backend"),
    (
        "torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:1970, unhandled system error",
        "distributed_backend",
    ),
    ("AssertionError: Unknown backend type rccl", "distributed_backend"),
    ("RuntimeError: Tensor on device meta is not on the expected device cpu!", "device_mismatch"),
    ("RuntimeError: Placeholder storage has not been allocated on MPS device!", "device_mismatch"),
    ("NotImplementedError: \"add_stub\" not implemented for 'Float8_e4m3fn'", "dtype_unsupported"),
    ("RuntimeError: linalg.inv: Low precision dtypes not supported. Got BFloat16", "dtype_unsupported"),
    (  # tests/corpus e1504: ATen's hipBLAS dtype check, under Inductor; the dtype is the cause, not Triton
        "torch._inductor.exc.InductorError: LoweringException: RuntimeError: bgemm input type at::Half and output "
        "type float is not supported for ROCm",
        "dtype_unsupported",
    ),
    ("ModuleNotFoundError: No module named 'flash_attn'", "missing_extension"),
    ("ModuleNotFoundError: No module named 'apex'", "missing_extension"),
    ("RuntimeError: CUDA error: no kernel image is available for execution on the device", "arch_not_supported"),
    (  # tests/corpus e499
        "OSError: /home/USER/.conda/envs/bits-env/bin/../lib/libstdc++.so.6: version `GLIBCXX_3.4.32' not found "
        "(required by /home/USER/Documents/temp/bitsandbytes/bitsandbytes/libbitsandbytes_hip_nohipblaslt.so)",
        "cxx_runtime",
    ),
    (  # tests/corpus e524
        "Please submit a full bug report, with preprocessed source (by using -freport-bug).\n"
        "Please include the complete backtrace with any bug report.",
        "compiler_crash",
    ),
    ("MIOpen(HIP): Warning [SQLiteBase] Missing system database file: gfx90a68.kdb", "miopen_kdb"),
    ("miopenStatusUnknownError", "miopen"),
    # Lesson 08's dependencies, as printed (sources: flash-attn csrc/flash_attn/flash_api.cpp, Dao-AILab/flash-attention
    # issues 933 and 966, PyTorch aten/src/ATen/native/transformers/cuda/sdp_utils.cpp, ROCm/TheRock#1364, xformers
    # ops/fmha/dispatch.py and common.py, NVIDIA/apex#1593 and apex/optimizers/fused_adam.py, bitsandbytes#828,
    # #232 and #1508, gpustat#90).
    ("RuntimeError: FlashAttention only supports Ampere GPUs or newer.", "attention_kernel"),
    ("RuntimeError: FlashAttention forward only supports head dimension at most 256", "attention_kernel"),
    ("RuntimeError: CK only supports head dimension at most 256", "attention_kernel"),
    ("RuntimeError: No available kernel. Aborting execution.", "attention_kernel"),
    (
        "RuntimeError: No viable backend for scaled_dot_product_attention was found. This is likely due to turning "
        "off both the math kernel and the fused kernels.",  # torch 2.14 on a CPU, sdpa_kernel(EFFICIENT_ATTENTION)
        "attention_kernel",
    ),
    (
        "UserWarning: Flash attention was not compiled for current AMD GPU architecture. Attempting to run on "
        "architecture gfx1151 (Triggered internally at /pytorch/aten/src/ATen/native/transformers/hip/sdp_utils.cpp)",
        "attention_kernel",
    ),
    (
        "Flash Efficient attention on Current AMD GPU is still experimental. Enable it with "
        "TORCH_ROCM_AOTRITON_ENABLE_EXPERIMENTAL=1.",
        "attention_kernel",
    ),
    ("UserWarning: Torch was not compiled with flash attention.", "attention_kernel"),
    (
        "NotImplementedError: No operator found for `memory_efficient_attention_forward` with inputs:\n"
        "     query       : shape=(1, 4096, 1, 512) (torch.float32)\n"
        "`cutlassF` is not supported because:\n    xFormers wasn't build with CUDA support",
        "attention_kernel",
    ),
    ("ModuleNotFoundError: No module named 'flash_attn_2_cuda'", "missing_extension"),
    (
        "ImportError: /usr/local/lib/python3.10/dist-packages/flash_attn_2_cuda.cpython-310-x86_64-linux-gnu.so: "
        "undefined symbol: _ZN3c104cuda9SetDeviceEi",
        "missing_extension",
    ),
    ("ModuleNotFoundError: No module named 'fused_layer_norm_cuda'", "missing_extension"),
    ("RuntimeError: apex.optimizers.FusedAdam requires cuda extensions", "missing_extension"),
    (
        "RuntimeError: CUDA Setup failed despite GPU being available. Please run the following command to get "
        "more information:",
        "missing_extension",
    ),
    (
        "OSError: /usr/local/lib/python3.8/dist-packages/bitsandbytes/libbitsandbytes_cuda114.so: cannot open "
        "shared object file: No such file or directory",
        "missing_extension",
    ),
    ("RuntimeError: ROCm Setup failed despite ROCm being available.", "missing_extension"),
    ("pynvml.NVMLError_LibraryNotFound: NVML Shared Library Not Found", "missing_extension"),
    # Categories added with the real-error corpus: the line diagnose keys on, from tests/corpus/errors.jsonl.
    # e014: https://github.com/ROCm/pytorch/issues/2411
    (
        "2025-07-24T19:49:48.0375552Z ImportError: libamdhip64.so.7: cannot open shared object file"
        ": No such file or directory",
        "shared_lib_load",
    ),
    # e069: https://github.com/ROCm/legacy-rocm-build/issues/5000
    (
        "/usr/local/lib/python3.10/dist-packages/torch/cuda/__init__.py:736: UserWarning: Can't ini"
        "tialize amdsmi - Error code: 34",
        "wsl_runtime",
    ),
    # e005: https://github.com/ROCm/legacy-rocm-build/issues/5051
    (
        "Memory access fault by GPU node-1 (Agent handle: 0x55f8b54eec30) on address 0x7f2a53193000"
        ". Reason: Page not present or supervisor privilege.",
        "gpu_memory_fault",
    ),
    # e077: https://github.com/ROCm/rocBLAS/issues/1300
    (
        "rocBLAS error: Cannot read /opt/rocm/rocblas/lib/rocblas/library/TensileLibrary.dat: No su"
        "ch file or directory",
        "blas_library",
    ),
    # e213: https://github.com/huggingface/transformers/issues/24451
    (
        "1294             raise ValueError(\"Your setup doesn't support bf16/(cpu, tpu, neuroncore)."
        ' You need torch>=1.10")',
        "nvidia_only_check",
    ),
    # e051: https://github.com/ROCm/TheRock/issues/1312
    ("RuntimeError: PyTorch was compiled without NumPy support", "numpy_compat"),
    # e143: https://github.com/rusty1s/pytorch_scatter/pull/498
    (
        "static assertion failed due to requirement 'sizeof(unsigned int) == 8': The mask must be a 64-bit integer",
        "extension_build",
    ),
    # e183: https://github.com/vllm-project/vllm/issues/49778
    ("triton.runtime.errors.OutOfResources: out of resource: shared memory,", "triton_rocm"),
    # e649: https://github.com/ROCm/hipBLAS/issues/603 (a hip* library built for NVIDIA GPUs: said, as unknown)
    (
        "In file included from /home/torrance/hipBLAS/library/src/nvidia_detail/hipblas.cpp:27:\n"
        '/usr/local/cuda/include/cublas_v2.h:59:2: error: #error "It is an error to include both cublas.h and '
        'cublas_v2.h"',
        "unknown",
    ),
]


@pytest.mark.parametrize("text, category", REAL)
def test_real_messages(text, category):
    d = diagnose(text)
    assert d.category == category, (text, d)
    assert d.fix and d.source.startswith("https://") and d.matched


def test_every_category_is_covered():
    assert {r.category for r in RULES} <= {c for _, c in REAL}


def test_root_cause_in_the_middle_of_a_traceback_wins():
    log = """Traceback (most recent call last):
  File "train.py", line 12, in <module>
    model = model.to("cuda")
hipErrorNoBinaryForGpu: Unable to find code object for all current devices!
  File "/opt/conda/lib/python3.12/site-packages/torch/cuda/__init__.py", line 372, in _lazy_init
RuntimeError: No HIP GPUs are available
"""
    d = diagnose(log)
    assert d.category == "arch_not_supported" and "hipErrorNoBinaryForGpu" in d.matched

    oom_then_nccl = (
        "torch.OutOfMemoryError: HIP out of memory\n...\n[rank1] Watchdog caught collective operation timeout"
    )
    assert diagnose(oom_then_nccl).category == "out_of_memory"


def test_exceptions_are_accepted():
    try:
        import flash_attn  # noqa: F401  # portcheck: ignore=PC113
    except ImportError as e:
        assert diagnose(e).category == "missing_extension"
    assert diagnose(RuntimeError("Expected all tensors to be on the same device")).category == "device_mismatch"

    class Broken(Exception):
        def __str__(self):
            raise ValueError("no")

    assert diagnose(Broken()).category == "unknown"


def test_unknown_has_generic_steps():
    d = diagnose("something else entirely")
    assert d.category == "unknown" and any("doctor" in s for s in d.fix)
    assert any("AMD_SERIALIZE_KERNEL=3" in s for s in d.fix)
    assert "[unknown]" in format_diagnosis(d)


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.text(), st.binary(), st.text(alphabet=st.characters(), min_size=1000, max_size=5000)))
def test_never_raises(data):
    assert diagnose(data).category


def test_ten_thousand_random_inputs():
    import random

    rng = random.Random(0)
    for i in range(10_000):
        n = rng.choice([0, 1, 10, 200, 3000])
        data = (
            bytes(rng.getrandbits(8) for _ in range(n))
            if i % 2
            else "".join(
                chr(rng.randrange(0x110000) if rng.random() < 0.1 else rng.randrange(32, 127)) for _ in range(n)
            )
        )
        assert diagnose(data).category


def test_huge_input():
    text = "x" * 5_000_000 + "\nRuntimeError: No HIP GPUs are available\n" + "y" * 1000
    assert diagnose(text).category == "device_permissions"


def test_cli_stdin_file_json(tmp_path, capsys):
    log = tmp_path / "err.log"
    log.write_text("RuntimeError: No HIP GPUs are available\n")
    assert main([str(log), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["category"] == "device_permissions"
    assert main([str(tmp_path / "missing.log")]) == 2
    assert "cannot read" in capsys.readouterr().err
    r = subprocess.run(
        [sys.executable, "-m", "helpers.diagnose"], input=b"Illegal instruction (core dumped)", capture_output=True
    )
    assert r.returncode == 0 and b"[illegal_instruction]" in r.stdout


def test_diagnose_imports_no_torch():
    code = "import sys, helpers.diagnose, helpers.portcheck; print('torch' in sys.modules)"
    try:
        import helpers.portcheck  # noqa: F401
    except ImportError:
        code = code.replace(", helpers.portcheck", "")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


def test_install_outside_ipython(monkeypatch):
    import IPython

    monkeypatch.setattr(IPython, "get_ipython", lambda: None)  # a plain interpreter (whatever ran before in this one)
    assert install() is False


def test_install_in_ipython(capsys):
    from IPython import get_ipython
    from IPython.testing.globalipapp import start_ipython

    ip = start_ipython() or get_ipython()  # None when this process started the test shell already
    assert install() is True
    ip.run_cell("raise RuntimeError('No HIP GPUs are available')")
    out = capsys.readouterr()
    assert "helpers.diagnose" in out.out + out.err and "device_permissions" in out.out + out.err


def test_wrong_wheel_fix_never_pip_installs_torch_in_the_image():
    from helpers.hardware import ROCM_WHEEL_INDEX

    fix = diagnose("AssertionError: Torch not compiled with CUDA enabled").fix
    container = next(f for f in fix if "rocm/pytorch container" in f)
    assert "never `pip install torch`" in container and "--index-url" not in container
    assert any(ROCM_WHEEL_INDEX in f and "bare metal" in f.lower() for f in fix)
    assert "rocm6.4" not in " ".join(fix)


def test_miopen_kdb_warning_is_a_missing_package_not_a_find_mode():
    d = diagnose(
        "MIOpen(HIP): Warning [SQLiteBase] Missing system database file: gfx942304.kdb Performance may degrade"
    )
    assert d.category == "miopen_kdb" and "kdb" in d.fix[0] and "FIND_MODE" not in " ".join(d.fix)


@pytest.mark.parametrize("text, category", REAL)
def test_streaming_gives_the_same_answer(text, category):
    """diagnose_lines (files, stdin: line by line) agrees with diagnose (the whole text), line included."""
    from helpers.diagnose import diagnose_lines

    noisy = "step 1: loss 2.31\n" * 50 + text + "\nstep 2: loss 2.2\n" * 50
    whole, streamed = diagnose(noisy), diagnose_lines(noisy.encode().splitlines(keepends=True))
    assert (streamed.category, streamed.matched) == (whole.category, whole.matched) and whole.category == category


def test_streaming_prefers_the_root_cause_anywhere_in_a_long_log():
    from helpers.diagnose import diagnose_lines

    def log():  # 200,000 lines: the symptom early, the root cause (an earlier rule) near the end
        yield b"RuntimeError: No HIP GPUs are available\n"
        for i in range(200_000):
            yield f"[rank0] step {i} loss 1.0\n".encode()
        yield b"hipErrorNoBinaryForGpu: Unable to find code object for all current devices!\n"

    d = diagnose_lines(log())
    assert d.category == "arch_not_supported" and d.matched.startswith("hipErrorNoBinaryForGpu")


def test_case_and_unicode_do_not_change_the_answer():
    """Matching ignores case; text whose lower-casing changes length (e.g. 'İ') takes the slow, exact path."""
    assert diagnose("runtimeerror: no hip gpus are available").category == "device_permissions"
    d = diagnose("İstanbul cluster: RuntimeError: HIP out of memory. Tried to allocate 2.00 GiB")
    assert d.category == "out_of_memory" and d.matched.startswith("İstanbul")


def test_unknown_says_what_to_search_and_which_facts_to_collect():
    d = diagnose("INFO starting\nValueError: frobnicator exploded at step 3\nINFO bye")
    assert d.category == "unknown" and d.matched == ""
    assert "frobnicator exploded" in d.fix[0]
    assert any("helpers.doctor --json" in f for f in d.fix) and any("torch.utils.collect_env" in f for f in d.fix)
    assert diagnose("all good").fix[0].startswith("Search the issue trackers for the error line")


def test_cli_reads_a_file_line_by_line(tmp_path, monkeypatch):
    """The CLI never read()s a whole log: it iterates the file (a 50 MB log stays out of memory)."""
    import builtins

    import helpers.diagnose as dg

    log = tmp_path / "big.log"
    log.write_bytes(b"x\n" * 1000 + b"HIP out of memory. Tried to allocate 2.00 GiB\n")
    real_open, reads = builtins.open, []

    class NoRead:
        def __init__(self, f):
            self.f = f

        def __enter__(self):
            return self

        def __exit__(self, *a):
            self.f.close()

        def __iter__(self):
            return iter(self.f)

        def read(self, *a):
            reads.append(a)
            return self.f.read(*a)

    monkeypatch.setattr(builtins, "open", lambda *a, **k: NoRead(real_open(*a, **k)) if str(a[0]) == str(log)
                        else real_open(*a, **k))  # fmt: skip
    assert dg.main([str(log), "--json"]) == 0 and reads == []


def test_lower_pattern_lowers_literals_and_keeps_escapes():
    from helpers.diagnose import _lower_pattern

    assert _lower_pattern(r"HIP\Serror\\D(X)\d+") == r"hip\Serror\\d(x)\d+"
    assert _lower_pattern("") == ""


def test_streaming_edge_cases():
    from helpers.diagnose import diagnose_lines

    # Invalid UTF-8 (a binary blob in a log) is replaced, not fatal.
    assert diagnose_lines([b"\xff\xfe RuntimeError: No HIP GPUs are available\n"]).category == "device_permissions"
    # Items without a newline are still separate lines: a pattern never spans two of them.
    assert diagnose_lines(["RuntimeError: No HIP ", "GPUs are available"]).category == "unknown"
    d = diagnose_lines(["RuntimeError: No HIP GPUs are available"])
    assert (d.category, d.matched) == ("device_permissions", "RuntimeError: No HIP GPUs are available")
    # Nothing known: the search key is the last error-like line among the last 200, as diagnose() does.
    tail_200 = ["ValueError: frobnicator exploded\n"] + ["step\n"] * 199
    for lines in (tail_200, tail_200 + ["step\n"]):
        d, whole = diagnose_lines(lines), diagnose("".join(lines))
        assert d.category == "unknown" and d.fix == whole.fix
    assert "frobnicator" in diagnose_lines(tail_200).fix[0]
    assert "frobnicator" not in diagnose_lines(tail_200 + ["step\n"]).fix[0]


def test_streaming_stops_at_the_first_rule():
    """Illegal instruction is the first rule: nothing later can win, so the rest of the log is never read (beyond
    the _SPAN characters after the match that a pattern spanning lines may look at)."""
    from helpers.diagnose import _SPAN, diagnose_lines

    def log():
        yield b"start\n"
        yield b"Illegal instruction (core dumped)\n"  # 40 bytes so far
        for _ in range(_SPAN // 40 + 2):  # the chunk of 64 is full after each line; _SPAN + 80 bytes in all
            yield b"y" * 39 + b"\n"
        raise AssertionError("read past a first-rule match")

    d = diagnose_lines(log(), chunk_bytes=64)
    assert (d.category, d.matched) == ("illegal_instruction", "Illegal instruction (core dumped)")


def test_a_diagnosis_carries_its_rule():
    d = diagnose("Illegal instruction (core dumped)")
    assert (d.category, d.title, d.cause, d.fix, d.source) == (RULES[0].category, RULES[0].title, RULES[0].cause,
                                                               list(RULES[0].fix), RULES[0].source)  # fmt: skip


def test_format_diagnosis_text():
    from helpers.diagnose import Diagnosis

    d = Diagnosis("miopen", "MIOpen failed", "a cause", ["first step", "second step"], "https://x", "the line")
    assert format_diagnosis(d).splitlines() == [
        "[miopen] MIOpen failed", "  matched: the line", "  cause:   a cause", "  fix:", "    1. first step",
        "    2. second step", "  source:  https://x"]  # fmt: skip
    assert "matched:" not in format_diagnosis(Diagnosis("unknown", "t", "c"))


def test_install_handler_shows_the_traceback_then_the_diagnosis(monkeypatch, capsys):
    import sys

    import IPython

    class Shell:
        def set_custom_exc(self, types, handler):
            self.types, self.handler = types, handler

        def showtraceback(self, exc_tuple=None, tb_offset=None):
            self.shown = (exc_tuple, tb_offset)

    shell = Shell()
    monkeypatch.setattr(IPython, "get_ipython", lambda: shell)
    assert install() is True and shell.types == (Exception,)
    err = RuntimeError("No HIP GPUs are available")
    shell.handler(shell, RuntimeError, err, None, tb_offset=2)
    assert shell.shown == ((RuntimeError, err, None), 2)
    out = capsys.readouterr().out
    assert out.startswith("\nhelpers.diagnose:\n[device_permissions]")
    shell.handler(shell, ValueError, ValueError("frobnicator"), None)
    assert shell.shown[1] is None and capsys.readouterr().out == ""  # unknown: the traceback alone
    monkeypatch.setitem(sys.modules, "IPython", None)  # IPython not installed
    assert install() is False


def test_cli_stdin_and_binary_files(tmp_path, monkeypatch, capsys):
    import io
    import sys

    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"Illegal instruction (core dumped)\n")))
    assert main([]) == 0 and capsys.readouterr().out.startswith("[illegal_instruction]")
    log = tmp_path / "bin.log"
    log.write_bytes(b"\xff\xfe\x00 garbage\nRuntimeError: No HIP GPUs are available\n")
    assert main([str(log), "--json"]) == 0
    out = capsys.readouterr().out
    assert out.startswith('{\n  "category": "device_permissions",') and json.loads(out)["matched"]


@pytest.mark.parametrize("module, usage, words", [
    ("helpers.diagnose", "usage: python -m helpers.diagnose [-h] [--json] [file]",
     ["Explain a PyTorch/ROCm error.", "file holding the error or log (default: stdin)",
      "print the diagnosis as JSON"]),
    ("helpers.doctor", "usage: python -m helpers.doctor [-h] [--json]",
     ["Is this machine ready for the course?", "machine-readable output (schema in the module docstring)"]),
])  # fmt: skip
def test_command_line_help(capsys, module, usage, words):
    import importlib

    with pytest.raises(SystemExit) as e:
        importlib.import_module(module).main(["--help"])
    out = capsys.readouterr().out
    assert e.value.code == 0 and out.splitlines()[0] == usage
    text = f" {' '.join(out.split())} "
    assert all(f" {w} " in text for w in words), out


def test_an_unknown_error_says_exactly_which_line_to_search_for():
    from helpers.diagnose import UNKNOWN

    line = "SomeLibError: " + "x" * 400  # no rule knows it; longer than the 200 characters quoted
    d = diagnose(f"step 1\n{line}\nstep 2")
    assert d.category == "unknown" and (d.title, d.cause, d.source) == (UNKNOWN.title, UNKNOWN.cause, UNKNOWN.source)
    trackers = "(github.com/ROCm/ROCm/issues, github.com/pytorch/pytorch/issues)"
    search = f"Search the issue trackers for: {line[:200]!r} {trackers}"
    assert d.fix == [search, *UNKNOWN.fix[1:]] and d.matched == ""


def test_the_matched_line_is_quoted_up_to_300_characters():
    line = "torch.OutOfMemoryError: HIP out of memory. " + "y" * 400
    assert diagnose(f"epoch 3\n{line}\n").matched == line[:300]


def test_bytes_are_read_as_utf8_even_when_some_are_not():
    raw = b"\xff\xfe garbled prefix\ntorch.OutOfMemoryError: HIP out of memory. Tried to allocate 2.00 GiB\n"
    d = diagnose(raw)
    assert d.category == "out_of_memory" and d.matched.startswith("torch.OutOfMemoryError")


def test_an_exception_is_read_with_its_traceback():
    from helpers.diagnose import _text

    def load_extension():
        raise ImportError("libamdhip64.so.6: cannot open shared object file: No such file or directory")

    try:
        load_extension()
    except ImportError as e:
        d, text = diagnose(e), _text(e)
    assert d.category == "shared_lib_load"
    assert d.matched.startswith("raise ImportError(")  # the traceback is read: the source line comes first
    lines = text.splitlines()
    assert lines[0] == "Traceback (most recent call last):" and lines[-1].startswith("ImportError: libamdhip64")
    assert all(ln.startswith(("  File ", "    ", "ImportError: ")) for ln in lines[1:]), lines


def test_the_matched_line_is_whole_at_the_end_of_the_text_and_after_letters_that_grow_when_lowered(monkeypatch):
    import helpers.diagnose as dg

    assert diagnose("RuntimeError: HIP out of memory").matched == "RuntimeError: HIP out of memory"  # no newline
    # "İ".lower() is two characters: such a text is searched case-insensitively as it is, so positions line up
    text = "İİİİİİİİ HIP out of memory\nab\ncd"
    assert diagnose(text).matched == "İİİİİİİİ HIP out of memory"
    monkeypatch.setattr(dg, "_SLOW", [(rule, []) for rule, _ in dg._SLOW])  # plain ASCII never needs the slow table
    assert diagnose("RuntimeError: HIP out of memory").category == "out_of_memory"


def test_a_name_alone_is_a_last_resort_that_says_so():
    # torch.compile with a Triton older than the torch release expects (a real message)
    weak = diagnose("ImportError: cannot import name 'triton_key' from 'triton.compiler.compiler'")
    assert weak.category == "triton_rocm" and weak.cause.startswith("Only a name matched: judge the line yourself.")
    assert weak.matched == "ImportError: cannot import name 'triton_key' from 'triton.compiler.compiler'"
    strong = diagnose("triton.compiler.errors.CompilationError: at 1:0:")
    assert strong.category == "triton_rocm" and not strong.cause.startswith("Only a name")
    assert diagnose("RuntimeError: NCCL communicator was aborted on rank 0.").cause.startswith("Only a name matched")


def test_a_name_on_a_line_that_reports_no_error_is_no_diagnosis():
    # a backend list that ComfyUI prints at start-up (e667): Triton is named, nothing failed
    info = "Found comfy_kitchen backend triton: {'available': True, 'disabled': True, 'unavailable_reason': None}"
    assert diagnose(info).category == "unknown"
    assert diagnose(info + "\nRuntimeError: triton kernel launch failed").category == "triton_rocm"
    # vLLM names its NCCL wrapper PyNcclCommunicator; on a line its logger marks ERROR, that is a last resort
    assert diagnose("ERROR 05-14 [utils.py:238]     self.pynccl_comm = PyNcclCommunicator(").cause.startswith(
        "Only a name matched"
    )


def test_a_build_for_nvidia_gpus_is_said_to_be_no_rocm_problem():
    # hipBLAS built for its NVIDIA backend (e649): the compile error is not a failed port to ROCm
    log = (
        "[ 60%] Building CXX object library/src/CMakeFiles/hipblas.dir/nvidia_detail/hipblas.cpp.o\n"
        "In file included from /home/u/hipBLAS/library/src/nvidia_detail/hipblas.cpp:27:\n"
        '/usr/local/cuda/include/cublas_v2.h:59:2: error: #error "It is an error to include both cublas.h and '
        'cublas_v2.h"'
    )
    d = diagnose(log)
    assert d.category == "unknown" and d.title.startswith("HIP code built for another platform than ROCm (NVIDIA")
    assert "nvidia_detail" in d.matched
    # the same CUDA header error in a HIP source (e151's form) is a port that picked up CUDA's headers
    ported = "In file included from /src/kernels.hip:21:\n/usr/local/cuda/include/vector_types.h:175:27: error: x"
    assert diagnose(ported).category == "extension_build"


def test_an_error_from_chipstar_is_no_rocm_error_whatever_hip_error_it_names():
    # chipStar runs HIP on SPIR-V (here an Intel GPU, e810): its hipErrorOutOfMemory is not ROCm's out of memory
    log = "CHIP error : hipErrorOutOfMemory (CL_OUT_OF_RESOURCES) in CHIPBackendOpenCL.cc:1693:launchImpl"
    d = diagnose(log)
    assert d.category == "unknown" and "chipStar" in d.cause and "CHIPBackendOpenCL.cc" in d.matched
    assert diagnose("RuntimeError: HIP error: hipErrorOutOfMemory").category == "out_of_memory"


def test_blas_status_names_the_library_and_a_bf16_gemm_the_dtype():
    call = "RuntimeError: CUDA error: CUBLAS_STATUS_NOT_SUPPORTED when calling `cublasGemmEx(handle, a, {t}, lda)`"
    assert diagnose(call.format(t="CUDA_R_16F")).category == "blas_library"
    assert diagnose(call.format(t="CUDA_R_16BF")).category == "dtype_unsupported"


def test_a_pattern_that_spans_lines_is_found_across_a_chunk_border():
    # e620's form: a HIP launch failure raised from F.conv2d is a MIOpen kernel; the two lines are 300 bytes apart
    lines = ["    return F.conv2d(\n", *["        ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n"] * 8]
    lines.append("torch.AcceleratorError: HIP error: unspecified launch failure\n")
    assert diagnose("".join(lines)).category == "miopen"
    for chunk in (16, 64, 100, 256):
        assert diagnose_lines(lines, chunk_bytes=chunk).category == "miopen", chunk


def test_an_environment_report_of_a_torch_without_rocm_is_a_last_resort():
    report = "PyTorch version: 2.0.1+cu118\nCUDA used to build PyTorch: 11.8\nROCM used to build PyTorch: N/A\n"
    d = diagnose(report)
    assert d.category == "wrong_wheel" and d.cause.startswith("Only an environment report matched")
    assert diagnose(report.replace("N/A", "6.4.43482-0f2d60242")).category == "unknown"
    # anything more specific wins over it: here the out-of-memory error
    assert diagnose(report + "torch.OutOfMemoryError: HIP out of memory.").category == "out_of_memory"


def test_the_gpu_check_quoted_in_a_command_line_is_not_its_failure():
    quoted = 'Command: "python" -c "import torch; assert torch.cuda.is_available(), \'Torch is not able to use GPU\'"'
    assert diagnose(quoted + "\nError code: 134").category == "unknown"
    raised = "AssertionError: Torch is not able to use GPU; add --skip-torch-cuda-test to COMMANDLINE_ARGS"
    assert diagnose(raised).category == "wrong_wheel"


def test_a_windows_access_violation_is_a_library_mismatch_only_as_an_exit_code():
    assert diagnose("Process exited with code 3221225477 / 0xC0000005").category == "shared_lib_load"
    # a crash dump that shows where it crashed (torch's CPU code here) is no library mismatch
    dump = "Exception Code: 0xC0000005\n0x00007FF9CABA9BB4, C:\\venv\\Lib\\site-packages\\torch\\lib\\torch_cpu.dll"
    assert diagnose(dump).category == "unknown"


def test_no_cuda_gpus_from_a_rocm_build_means_it_sees_no_gpu():
    # a CUDA build on an AMD machine says it; a ROCm build says it too, raised from c10/hip (e822)
    assert diagnose("RuntimeError: No CUDA GPUs are available").category == "wrong_wheel"
    rocm = "No CUDA GPUs are available\nException raised from device_count_ensure_non_zero at c10/hip/HIPFunctions.cpp"
    assert diagnose(rocm).category == "device_permissions"


def test_a_traceback_through_hipify_is_a_failed_build_only_with_its_exception():
    frames = '  File "/src/torch/utils/hipify/hipify_python.py", line 1008, in hipify\n    clean_ctx=clean_ctx)\n'
    assert diagnose(frames).category == "unknown"  # cut off before the exception: the cause is not shown
    assert diagnose(frames + "RecursionError: maximum recursion depth exceeded").category == "extension_build"


def test_a_rocm_compiler_tool_built_against_another_llvm_is_said_to_be_no_port():
    # comgr built from source against another LLVM (e878): not the code being ported
    err = "comgr-isa-metadata.def:82:60: error: 'EF_AMDGPU_MACH_AMDGCN_GFX1036' is not a member of 'llvm::ELF'"
    d = diagnose(err)
    assert d.category == "unknown" and d.title == "A ROCm component built against another LLVM release"


def test_nccl_dll_on_windows_is_no_distributed_error():
    # ZLUDA's launcher checks for its nccl.dll stand-in (e862); Windows has no NCCL backend
    zluda = "[ERROR] Detected ZLUDA version: expected 3.9, but nccl.dll is missing. Likely blocked by AV"
    assert diagnose(zluda).category == "unknown"
    assert diagnose("[ERROR] NCCL communicator was aborted").category == "distributed_backend"


def test_a_gpu_hang_is_said_to_be_unknown_and_its_later_page_faults_do_not_count():
    # dmesg of a GPU hang (e954): the driver resets the GPU; the page faults logged after it follow from the reset
    log = (
        "kernel: [drm:amdgpu_job_timedout [amdgpu]] *ERROR* ring gfx_0.0.0 timeout, signaled seq=20268\n"
        "kernel: amdgpu 0000:03:00.0: amdgpu: GPU reset begin!\n"
        "kernel: amdgpu 0000:03:00.0: amdgpu: [gfxhub] page fault (src_id:0 ring:40 vmid:8 pasid:32779)"
    )
    d = diagnose(log)
    assert d.category == "unknown" and d.title == "The GPU hung and the kernel driver reset it"
    assert diagnose(log.split("\n")[2]).category == "gpu_memory_fault"  # a page fault alone is one


def test_a_folder_named_triton_is_no_name_match():
    # aiter's tests live in op_tests/triton/ (e960): an import error there names a folder, not the Triton compiler
    assert diagnose("ImportError while importing test module '/workspace/op_tests/triton/test_norm.py'.").category == (
        "unknown"
    )
    assert diagnose("ImportError: cannot import name 'triton_key' from 'triton.compiler.compiler'").category == (
        "triton_rocm"
    )


@pytest.mark.parametrize("header, category", [
    ("absl/strings/has_absl_stringify.h", "unknown"),  # a host library: its development package is missing
    ("boost/filesystem.hpp", "unknown"),
    ("Python.h", "unknown"),
    ("cuda_fp16.h", "extension_build"),  # CUDA, HIP, ROCm or torch headers: a port's build problem
    ("cuda_runtime.h", "extension_build"),
    ("hip/hip_runtime_api.h", "extension_build"),
    ("ATen/ATen.h", "extension_build"),
    ("rocblas/rocblas.h", "extension_build"),
    ("ck/ck.hpp", "extension_build"),
    ("thrust/device_vector.h", "extension_build"),
])  # fmt: skip
def test_a_missing_header_is_a_port_problem_only_when_it_is_a_gpu_or_torch_header(header, category):
    d = diagnose(f"src/ops.cpp:6:10: fatal error: {header}: No such file or directory\ncompilation terminated.")
    assert d.category == category
    if category == "unknown":
        assert d.title.startswith("A header of a library other than CUDA, HIP or torch") and "development" in d.fix[0]


def test_the_four_ways_of_installing_get_their_own_advice():
    """ROCm from pip has no /opt/rocm (extensions need rocm[devel] and rocm-sdk init, pytorch#196503); AMD's
    multi-arch wheels take a GPU's kernels from its device extra; ROCm 7.14+ installs live in /opt/rocm/core-X.Y."""
    rocm_home = diagnose("OSError: ROCM_HOME environment variable is not set. Please set it to your ROCm install root.")
    assert rocm_home.category == "extension_build" and any('pip install "rocm[devel]"' in f for f in rocm_home.fix)
    image = diagnose("torch.AcceleratorError: CUDA error: device kernel image is invalid")  # TheRock#6997's text
    assert image.category == "arch_not_supported" and any("torch[device-gfxNNNN]" in f for f in image.fix)
    lib = diagnose("ImportError: libamdhip64.so.7: cannot open shared object file: No such file or directory")
    assert lib.category == "shared_lib_load" and any("/opt/rocm/core-X.Y" in f for f in lib.fix)


def test_coloured_tracebacks_read_like_plain_ones(tmp_path):
    """Python 3.13+ colours tracebacks where FORCE_COLOR is set (ipykernel sets it for a notebook's child processes):
    the escape codes sit between the words the rules read. Text, bytes and a log read line by line alike."""
    plain = "RuntimeError: HIP error: invalid device function\nFor debugging consider passing AMD_SERIALIZE_KERNEL=3"
    coloured = ("\x1b[1;35mRuntimeError\x1b[0m: \x1b[35mHIP error: invalid device function\x1b[0m\n"
                "For debugging consider passing AMD_SERIALIZE_KERNEL=3")  # fmt: skip
    want = diagnose(plain)
    assert want.category == "arch_not_supported"
    assert diagnose(coloured) == want and diagnose(coloured.encode()) == want
    assert diagnose_lines(coloured.splitlines(keepends=True)) == want
    assert (
        diagnose("\x1b[1;35mIndexError\x1b[0m: \x1b[35mboom\x1b[0m")
        .fix[0]
        .startswith("Search the issue trackers for: 'IndexError: boom'")
    )


def test_who_printed_the_error_decides_its_category():
    """The same words mean another failure depending on who prints them: an MLIR error at a .py location is Triton's
    compiler (no C++ compiler compiles Python), an error in a header of comgr's run-time include folder is MIOpen
    compiling its own kernel, lld's "undefined symbol" is a build's link (not a library loaded at import), LLVM's
    "out of memory" is host memory, and pip naming the pytorch-triton-rocm package is no Triton failure."""
    triton = diagnose("/w/kernels/attn.py:242:0: error: Failures have been detected while processing an MLIR pass")
    assert triton.category == "triton_rocm"
    assert diagnose("/w/csrc/attn.cpp:242:10: error: use of undeclared identifier '__shfl_xor_sync'").category == (
        "extension_build"
    )
    miopen = diagnose("/tmp/comgr-4a1b2c/include/miopen_utility.hpp:12:10: fatal error: 'x.h' file not found")
    assert miopen.category == "miopen"
    assert diagnose("/tmp/comgr-4a1b2c/include/hiprtc_runtime.h:1447:46: error: no template").category != "miopen"
    assert diagnose("ld.lld: error: undefined symbol: hipblasCreate").category == "extension_build"
    assert diagnose("ImportError: ext.so: undefined symbol: hipblasCreate").category == "shared_lib_load"
    assert diagnose("LLVM ERROR: out of memory").category == "unknown"
    assert diagnose("torch.OutOfMemoryError: HIP out of memory. Tried to allocate 2.00 GiB").category == (
        "out_of_memory"
    )
    pip = "ERROR: Could not find a version that satisfies the requirement pytorch-triton-rocm==2.2.0 (from torch)"
    assert diagnose(pip).category == "unknown"


def test_an_old_glibc_and_an_old_kernel_driver_are_named():
    glibc = diagnose("OSError: /lib/x86_64-linux-gnu/libc.so.6: version `GLIBC_2.32' not found (required by x.so)")
    assert glibc.category == "cxx_runtime" and any("ldd --version" in f for f in glibc.fix)
    driver = diagnose("HSA Error:  Incompatible kernel and userspace, AMD Radeon VII disabled. Upgrade amdgpu.")
    assert driver.category == "device_permissions" and "kernel driver" in driver.cause
