"""Scanning: one file (Python, C++/CUDA or a build file) into findings, and a whole scan with its project facts."""

from __future__ import annotations

import ast
import os
import re
from dataclasses import asdict, replace

from . import files
from .context import PyModule
from .model import Finding, severity
from .project import Project
from .rules import PYTHON_CHECKS, RULES, pc2xx_build, pc2xx_cpp, pc3xx_deps

IGNORE = re.compile(r"(?:#|//)\s*portcheck:\s*ignore(?:=([\w,\s]+))?")
PARSE_ERRORS = (SyntaxError, ValueError, UnicodeDecodeError, RecursionError, MemoryError)


def _ignored(line: str, rule: str) -> bool:
    m = IGNORE.search(line)
    return bool(m) and (m.group(1) is None or rule in {r.strip() for r in m.group(1).split(",")})


class _Out:
    """Collects one file's findings: the rule's message plus the finding's own words, its severity from model.py."""

    def __init__(self, path: str, source: str):
        self.path, self.lines, self.found = path, source.splitlines(), []

    def add(self, line: int, col: int, rule: str, extra: str = "", context: str | None = None) -> None:
        text = self.lines[line - 1] if 0 < line <= len(self.lines) else ""
        if not _ignored(text, rule):
            r = RULES[rule]
            self.found.append(Finding(self.path, line, col, rule, severity(r, context), r.message + extra, r.fix))

    def sorted(self) -> list[Finding]:
        return sorted(set(self.found), key=lambda f: (f.line, f.col, f.rule))


def _template(data: bytes) -> bool:
    """A file that parses once its template tags ({% if %} lines, {{ names }}) are blanked out: a template."""
    if not re.search(rb"\{%|\{\{\s*[\w.]+\s*\}\}", data):
        return False
    blanked = re.sub(rb"\{\{.*?\}\}", b"X", re.sub(rb"(?m)^\s*\{%.*?%\}\s*$|\{%.*?%\}|\{#.*?#\}", b"", data))
    try:
        ast.parse(blanked)
    except PARSE_ERRORS:
        return False
    return True


def scan_python(path: str, data: bytes) -> list[Finding]:
    """Findings of one Python file; a file that does not parse gives one PC900 finding."""
    try:
        tree = ast.parse(data, filename=path)
        source = data.decode("utf-8", "replace")
    except PARSE_ERRORS as e:
        out = _Out(path, "")
        if "{{" in path or _template(data):  # a Jinja or cookiecutter template: Python once rendered
            out.add(getattr(e, "lineno", None) or 1, 1, "PC900", ": a template (Jinja, cookiecutter), not scanned",
                    "template")  # fmt: skip
        else:
            out.add(getattr(e, "lineno", None) or 1, 1, "PC900", f": {type(e).__name__}: {e}")
        return out.found
    out = _Out(path, source)
    try:
        module = PyModule(path, source, tree)
        for check in PYTHON_CHECKS:
            check(module)
    except RecursionError:  # (an expression nested thousands deep: parsed, too deep to walk)
        out.add(1, 1, "PC900", ": RecursionError: an expression nested too deeply to scan")
        return out.found
    for line, col, rule, extra, context in module.found:
        out.add(line, col, rule, extra, context)
    if os.path.basename(path) == "setup.py":
        pc2xx_build.check_lines(path, source, out.add)
        pc2xx_build.check_setup(source, tree, out.add)
    return out.sorted()


def scan_cpp(path: str, source: str) -> list[Finding]:
    out = _Out(path, source)
    pc2xx_cpp.check(path, source, out.add)
    return out.sorted()


def scan_build(path: str, source: str) -> list[Finding]:
    out = _Out(path, source)
    pc2xx_build.check_lines(path, source, out.add)
    pc3xx_deps.check_lines(path, source.splitlines(), out.add)
    return out.sorted()


def scan_source(path: str, data: bytes) -> list[Finding]:
    """Findings of one file's contents; ``path`` decides the kind (Python, C++/CUDA or build file)."""
    kind = files.kind(path) or "python"
    if kind == "python":
        return scan_python(path, data)
    text = data.decode("utf-8", "replace")
    return scan_cpp(path, text) if kind == "cpp" else scan_build(path, text)


def _in_project(f: Finding, project: Project) -> Finding:
    """What the project around a C++ finding tells (model.CONTEXT): a folder setup.py builds only for CUDA, a header
    nothing includes, third-party code, a branch of the project's own CUDA-only macro, PTX nothing calls, a macro
    nothing expands, a template nothing instantiates, the project's own *_sync shim."""
    if f.severity == "info" or files.kind(f.path) != "cpp":
        return f
    if where := project.built_for_cuda_only(f.path):
        context, note = "cuda_only_build", f" (only built for CUDA: {where})"
    elif project.unused_header(f.path):
        context, note = "unused_header", " (a header no scanned source includes: compiled only where another does)"
    elif f.path in project.vendored:
        context, note = "vendored", " (third-party code the project ships)"
    elif project.cuda_only_macro(f.path, f.line):
        context, note = "cuda_only_macro", " (in a branch the project's own macros keep from HIP)"
    elif f.rule == "PC203" and (name := project.never_generated(f.path, f.line)):
        context, note = "never_generated", f" (in {name}(), which no scanned source calls; its operands are r/n only)"
    elif f.rule in ("PC202", "PC203") and (name := project.unused_macro(f.path, f.line)):
        context, note = "unused_macro", f" (in the macro {name}, which no code HIP compiles uses)"
    elif f.rule == "PC202" and (name := project.never_instantiated(f.path, f.line)):
        context, note = "never_instantiated", f" (in the template {name}(), which no code HIP compiles calls)"
    elif f.rule == "PC202" and project.shim:
        context, note = "shimmed", f" (the project defines its own *_sync at {project.shim})"
    else:
        return f
    return replace(f, severity=severity(RULES[f.rule], context), message=f.message + note)


def _read(paths, exclude, errors: list) -> list[tuple[str, str, bytes]]:
    sources = []
    for path, rel in files.iter_files(paths, exclude):
        try:
            if os.path.islink(path) and not os.path.exists(path):
                raise OSError("broken symbolic link")
            with open(path, "rb") as fh:
                sources.append((path, rel, fh.read()))
        except OSError as e:
            errors.append({"path": path, "error": e.strerror or str(e)})
    return sources


def scan(paths, select=None, ignore=None, exclude=(), stdin: tuple[str, bytes] | None = None) -> dict:
    """Scan files and folders (and ``stdin``: a (name, contents) pair); returns the JSON-schema dict."""
    errors: list[dict] = []
    sources = _read(paths, exclude, errors) + ([(stdin[0], stdin[0], stdin[1])] if stdin else [])
    sources = [(p, r, d) for p, r, d in sources if b"\0" not in d[:8192]]  # (binary files)
    project, findings = Project(), []
    for path, rel, data in sources:
        project.add_file(path, rel, data, files.kind(path))
        findings += scan_source(path, data)
    keep = [_in_project(f, project) for f in findings
            if (not select or any(f.rule.startswith(s) for s in select))
            and not (ignore and any(f.rule.startswith(s) for s in ignore))]  # fmt: skip
    summary: dict[str, int] = {}
    for f in keep:
        summary[f.rule] = summary.get(f.rule, 0) + 1
    return {
        "schema": 1,
        "files_scanned": len(sources),
        "lines_scanned": sum(d.count(b"\n") for _, _, d in sources),
        "findings": [asdict(f) for f in keep],
        "errors": errors,
        "summary": dict(sorted(summary.items())),
    }
