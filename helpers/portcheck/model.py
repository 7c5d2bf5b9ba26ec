"""What a rule is, what a finding is, and the one place that decides a finding's severity.

A severity means one thing for every rule:

- ``error``: this line makes the program fail to build, fail to run, or compute wrong results on an AMD GPU with ROCm;
- ``warning``: it runs on ROCm, but is deprecated, slow or misleading there, or it fails only where there is no GPU
  at all (a hard-coded ``.cuda()``: CPU portability, not a ROCm break);
- ``info``: worth knowing, nothing to fix now.
"""

from __future__ import annotations

from dataclasses import dataclass

SEVERITIES = ("error", "warning", "info")  # most severe first
MEANING = {
    "error": "breaks on ROCm: fails to build, fails to run, or computes wrong results on an AMD GPU",
    "warning": "runs on ROCm, but is deprecated, slow or misleading there, or fails only without a GPU (CPU "
    "portability; `--fail-on warning` makes these fail a CI job too)",
    "info": "GPU code by design, or code no ROCm build compiles: nothing to fix for the port",
}


@dataclass(frozen=True)
class Rule:
    id: str
    severity: str  # the rule's severity where no context below changes it
    why: str  # why that severity: what happens on ROCm
    message: str  # what the finding says
    fix: str
    example: str = ""  # a line (or a few) that the rule reports: the docs show it and a test scans it


@dataclass(frozen=True)
class Finding:
    path: str
    line: int
    col: int
    rule: str
    severity: str
    message: str
    fix: str


# Where the context of a finding changes its rule's severity, with the reason. Nothing else sets a severity.
CONTEXT = {
    "gpu_only": ("info", "the module is GPU code by design (it times the GPU, or imports a GPU kernel language or a "
                 "GPU-only library at its top, and never tests for a GPU)"),
    "cuda_only_build": ("info", "the project builds for ROCm, but not this file: its setup.py compiles the folder only "
                        "for CUDA, its CMake files name the file only in CUDA branches, or the folder's own setup.py "
                        "runs nvcc and names nothing for ROCm (or only such files, or headers that no source file "
                        "reaches, #include this header)"),
    "unused_header": ("info", "a header that no scanned source includes and no setup.py names: no build of this "
                      "project compiles it"),
    "cuda_only_macro": ("info", "in a branch the project's own macros keep from HIP: one no build file defines and the "
                        "code #defines only where HIP never compiles (`#if __CUDA_ARCH__ >= 1000`) or to a value that "
                        "skips it (`#define ARCH_SM80 0` in that #if's #else), or a switch the build defines only for "
                        "ROCm (`add_definitions(-DUSE_AMD_ROCM)` under `if(ENABLE_ROCM)`)"),
    "never_generated": ("info", 'inline PTX with only "r"/"n" operands in a function no scanned source calls: HIP '
                        "rejects those operands only where it generates the function's code"),
    "never_instantiated": ("info", "a 32-bit mask in a function template no scanned source calls: HIP's mask "
                           "static_assert fires only where the template is instantiated"),
    "unused_macro": ("info", "in a macro that no code HIP compiles uses (`#define FULL_MASK 0xffffffff`, a PTX "
                     "macro): a macro's text is compiled only where it is expanded"),
    "vendored": ("info", "third-party code the project ships (third_party/, 3rdparty/, vendor/, external/, "
                 "dependencies/): a ROCm port replaces it (CUB -> hipCUB) or takes its upstream's port"),
    "shimmed": ("info", "the project defines its own *_sync shuffles (a ROCm shim that drops or widens the mask): its "
                "masks go there"),
    "hccl_variable": ("warning", "an HCCL_* variable (Ascend's, Gaudi's): ROCm's RCCL ignores it and reads NCCL_* "
                      "ones; nothing fails"),
    "unused_import": ("warning", "imported but never used here: the import itself works on ROCm"),
    "template": ("info", "a Jinja or cookiecutter template: not Python until rendered"),
}  # fmt: skip


def severity(rule: Rule, context: str | None = None) -> str:
    """A finding's severity: its context's (CONTEXT) when it has one, else its rule's."""
    return CONTEXT[context][0] if context else rule.severity


def at_least(found: str, threshold: str) -> bool:
    """Is severity ``found`` as severe as ``threshold`` or more?"""
    return SEVERITIES.index(found) <= SEVERITIES.index(threshold)
