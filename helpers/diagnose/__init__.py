"""Explain a PyTorch-on-ROCm error: what it means, why it happens, what to do.

Give it an exception, or the text of an error or a whole log pasted from a terminal. The rules are
tried in order of *root cause* first (a missing GPU binary before the "No HIP GPUs" it leads to), so
a traceback is classified by its cause, not by a later symptom. Imports no torch: use it anywhere.

    >>> from helpers.diagnose import diagnose
    >>> diagnose("RuntimeError: No HIP GPUs are available").category
    'device_permissions'

Command line: ``python -m helpers.diagnose [FILE|-] [--json]`` (stdin when no file is given).
In a notebook, ``helpers.diagnose.install()`` prints the diagnosis under every traceback.
The rules are data: ``rules.toml`` next to this file, read with tomllib.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tomllib
import traceback
from collections import deque
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

# Three strings; helpers.device imports torch only inside its functions, so this module stays torch-free.
from helpers.device import DOCKER_GPU_FLAGS
from helpers.hardware import AMD_WHEEL_INDEX, ROCM_WHEEL_INDEX

HIP_DOCS = "https://pytorch.org/docs/stable/notes/hip.html"


@dataclass(frozen=True)
class Diagnosis:
    category: str
    title: str
    cause: str
    fix: list[str] = field(default_factory=list)
    source: str = ""
    matched: str = ""  # the line of the input that decided it ("" for unknown)


@dataclass(frozen=True)
class Rule:
    category: str
    patterns: tuple[str, ...]  # case-insensitive regular expressions, searched anywhere in the text
    title: str
    cause: str
    fix: tuple[str, ...]
    source: str
    error_line: bool = False  # match only on a line that reports an error (for the name-only last resorts)


def _load(path: Path) -> tuple[Rule, ...]:
    """The rules of rules.toml, in order; a last resort takes the title, fix and source of the rule it is like."""
    fill = {"{DOCKER_GPU_FLAGS}": DOCKER_GPU_FLAGS, "{AMD_WHEEL_INDEX}": AMD_WHEEL_INDEX,
            "{ROCM_WHEEL_INDEX}": ROCM_WHEEL_INDEX}  # fmt: skip

    def filled(text: str) -> str:
        for key, value in fill.items():
            text = text.replace(key, value)
        return text

    data = tomllib.loads(path.read_text(encoding="utf-8"))
    rules = tuple(Rule(r["category"], tuple(r["patterns"]), r["title"], r["cause"], tuple(map(filled, r["fix"])),
                       r["source"], r.get("error_line", False)) for r in data["rule"])  # fmt: skip
    last = []
    for r in data["last_resort"]:
        like = next(x for x in rules if x.category == r["like"])
        cause = f"Only {r['what']} matched: judge the line yourself. {like.cause}"
        last.append(replace(like, patterns=(r["pattern"],), cause=cause, error_line=r["error_line"]))
    return rules + tuple(last)


RULES = _load(Path(__file__).with_name("rules.toml"))

UNKNOWN = Diagnosis(
    "unknown",
    "Not a known ROCm porting error",
    "None of the known patterns matched.",
    [
        "Search the issue trackers for the error line itself (github.com/ROCm/ROCm/issues, "
        "github.com/pytorch/pytorch/issues)",
        "python -m helpers.doctor --json   # this machine's facts (GPU, driver, torch build), to paste into a report",
        "python -m torch.utils.collect_env   # PyTorch's own environment report",
        "AMD_SERIALIZE_KERNEL=3 python your_script.py   # synchronous launches: the error points at its real line",
    ],
    HIP_DOCS,
)


def _lower_pattern(pattern: str) -> str:
    """The pattern for lower-cased text: literals lowered, escapes (\\S, \\W, \\d, ...) kept as they are."""
    out, i = [], 0
    while i < len(pattern):
        if pattern[i] == "\\":
            out.append(pattern[i : i + 2])
            i += 2
        else:
            out.append(pattern[i].lower())
            i += 1
    return "".join(out)


# Case-insensitive matching, fast: the text is lower-cased once and searched with lower-cased patterns (a search
# with re.IGNORECASE is an order of magnitude slower on long logs). _SLOW is the fallback for the rare text whose
# lower-casing changes its length (some non-ASCII letters), where match positions would not line up.
_COMPILED = [(r, [re.compile(_lower_pattern(p)) for p in r.patterns]) for r in RULES]
_SLOW = [(r, [re.compile(p, re.IGNORECASE) for p in r.patterns]) for r in RULES]


def _required(pattern: str) -> str:
    r"""The longest run of plain characters that every match of ``pattern`` contains ("cannot open shared object file"
    in r"\w+\.so: cannot open shared object file"), read from Python's own parse of it; "" when there is none or the
    parser is not there. A text without it cannot match, so the search is skipped: `in` is far cheaper than a regex
    that must try every position."""
    try:
        from re import _constants, _parser  # (Python's regex parser: private, so used only as a shortcut)

        best, run = "", ""
        for op, arg in _parser.parse(pattern):
            run = run + chr(arg) if op is _constants.LITERAL else ""
            best = max(best, run, key=len)
        return best
    except Exception:
        return ""


_NEEDS = {rx: _required(rx.pattern) for _, patterns in _COMPILED for rx in patterns}  # (lower-cased, like the text)
# Two tests of a line, on purpose not one: the line an `unknown` answer tells you to search for must be the error
# itself (RuntimeError:, error:, FAILED), while a name-only rule may key on any line that mentions a failure ("Triton
# compilation failed", "NCCL errors"), and on none that only lists names.
_ERROR_LINE = re.compile(r"\b\w*(Error|Exception)\b|error:|\bFAILED\b|\bfatal\b|Aborted|Segmentation fault", re.I)
_REPORTS_ERROR = re.compile(r"error|exception|fail|fatal|abort", re.I)
_SPAN = 1000  # the most characters a pattern may span across lines (F.conv2d( ... launch failure does)


# Terminal colours: Python 3.13+ colours its tracebacks where FORCE_COLOR is set (ipykernel sets it for the processes
# a notebook starts), as many tools do; the words between the codes are what the rules read.
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
# What launchers and CI runners put before every line (torchrun's [rank0]: / [default0]:, a CI log's timestamp, vLLM's
# INFO stamp): a message split over two lines must still read as one.
_LINE_PREFIX = re.compile(
    r"^(\[(rank|default)\d+\]: ?|\d{4}-\d\d-\d\dT[\d:.]+Z |(INFO|WARNING|ERROR) \d\d-\d\d [\d:]+ )", re.M
)


def _clean(text: str) -> str:
    """The text the rules read: Windows line ends as Unix ones, no colour codes, no per-line launcher prefixes."""
    return _LINE_PREFIX.sub("", _ANSI.sub("", text.replace("\r\n", "\n")))


def _text(error) -> str:
    if isinstance(error, BaseException):
        return "".join(traceback.format_exception(type(error), error, error.__traceback__))
    if isinstance(error, bytes):
        return _clean(error.decode("utf-8", "replace"))
    return _clean(str(error))


def _found(rule: Rule, line: str) -> Diagnosis:
    return Diagnosis(rule.category, rule.title, rule.cause, list(rule.fix), rule.source, line.strip()[:300])


def _unknown(lines) -> Diagnosis:
    """UNKNOWN, with the line to search for: the last one that looks like an error."""
    key = next((ln.strip() for ln in reversed(list(lines)) if _ERROR_LINE.search(ln)), "")
    if not key:
        return UNKNOWN
    fix = [f"Search the issue trackers for: {key[:200]!r} (github.com/ROCm/ROCm/issues, "
           "github.com/pytorch/pytorch/issues)", *UNKNOWN.fix[1:]]  # fmt: skip
    return Diagnosis(UNKNOWN.category, UNKNOWN.title, UNKNOWN.cause, fix, UNKNOWN.source)


def _first(text: str, rules: int, limit: int | None = None) -> tuple[int, str] | None:
    """(index of the first of the first ``rules`` rules that matches ``text``, the line of its earliest match) or None.
    Only matches that start before ``limit`` count (diagnose_lines searches the rest again, with what follows)."""
    low = text.lower()
    table, hay = (_COMPILED, low) if len(low) == len(text) else (_SLOW, text)
    end = len(hay) if limit is None else limit
    for i in range(rules):
        rule, patterns = table[i]
        start, line = end, None
        for rx in patterns:
            if _NEEDS.get(rx, "") not in hay:  # (_SLOW's patterns have no entry: always searched)
                continue
            for m in rx.finditer(hay):
                if m.start() >= start:
                    break
                a, b = text.rfind("\n", 0, m.start()) + 1, text.find("\n", m.end())
                here = text[a : b if b != -1 else len(text)]
                if not rule.error_line or _REPORTS_ERROR.search(here):
                    start, line = m.start(), here
                    break
        if line is not None:
            return i, line
    return None


def diagnose(error) -> Diagnosis:
    """Classify an exception or an error text; never raises. ``matched`` is the line it keyed on."""
    try:
        text = _text(error)
    except Exception:  # an exception whose __str__ fails, for instance
        return UNKNOWN
    hit = _first(text, len(RULES))
    return _found(RULES[hit[0]], hit[1]) if hit else _unknown(text.splitlines()[-200:])


def diagnose_lines(lines, chunk_bytes: int = 1 << 20) -> Diagnosis:
    """Like :func:`diagnose`, for a log read line by line (an open file, stdin): bounded memory, any size.

    The same answer as ``diagnose(whole_text)``: the rule that comes first in RULES wins, wherever its line is.
    Lines are searched in chunks of about ``chunk_bytes``, and only for rules before the best match so far. The
    last lines of a chunk (at least _SPAN characters) start the next one, and a match that starts in them counts
    only there: so a pattern that looks up to _SPAN characters ahead (across lines) sees them on a chunk border too.
    """
    best, best_line, tail, chunk, size = len(RULES), "", deque(maxlen=200), [], 0
    for raw in lines:
        line = _clean(raw.decode("utf-8", "replace") if isinstance(raw, bytes) else str(raw))
        tail.append(line)
        chunk.append(line if line.endswith("\n") else line + "\n")
        size += len(line)
        if size >= chunk_bytes:
            keep, kept = [], 0
            while chunk and kept < _SPAN:  # the last lines, carried into the next chunk
                keep.append(chunk.pop())
                kept += len(keep[-1])
            text = "".join(chunk + keep[::-1])
            hit = _first(text, best, limit=len(text) - kept)
            best, best_line = hit if hit else (best, best_line)
            if best == 0:
                break
            chunk, size = keep[::-1], 0
    hit = _first("".join(chunk), best) if chunk else None
    best, best_line = hit if hit else (best, best_line)
    return _found(RULES[best], best_line) if best < len(RULES) else _unknown(tail)


def format_diagnosis(d: Diagnosis) -> str:
    lines = [f"[{d.category}] {d.title}"]
    if d.matched:
        lines.append(f"  matched: {d.matched}")
    lines.append(f"  cause:   {d.cause}")
    lines.append("  fix:")
    lines += [f"    {i}. {step}" for i, step in enumerate(d.fix, 1)]
    lines.append(f"  source:  {d.source}")
    return "\n".join(lines)


def install() -> bool:
    """In IPython/Jupyter: print the diagnosis under every traceback. Returns False outside IPython."""
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    ip = get_ipython()
    if ip is None:
        return False

    def handler(shell, etype, value, tb, tb_offset=None):
        shell.showtraceback((etype, value, tb), tb_offset=tb_offset)
        d = diagnose(value)
        if d.category != "unknown":
            print("\nhelpers.diagnose:\n" + format_diagnosis(d))

    ip.set_custom_exc((Exception,), handler)
    return True


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m helpers.diagnose", description="Explain a PyTorch/ROCm error.")
    ap.add_argument("file", nargs="?", default="-", help="file holding the error or log (default: stdin)")
    ap.add_argument("--json", action="store_true", help="print the diagnosis as JSON")
    a = ap.parse_args(argv)
    try:
        if a.file == "-":
            d = diagnose_lines(sys.stdin.buffer)
        else:
            with open(a.file, "rb") as f:  # read line by line: a 50 MB log never sits in memory at once
                d = diagnose_lines(f)
    except OSError as e:
        print(f"error: cannot read {a.file}: {e.strerror}", file=sys.stderr)
        return 2
    print(json.dumps(asdict(d), indent=2) if a.json else format_diagnosis(d))
    return 0
