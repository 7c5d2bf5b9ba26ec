"""What every exercise check shares: the verdict, the never-raising wrapper, the learner's source and portcheck hints.

A check never raises: it returns a :class:`Verdict` (done or "not yet", and what to do next), which shows itself in
Jupyter. So a notebook run top to bottom with the exercises unsolved still finishes (nbval, papermill).

Every hint is written in English where it is decided, `say("01a.define", "define a function ...")`, and speaks the
learner's language: in a zh-CN notebook, or with COURSE_LANG=zh_CN (`make lab COURSE_LANG=zh_CN` sets it), the text
comes from helpers/exercises/zh_CN.toml, keyed by the message id, as long as that translation records the English
text it translates (its hash: `make test` fails on a stale one, and a stale one is never shown).
"""

from __future__ import annotations

import ast
import functools
import hashlib
import inspect
import json
import os
import re
import textwrap
import tomllib
from dataclasses import dataclass
from pathlib import Path


class Message(str):
    """A check's answer in the learner's language; it keeps its id, English text and values, so it can be shown
    in another language too (`translated`)."""

    key: str | None = None
    english: str = ""
    values: dict = {}

    def translated(self, lang: str) -> str:
        """This message in `lang`, its values too where they are messages (English where no translation is current)."""
        values = {k: v.translated(lang) if isinstance(v, Message) else v for k, v in self.values.items()}
        return render(self.key, self.english, values, lang)


@functools.cache
def translations(lang: str) -> dict[str, dict]:
    """id -> {"en": hash of the English, "text": the translation} from helpers/exercises/<lang>.toml."""
    if not re.fullmatch(r"[A-Za-z]{2,3}(_[A-Za-z]{2})?", lang):  # COURSE_LANG=en_US.UTF-8 or a path: no catalogue
        return {}
    path = Path(__file__).with_name(f"{lang}.toml")
    return tomllib.loads(path.read_text()) if path.exists() else {}


def language() -> str:
    """COURSE_LANG when it is set; else the language of the notebook this kernel runs, which JupyterLab names in
    JPY_SESSION_NAME (a generated zh-CN notebook says "course": {"lang": "zh_CN"} in its metadata); else English."""
    return os.environ.get("COURSE_LANG") or _notebook_language(os.environ.get("JPY_SESSION_NAME", ""))


@functools.cache
def _notebook_language(path: str) -> str:
    try:
        return json.loads(Path(path).read_text())["metadata"]["course"]["lang"]
    except (OSError, ValueError, KeyError, TypeError):  # no notebook, not one, or an English one
        return "en"


def render(key: str, english: str, values: dict, lang: str) -> str:
    """The text of message `key` in `lang`: its translation where that records this English text, else the English."""
    t = translations(lang).get(key)
    current = t and t["en"] == hashlib.sha256(english.encode()).hexdigest()[:12]
    return (t["text"] if current else english).format(**values)


def say(key: str, english: str, **values) -> Message:
    """The message `key` in the learner's language (`language()`), its {placeholders} filled with `values`.

    >>> say("02a.define", "define a function `{name}`", name="train_step")
    'define a function `train_step`'
    """
    message = Message(render(key, english, values, language()))
    message.key, message.english, message.values = key, english, values
    return message


@dataclass(frozen=True)
class Verdict:
    exercise: str
    ok: bool
    message: str

    @property
    def key(self) -> str | None:
        """The id of the message (the same in every language): what a script or test can compare."""
        return getattr(self.message, "key", None)

    def __str__(self) -> str:
        return f"{'done' if self.ok else 'not yet'} ({self.exercise}): {self.message}"

    __repr__ = __str__

    def _repr_markdown_(self) -> str:
        return f"{'**Done**' if self.ok else '**Not yet**'} ({self.exercise}): {self.message}"


class Hint(Exception):  # noqa: N818 (not an error: what a check says when the learner's code meets a stand-in)
    """Raised inside a check (by a stand-in the check built) to end it with this message as the hint."""


def check(exercise: str):
    """Turn a check into one that never raises: an error in the learner's code becomes a "not yet" naming it."""

    def wrap(fn):
        @functools.wraps(fn)
        def run(*args, **kwargs) -> Verdict:
            try:
                ok, message = fn(*args, **kwargs)
            except Hint as h:
                ok, message = False, h.args[0] if h.args else str(h)  # (the message itself: it knows its id)
            except Exception as e:  # the learner's code failed: say where, never a traceback
                first = str(e).strip().splitlines()[0][:200] if str(e).strip() else ""
                ok, message = (
                    False,
                    say("core.raised", "your code raised {error}: {first}", error=type(e).__name__, first=first),
                )
            return Verdict(exercise, ok, message)

        return run

    return wrap


def source(obj) -> tuple[str, int]:
    """(the learner's code, the line of the cell it starts on): a function's own lines count from its cell's top."""
    if isinstance(obj, str):
        return textwrap.dedent(obj), 1
    try:
        return textwrap.dedent(inspect.getsource(obj)), getattr(getattr(obj, "__code__", None), "co_firstlineno", 1)
    except (OSError, TypeError):
        return "", 1


def statement(src: str, line: int, limit: int = 110) -> str:
    """The whole statement on ``line`` of ``src``, on one line, cut (if at all) between words."""
    try:
        nodes = [n for n in ast.walk(ast.parse(src)) if isinstance(n, ast.stmt) and n.lineno <= line <= n.end_lineno]
    except SyntaxError:
        nodes = []
    inner = min(nodes, key=lambda n: n.end_lineno - n.lineno, default=None)
    text = ast.get_source_segment(src, inner) if inner and not isinstance(inner, ast.FunctionDef) else None
    text = " ".join((text or src.splitlines()[line - 1]).split())
    return text if len(text) <= limit else text[:limit].rsplit(" ", 1)[0] + " ..."


def portcheck_hint(obj, rules=("PC1",)) -> str | None:
    """The first portcheck finding in the learner's code, as a hint with its line in the cell; None when clean."""
    from helpers.portcheck import scan_python

    src, first = source(obj)
    for f in scan_python("<your code>", src.encode()):
        if f.rule.startswith(rules):
            return say(
                "core.portcheck",
                "line {line} `{code}`: {rule} {message}. Fix: {fix}",
                line=first + f.line - 1,
                code=statement(src, f.line),
                rule=f.rule,
                message=f.message,
                fix=f.fix,
            )
    return None


def literal_autocast(obj) -> str | None:
    """A `torch.autocast("cuda", ...)` (or "cpu") with the device type written as a string: it fits one machine."""
    src, first = source(obj)
    try:
        tree = ast.parse(src)
    except SyntaxError:
        return None
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and re.search(r"autocast$", ast.unparse(node.func)):
            args = [a for a in node.args[:1]] + [k.value for k in node.keywords if k.arg == "device_type"]
            for a in args:
                if isinstance(a, ast.Constant) and isinstance(a.value, str):
                    line = first + node.lineno - 1
                    return say(
                        "core.literal_autocast",
                        "line {line}: autocast for {name!r} by name runs only where "
                        "the data is on that device: take the data's, x.device.type (lesson 02, section 3)",
                        line=line,
                        name=a.value,
                    )
    return None
