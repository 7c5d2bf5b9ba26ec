"""Translations of the lessons and the README: check that they are current, and build the translated notebooks.

The English notebook is the source. A translation is a catalogue, i18n/<lang>/<notebook>.toml, with one entry per
Markdown cell: the English cell's `id`, `en` (the first 12 hex digits of the SHA-256 of the English text it
translates) and the translated text. Code cells are never translated: a translated notebook is the English one with
its Markdown replaced, so one execution proves both editions. An entry may instead carry `after = "<id>"`: a cell
the translation adds after that English cell (lesson 01's "common wrong claims" in zh-CN). The README works the
same way, one entry per `## ` section (`id` = the heading), and README.<lang>.md is generated from it. The
exercises' hints are written in English in helpers/exercises (`say("01a.define", "define ...")`); their
translations, in helpers/exercises/<lang>.toml, record the same hash.

    python tools/i18n.py check [--lang zh_CN]        stale or missing translations, one line each; exit 1 if any
    python tools/i18n.py todo NOTEBOOK [--lang ...]  the entries to write or update, with the English text
    python tools/i18n.py build [--lang ...] [--out build/zh_CN]   the translated notebooks
    python tools/i18n.py readme [--lang ...]         README.<lang>.md (committed, for readers of the code host)

When an English cell changes, `check` (run by `make test`) lists the translation as stale until its text and `en`
are updated; `todo` prints the new `en` and the English text to translate.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import re
import string
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LESSONS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))


def digest(text: str) -> str:
    """The hash a translation records of the English text it translates."""
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def english_cells(nb: dict) -> dict[str, str]:
    """id -> text of each Markdown cell of an English notebook, in order."""
    return {c["id"]: "".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown"}


def readme_sections(text: str) -> dict[str, str]:
    """heading -> text of each part of the README: the part before the first `## ` is "(top)"."""
    parts = re.split(r"(?m)^(?=## )", text)
    return {(p.splitlines()[0][3:] if p.startswith("## ") else "(top)"): p for p in parts}


def catalogue(lang: str, name: str) -> list[dict]:
    """The entries of i18n/<lang>/<name>.toml (none when it does not exist)."""
    path = ROOT / "i18n" / lang / f"{name}.toml"
    return tomllib.loads(path.read_text())["cell"] if path.exists() else []


def problems(english: dict[str, str], entries: list[dict], name: str, ids: set[str] | None = None) -> list[str]:
    """What is stale, missing or dangling in one catalogue, one line each (`ids`: every cell an entry may follow)."""
    found = []
    done = {e["id"]: e for e in entries if "id" in e}
    for cid, text in english.items():
        e = done.get(cid)
        if e is None:
            found.append(f"{name}: cell {cid!r} is not translated")
        elif e["en"] != digest(text):
            found.append(f"{name}: cell {cid!r} is stale: its English text changed (en = {digest(text)!r} now)")
    for e in entries:
        anchor = e.get("id", e.get("after"))
        if anchor not in (english if "id" in e else ids or english):
            found.append(f"{name}: entry for {anchor!r}: the English has no such cell (moved or deleted?)")
    return found


def hints() -> dict[str, str]:
    """id -> English text of every exercise message: each `say("id", "English ...")` in helpers/exercises."""
    found: dict[str, str] = {}
    for path in sorted((ROOT / "helpers" / "exercises").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "say" and len(node.args) >= 2:
                key, english = (a.value for a in node.args[:2])
                if found.setdefault(key, english) != english:
                    raise ValueError(f"{path.name}: message {key!r} has two English texts")
    return found


def placeholders(text: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name is not None}


def hint_problems(lang: str) -> list[str]:
    """Exercise messages without a current translation in helpers/exercises/<lang>.toml, one line each."""
    path = ROOT / "helpers" / "exercises" / f"{lang}.toml"
    done = tomllib.loads(path.read_text()) if path.exists() else {}
    found = []
    for key, english in hints().items():
        t = done.get(key)
        if t is None:
            found.append(f"exercise message {key!r} is not translated")
        elif t["en"] != digest(english):
            found.append(f"exercise message {key!r} is stale: its English text changed (en = {digest(english)!r} now)")
        elif placeholders(t["text"]) != placeholders(english):
            found.append(f"exercise message {key!r}: the translation's {{placeholders}} differ from the English")
    found += [f"exercise message {key!r}: no such message in helpers/exercises" for key in set(done) - set(hints())]
    return found


def check(lang: str) -> list[str]:
    """Every problem of every catalogue of `lang`: lessons, the README and the exercises' messages."""
    found = []
    for path in LESSONS:
        nb = json.loads(path.read_text())
        ids = {c["id"] for c in nb["cells"]}
        found += problems(english_cells(nb), catalogue(lang, path.stem), path.name, ids)
    found += problems(readme_sections((ROOT / "README.md").read_text()), catalogue(lang, "README"), "README.md")
    return found + hint_problems(lang)


