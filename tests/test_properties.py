"""Property tests that say something (hypothesis): each states a law the tools must keep on inputs nobody wrote."""

import dataclasses
import json
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from helpers.diagnose import diagnose, diagnose_lines
from helpers.doctor import report, run_checks
from helpers.portcheck import scan_python
from tests.conftest import MACHINES
from tests.test_doctor import GiB, machine

ROWS = [json.loads(line) for line in (Path(__file__).parent / "corpus" / "errors.jsonl").read_text().splitlines()]
KNOWN = [r for r in ROWS if r["split"] == "dev" and r["category"] != "unknown"]

# Lines a real log holds around an error: progress, pip, launcher and training chatter (no error in them).
NOISE = st.one_of(
    st.builds(
        "Epoch {}/{}: loss={:.4f} lr={:.1e}".format,
        st.integers(0, 99),
        st.integers(1, 99),
        st.floats(0, 10),
        st.floats(1e-6, 1),
    ),  # fmt: skip
    st.builds("Collecting {} ({} kB)".format, st.sampled_from(["numpy", "pillow", "tqdm", "pyyaml"]), st.integers()),
    st.builds(
        "step {} | {:.1f} samples/s | mem {} MiB".format,
        st.integers(0, 10**6),
        st.floats(0, 1e5),
        st.integers(0, 10**6),
    ),  # fmt: skip
    st.lists(
        st.sampled_from(
            "loading model weights from cache done saving checkpoint to disk validation accuracy "
            "tokens per second warming up dataloader workers started rank world size".split()
        ),
        max_size=12,
    ).map(" ".join),  # random chatter, from words that are in no error
)
# How shells, launchers and CI runners print the same lines: as they are, with a rank prefix, with a timestamp.
PREFIX = st.sampled_from(["", "[rank0]: ", "[default0]:", "2025-07-24T19:49:48.0375552Z ", "INFO 07-24 19:49:48 "])


@settings(max_examples=300, deadline=None)
@given(row=st.sampled_from(KNOWN), before=st.lists(NOISE, max_size=30), after=st.lists(NOISE, max_size=30),
       prefix=PREFIX, crlf=st.booleans())  # fmt: skip
def test_a_real_error_inside_log_noise_keeps_its_category(row, before, after, prefix, crlf):
    lines = before + row["text"].splitlines() + after
    log = ("\r\n" if crlf else "\n").join(prefix + line for line in lines)
    whole = diagnose(log)
    assert whole.category == row["category"], (row["id"], log)
    for chunk_bytes in (64, 256):  # streamed in chunks: the same diagnosis, keyed on the same line
        streamed = diagnose_lines(log.splitlines(keepends=True), chunk_bytes=chunk_bytes)
        assert (streamed.category, streamed.matched) == (whole.category, whole.matched), (row["id"], chunk_bytes)


# (a CUDA-ism, the rule that must flag it, its portable twin that must stay silent)
PAIRS = [
    ("x = x.cuda()", "PC101", "x = x.to(device)"),
    ('device = torch.device("cuda")', "PC101",
     'device = torch.accelerator.current_accelerator(check_available=True) or torch.device("cpu")'),
    ('z = torch.zeros(3, device="cuda")', "PC101", "z = torch.zeros(3, device=device)"),
    ("scaler = torch.cuda.amp.GradScaler()", "PC102", "scaler = torch.amp.GradScaler(device.type)"),
    ("torch.backends.cudnn.benchmark = True", "PC108", "torch.backends.cudnn.benchmark = False"),
    ('state = torch.load("model.pt")', "PC104", 'state = torch.load("model.pt", map_location=device)'),
    ('dist.init_process_group(backend="rccl")', "PC109", 'dist.init_process_group(backend="nccl")'),
    ("import pynvml", "PC112", "free, total = torch.cuda.mem_get_info()"),
]  # fmt: skip
NAMES = st.from_regex(r"[a-z][a-z0-9_]{0,8}", fullmatch=True).filter(lambda n: n not in {"if", "in", "is", "or", "as"})
FILLER = st.one_of(
    st.builds("{} = {}".format, NAMES, st.integers()),
    st.builds("def {}(a):\n    return a + {}".format, NAMES, st.integers(0, 9)),
    st.builds("# {}".format, st.text(alphabet="abcdefghijklmnopqrstuvwxyz ", max_size=40)),
    st.builds("for {} in range({}):\n    pass".format, NAMES, st.integers(0, 9)),
)


