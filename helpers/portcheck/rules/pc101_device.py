"""PC101: a hard-coded GPU (``.cuda()``, ``"cuda"``) outside any guard.

On ROCm an AMD GPU is ``torch.device("cuda")``, so these lines run unchanged there: PC101 is about machines without a
GPU (CPU-only CI, a laptop), a warning. Inside a guard (see context/guards.py) it is right and not reported.
"""

from __future__ import annotations

import ast
import re

from ..model import Rule
from ..pyast import dotted, is_cuda_str, option

RULES = [
    Rule("PC101", "warning",
         "runs unchanged on ROCm (an AMD GPU is torch.device('cuda')); fails only on a machine without a GPU",
         "hard-coded CUDA device without a fallback: fails on machines without a GPU",
         "device = torch.accelerator.current_accelerator(check_available=True) or torch.device('cpu') "
         "(torch >= 2.7; older: torch.device('cuda' if torch.cuda.is_available() else 'cpu')), then .to(device)",
         "model = Net().cuda()"),
]  # fmt: skip

# Modules without parameters or buffers, made with no argument that could give them one: nn.CrossEntropyLoss() and
# nn.Softmax(dim=1) hold no tensor, so .cuda() moves nothing and runs on any machine (a class weight is a buffer)
PARAMETER_FREE = re.compile(
    r"(L1|MSE|CrossEntropy|NLL|BCE|KLDiv|Huber|SmoothL1|SoftMargin|CosineEmbedding|MarginRanking|HingeEmbedding"
    r"|TripletMargin|PoissonNLL|GaussianNLL|CTC)Loss|(Log)?Softmax|Softmin|ReLU6?|LeakyReLU|GELU|SiLU|Mish|Sigmoid|Tanh"
    r"|Hardtanh|Hardswish|Hardsigmoid|S?ELU|CELU|Dropout([123]d)?|Identity|Flatten|(Adaptive)?(Max|Avg)Pool[123]d"
)
SAFE_OPTIONS = {"reduction", "ignore_index", "label_smoothing", "dim", "inplace", "p", "negative_slope", "beta",
                "delta", "margin", "eps", "log_target", "full", "approximate", "kernel_size", "stride", "padding",
                "output_size", "blank", "zero_infinity", "alpha", "start_dim", "end_dim", "size_average", "reduce",
                "swap"}  # fmt: skip
OPTION_NAMES = {"args", "opt", "opts", "options", "config", "cfg", "flags", "FLAGS", "hparams", "params"}


def _moves_nothing(call: ast.Call) -> bool:
    """nn.CrossEntropyLoss().cuda(): a module without parameters or buffers."""
    made = call.func.value if isinstance(call.func.value, ast.Call) else None
    module = dotted(made.func) if made else ""
    empty = made and module.startswith(("nn.", "torch.nn.")) and PARAMETER_FREE.fullmatch(module.split(".")[-1])
    return bool(empty) and all(k.arg in SAFE_OPTIONS for k in made.keywords) and all(
        isinstance(a, ast.Constant) and not module.endswith("Loss") for a in made.args)  # fmt: skip


def _falls_back(m, add_argument: ast.Call) -> bool:
    """parser.add_argument("--device", default="cuda") whose value a GPU check replaces later (args.device)."""
    _, dest = option(add_argument)
    parsed = [n for n in m.nodes if isinstance(n, ast.Assign) and isinstance(n.value, ast.Call)
              and dotted(n.value.func).endswith(("parse_args", "parse_known_args"))]  # fmt: skip
    names = {ast.unparse(t.elts[0] if isinstance(t, ast.Tuple) else t) for n in parsed for t in n.targets}
    return bool(dest) and any(f"{name}.{dest}" in m.fallback for name in names or OPTION_NAMES)


def _call(m, node: ast.Call, compared: set[int]) -> None:
    attr = node.func.attr if isinstance(node.func, ast.Attribute) else None
    name, text = dotted(node.func), ast.unparse(node)[:60]
    if attr == "cuda" and not m.guarded(node) and not _moves_nothing(node):
        m.add(node.func, "PC101", f": {text}")
    elif name in ("torch.device", "device") and node.args and is_cuda_str(node.args[0]) and not (
            m.guarded(node) or id(node) in compared):  # fmt: skip  # (a comparison moves nothing)
        m.add(node, "PC101", f": {text}")
    elif attr == "to" and node.args and is_cuda_str(node.args[0]) and not m.guarded(node):
        m.add(node, "PC101", f": {text}")
    for k in node.keywords:
        if k.arg == "device" and is_cuda_str(k.value) and not m.guarded(node):
            m.add(k.value, "PC101", f": device={k.value.value!r}")
        if k.arg == "default" and attr == "add_argument" and is_cuda_str(k.value) and not _falls_back(m, node):
            m.add(k.value, "PC101", f": a command-line default of {k.value.value!r}")


def check(m) -> None:
    compared = {id(x) for n in m.nodes if isinstance(n, ast.Compare) for x in [n.left, *n.comparators]}
    for node in m.nodes:
        if isinstance(node, ast.Call):
            _call(m, node, compared)
        elif isinstance(node, ast.Assign | ast.AnnAssign):  # (AnnAssign: a dataclass field, device: str = "cuda")
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if (
                is_cuda_str(node.value)
                and not m.guarded(node)
                and any(re.search("device", dotted(t), re.I) for t in targets)
                and not any(m.key(t) in m.fallback for t in targets if isinstance(t, ast.Name | ast.Attribute))
            ):
                m.add(node.value, "PC101", f": {ast.unparse(node)[:60]}")  # fmt: skip
