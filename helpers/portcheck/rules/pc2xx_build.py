"""PC205-PC206 and PC114 in build files: setup.py, CMakeLists.txt, Makefiles, shell scripts, Dockerfiles."""

from __future__ import annotations

import ast
import re

from ..model import Rule
from .pc1xx_api import CUDA_ONLY_VARS

RULES = [
    Rule("PC205", "warning", "the build runs; without PYTORCH_ROCM_ARCH it picks its own GPU targets",
         "TORCH_CUDA_ARCH_LIST without PYTORCH_ROCM_ARCH: ROCm builds ignore it",
         'also set PYTORCH_ROCM_ARCH="gfx942;gfx90a" (your gfx targets)', 'export TORCH_CUDA_ARCH_LIST="8.0;9.0"'),
    Rule("PC206", "warning", "on a ROCm torch CUDA_HOME is None: the extension is skipped or the build stops "
         "(a warning: whether the project needs the extension is its call)",
         "this setup.py builds GPU code with CUDA_HOME / nvcc only: on a ROCm torch CUDA_HOME is None and there is "
         "no nvcc, so the extension is skipped or the build fails",
         "branch on IS_HIP_EXTENSION (torch.utils.cpp_extension): CUDAExtension then builds with hipcc (ROCM_HOME), "
         "and PYTORCH_ROCM_ARCH picks the GPU targets",
         "from torch.utils.cpp_extension import CUDA_HOME, CUDAExtension\nif CUDA_HOME is not None:\n"
         "    ext_modules = [CUDAExtension('k', ['k.cu'])]"),
]  # fmt: skip
CUDA_ONLY_VAR = re.compile(r"\b(" + "|".join(CUDA_ONLY_VARS) + r")\b")


def check_lines(path: str, source: str, add) -> None:
    """``add(line, col, rule, extra)`` for a build file's text (setup.py included: PC205 only there)."""
    lines = source.splitlines()
    if "TORCH_CUDA_ARCH_LIST" in source and "PYTORCH_ROCM_ARCH" not in source:
        i = next(n for n, line in enumerate(lines, 1) if "TORCH_CUDA_ARCH_LIST" in line)
        add(i, lines[i - 1].index("TORCH_CUDA_ARCH_LIST") + 1, "PC205", "")
    if path.endswith(".py"):
        return  # setup.py's strings are Python's (PC114 there comes from the Python rules)
    for i, line in enumerate(lines, 1):
        m = CUDA_ONLY_VAR.search(line.split("#", 1)[0])
        if m and not any(k in source for k in CUDA_ONLY_VARS[m.group(1)][1]):
            add(i, m.start() + 1, "PC114", f": {m.group(1)} -> {CUDA_ONLY_VARS[m.group(1)][0]}")


def check_setup(source: str, tree: ast.AST, add) -> None:
    """PC206, once per setup.py: the first use of CUDA_HOME or nvcc in a build of torch extensions that never mentions
    ROCm (ROCM_HOME, IS_HIP_EXTENSION, torch.version.hip, hipcc). torch.utils.cpp_extension sets CUDA_HOME only on
    CUDA builds of torch. An "nvcc" key of extra_compile_args is no finding: on ROCm those flags go to hipcc."""
    code = "\n".join(line.split("#", 1)[0] for line in source.splitlines())  # a comment that says "ROCm" ports nothing
    if "cpp_extension" not in code or re.search(r"rocm|IS_HIP_EXTENSION|version\.hip|hipcc", code, re.I):
        return
    keys = {id(k) for n in ast.walk(tree) if isinstance(n, ast.Dict) for k in n.keys}
    uses = [n.lineno for n in ast.walk(tree) if (isinstance(n, ast.Name) and n.id == "CUDA_HOME") or (
        isinstance(n, ast.Constant) and id(n) not in keys and isinstance(n.value, str)
        and re.fullmatch(r"CUDA_HOME|nvcc( .*)?|\S*/bin/nvcc", n.value))]  # fmt: skip
    if uses:
        add(min(uses), 1, "PC206", "")
