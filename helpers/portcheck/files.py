"""Which files a scan reads, and what kind each is."""

from __future__ import annotations

import fnmatch
import os

CPP_SUFFIXES = (".cu", ".cuh", ".cpp", ".cc", ".cxx", ".h", ".hpp", ".inl")
BUILD_NAMES = ("setup.py", "CMakeLists.txt", "Makefile", "Dockerfile", "build.sh")
BUILD_SUFFIXES = (".cmake", ".sh", ".mk")
SKIP_DIRS = {
    ".git",
    ".hg",
    ".svn",
    ".venv",
    "venv",
    "env",
    "node_modules",
    "build",
    "dist",
    "__pycache__",
    ".tox",
    ".nox",
    ".mypy_cache",
    ".ruff_cache",
    ".pytest_cache",
    "site-packages",
    ".ipynb_checkpoints",
    "mutants",
}  # fmt: skip  (mutants: mutmut's copy of a project)


def kind(path: str) -> str | None:
    """ "python", "cpp" or "build" (setup.py is Python and a build file both), or None: not scanned."""
    base = os.path.basename(path)
    if base.endswith(".py"):
        return "python"
    if base.endswith(CPP_SUFFIXES):
        return "cpp"
    if base in BUILD_NAMES or base.endswith(BUILD_SUFFIXES):
        return "build"
    return None


def iter_files(paths, exclude=()):
    """(file, its path inside the folder given) for every file to scan under ``paths``: skips VCS, virtualenv, build
    and cache folders; never follows directory symlinks (no loops); ``exclude``: globs of those inner paths."""
    for p in paths:
        if os.path.isfile(p):
            yield p, os.path.basename(p)
            continue
        for root, dirs, files in os.walk(p, followlinks=False):
            dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not d.endswith(".egg-info")
                             and not os.path.exists(os.path.join(root, d, "pyvenv.cfg")))  # fmt: skip
            for name in sorted(files):
                full = os.path.join(root, name)
                rel = os.path.relpath(full, p)
                if kind(full) and not any(fnmatch.fnmatch(rel, pat) for pat in exclude):
                    yield full, rel