@settings(max_examples=200, deadline=None)
@given(pair=st.sampled_from(PAIRS), before=st.lists(FILLER, max_size=12), after=st.lists(FILLER, max_size=12))
def test_a_cuda_ism_is_flagged_on_its_line_and_its_twin_is_not(pair, before, after):
    bad, rule, good = pair
    head = ["import torch", "import torch.distributed as dist", *before]
    line = sum(chunk.count("\n") + 1 for chunk in head) + 1
    flagged = scan_python("train.py", "\n".join([*head, bad, *after, ""]).encode())
    assert [(f.rule, f.line) for f in flagged] == [(rule, line)], (bad, flagged)
    assert scan_python("train.py", "\n".join([*head, good, *after, ""]).encode()) == [], good


def _broken(kind: str, m):
    """Machine m with one fact made worse (a device already denied or missing stays as it is: that is no better)."""
    f, dev = m.facts, m.dev_access or {"/dev/kfd": "ok"}

    def devices(state):
        return {p: state if v == "ok" else v for p, v in dev.items()}

    return {
        "dev denied": lambda: dataclasses.replace(m, dev_access=devices("denied")),
        "dev missing": lambda: dataclasses.replace(m, dev_access=devices("missing")),
        "no groups": lambda: dataclasses.replace(m, gids=()),
        "op fails": lambda: dataclasses.replace(m, op_errors={**m.op_errors, "tiny op": "RuntimeError: HIP error"}),
        "bf16 fails": lambda: dataclasses.replace(m, op_errors={**m.op_errors, "bf16 op": "RuntimeError: x"}),
        "torch broken": lambda: dataclasses.replace(m, torch_error="ImportError: libamdhip64.so", facts=None),
        "numpy broken": lambda: dataclasses.replace(m, numpy_error="A module compiled with NumPy 1.x"),
        "torchvision broken": lambda: dataclasses.replace(m, torchvision=None, torchvision_error="RuntimeError: nms"),
        "memory full": lambda: dataclasses.replace(m, free_memory=m.free_memory and (GiB // 4, m.free_memory[1])),
        "small shm": lambda: dataclasses.replace(m, shm_bytes=64 * 2**20),
        "old torch": lambda: dataclasses.replace(m, facts=dataclasses.replace(f, torch_version="2.4.1")),
        "override set": lambda: dataclasses.replace(
            m, facts=dataclasses.replace(f, env={**f.env, "HSA_OVERRIDE_GFX_VERSION": "11.0.0"})),
    }[kind]()  # fmt: skip


BREAKS = ["dev denied", "dev missing", "no groups", "op fails", "bf16 fails", "torch broken", "numpy broken",
          "torchvision broken", "memory full", "small shm", "old torch", "override set"]  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(name=st.sampled_from(sorted(MACHINES)), kinds=st.lists(st.sampled_from(BREAKS), min_size=1, max_size=3))
def test_breaking_a_fact_never_turns_a_fail_into_a_pass(name, kinds):
    m = machine(name)
    worse = m
    for kind in kinds:
        if worse.facts is None and kind in ("old torch", "override set"):
            continue
        before = {c.name: c.status for c in run_checks(worse)}
        worse = _broken(kind, worse)
        after = {c.name: c.status for c in run_checks(worse)}
        assert all(after[c] == "FAIL" for c, s in before.items() if s == "FAIL" and c in after), (name, kind, after)
    assert report(run_checks(worse))["ok"] <= report(run_checks(m))["ok"], (name, kinds)