def translated(nb: dict, entries: list[dict], lang: str) -> dict:
    """The notebook with its Markdown in `lang`; code cells, their ids and outputs untouched."""
    text = {e["id"]: e["zh"] for e in entries if "id" in e}
    extra: dict[str, list[str]] = {}
    for e in entries:
        if "after" in e:
            extra.setdefault(e["after"], []).append(e["zh"])
    cells = []
    for cell in nb["cells"]:
        if cell["cell_type"] == "markdown":
            cell = {**cell, "source": text[cell["id"]].strip("\n")}
        cells.append(cell)
        for i, zh in enumerate(extra.get(cell["id"], [])):
            cells.append({"cell_type": "markdown", "id": f"{cell['id']}-{lang}-{i}", "metadata": {}, "source": zh})
    meta = {**nb["metadata"], "course": {**nb["metadata"].get("course", {}), "lang": lang}}
    return {**nb, "cells": cells, "metadata": meta}


def readme(lang: str) -> str:
    """README.<lang>.md: the README's sections in `lang`."""
    text = {e["id"]: e["zh"].strip("\n") for e in catalogue(lang, "README")}
    return "\n\n".join(text[h] for h in readme_sections((ROOT / "README.md").read_text())) + "\n"


def build(lang: str, out: Path) -> None:
    """The translated notebooks into `out`/notebooks (`make lab COURSE_LANG=zh_CN` opens them there)."""
    (out / "notebooks").mkdir(parents=True, exist_ok=True)
    for path in LESSONS:
        nb = translated(json.loads(path.read_text()), catalogue(lang, path.stem), lang)
        (out / "notebooks" / path.name).write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n")


def todo(notebook: str, lang: str) -> str:
    """TOML entries to paste and translate: each missing or stale cell with its English text as a comment."""
    if notebook == "exercises":
        path = ROOT / "helpers" / "exercises" / f"{lang}.toml"
        done = tomllib.loads(path.read_text()) if path.exists() else {}
        return "\n".join(
            f'# {english}\n[{json.dumps(key)}]\nen = "{digest(english)}"\ntext = ""\n'
            for key, english in hints().items()
            if done.get(key, {}).get("en") != digest(english)
        )
    path = ROOT / "notebooks" / notebook if notebook != "README" else ROOT / "README.md"
    english = (
        english_cells(json.loads(path.read_text())) if path.suffix == ".ipynb" else readme_sections(path.read_text())
    )
    done = {e["id"]: e["en"] for e in catalogue(lang, path.stem) if "id" in e}
    out = []
    for cid, text in english.items():
        if done.get(cid) != digest(text):
            comment = "\n".join("# " + line for line in text.splitlines())
            out.append(f"{comment}\n[[cell]]\nid = {json.dumps(cid)}\nen = \"{digest(text)}\"\nzh = '''\n'''\n")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("command", choices=["check", "todo", "build", "readme"])
    ap.add_argument("notebook", nargs="?", help="for todo: a notebook's file name, README, or exercises")
    ap.add_argument("--lang", default="zh_CN")
    ap.add_argument("--out", type=Path, default=ROOT / "build/zh_CN")
    a = ap.parse_args(argv)
    if a.command == "todo":
        print(todo(a.notebook, a.lang))
        return 0
    found = check(a.lang)
    for line in found:
        print(f"{a.lang}: {line}")
    if a.command == "build" and not found:
        build(a.lang, a.out)
        print(f"{a.lang}: the notebooks are in {a.out / 'notebooks'}")
    if a.command == "readme" and not found:
        (ROOT / f"README.{a.lang.replace('_', '-')}.md").write_text(readme(a.lang))
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
