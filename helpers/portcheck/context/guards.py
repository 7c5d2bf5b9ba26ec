"""Where a module's code runs only with a GPU: the branches, functions and lines that a GPU test guards.

A hard-coded GPU inside such a guard is right (PC101 says nothing there). What counts as a guard:
- an ``if`` (a conditional expression, a ``while``) that tests the GPU (``torch.cuda.is_available()``,
  ``device_count()``, a name this module sets from such a test, a function of it that returns one): its branch that
  runs with a GPU (the body; the ``else`` of ``if not torch.cuda.is_available():``);
- an ``if`` that tests a user's request for GPUs (``if num_gpus > 1:``, ``if cfg.NUM_GPUS:``, ``if self.use_gpu:``,
  ``args.device == "cuda"``, ``args.gpu is not None``), unless the module itself sets that value to a constant;
- a test that a marker skips where no GPU is (``@pytest.mark.skipif(not torch.cuda.is_available(), ...)``,
  ``@unittest.skipUnless``, ``@require_torch_gpu``, a module's ``pytestmark``), a Ray actor that asks for GPUs;
- the rest of a block after ``assert torch.cuda.is_available()`` or ``if not torch.cuda.is_available(): return``;
- a class's own ``cuda()`` and ``to()`` methods.
Only this module is read: a guard in a caller or in another module is not seen (the finding is a warning).
"""

from __future__ import annotations

import ast
import re

from ..pyast import dotted, functions, is_cpu, is_cuda_str

GUARD = re.compile(
    r"is_available|cuda_available|device_count|current_accelerator|\.type\s*==\s*['\"]cuda|\bis_cuda\b|==\s*['\"]nccl"
)
GPU_CHECK = (  # a test of the GPU itself (not of torch.distributed or MPS): for `if not ...: return` and flags
    r"cuda\.is_available|cuda\.device_count|accelerator\.(is_available|device_count)|cuda_available|\bdevice_count\("
)
MACHINE = r"is_available|cuda_available|device_count"  # a test of the machine (not of a tensor), for skip markers
GPU_COUNT = re.compile(r"(num|n)_?gpus?", re.I)
GPU_INDEX = re.compile(r"(local_)?gpus?(_ids?|_index)?", re.I)  # args.gpu: the GPU a user picked, None for none
GPU_SWITCH = re.compile(r"(use|on|to|copy_to|move_to|run_on|enable)_(gpu|cuda)s?", re.I)  # cfg.USE_CUDA


def asked_gpu(test, switches: set[str]) -> bool:
    """A test that a user asked for GPUs: a count (`num_gpus > 1`, `if cfg.NUM_GPUS:`, `> 0`, `!= 0`), a switch
    (`if self.use_gpu:`), a device choice compared with the GPU (`args.device == "cuda"`) or a picked GPU (`args.gpu
    is not None`, `gpu_id >= 0`); in an `and`, or in every part of an `or`; not a value the code sets itself
    (``switches``)."""
    if isinstance(test, ast.BoolOp):
        parts = [asked_gpu(v, switches) for v in test.values]
        return any(parts) if isinstance(test.op, ast.And) else all(parts)
    name = test.left if isinstance(test, ast.Compare) else test
    if not isinstance(name, ast.Name | ast.Attribute) or dotted(name) in switches:
        return False
    last = dotted(name).split(".")[-1]
    if not isinstance(test, ast.Compare):  # if cfg.NUM_GPUS: / if self.use_gpu:
        return bool(GPU_COUNT.fullmatch(last) or GPU_SWITCH.fullmatch(last))
    if len(test.ops) > 1:
        return False
    op, right = test.ops[0], test.comparators[0]
    if isinstance(op, ast.Eq) and re.fullmatch(r"\w*(device|accelerator)\w*", last, re.I):
        chosen = right.args[0] if isinstance(right, ast.Call) and dotted(right.func).endswith("device") and (
            right.args) else right  # fmt: skip  # device == torch.device("cuda") / args.device == "cuda"
        gpu = "accelerator" in last.lower() and isinstance(chosen, ast.Constant) and chosen.value == "gpu"
        return gpu or is_cuda_str(chosen)
    value = -1 if ast.unparse(right) == "-1" else right.value if isinstance(right, ast.Constant) else ""
    if GPU_INDEX.fullmatch(last):  # args.gpu is not None, gpu_id >= 0, gpu_id != -1
        return (isinstance(op, ast.IsNot) and value is None) or (isinstance(op, ast.GtE) and value == 0) or (
            isinstance(op, ast.NotEq) and value == -1)  # fmt: skip
    if type(value) is not int or not GPU_COUNT.fullmatch(last):
        return False
    return (isinstance(op, ast.Gt) and value >= 0) or (isinstance(op, ast.GtE) and value >= 1) or (
        isinstance(op, ast.NotEq) and value == 0)  # fmt: skip


def no_gpu(test, gpu: re.Pattern) -> bool:
    """A test that is true where there is no GPU: not torch.cuda.is_available(), device_count() < 2, == 0, or one of
    them in an `or` (in an `and`, a machine without a GPU can take the other way)."""
    if isinstance(test, ast.BoolOp):
        return isinstance(test.op, ast.Or) and any(no_gpu(v, gpu) for v in test.values)
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return bool(gpu.search(ast.unparse(test.operand)))
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.comparators[0], ast.Constant):
        op, value = test.ops[0], test.comparators[0].value
        below = isinstance(op, ast.Lt) or (isinstance(op, ast.Eq | ast.LtE) and value == 0)
        return below and bool(gpu.search(ast.unparse(test.left)))
    return False


def needs_gpu(test, gpu: re.Pattern) -> bool:
    """A test that is false wherever there is no GPU, so an assert of it stops a CPU-only run: is_available(),
    device_count() > rank; in an `and` one such part is enough, in an `or` every part must be one."""
    if isinstance(test, ast.BoolOp):
        parts = [needs_gpu(v, gpu) for v in test.values]
        return any(parts) if isinstance(test.op, ast.And) else all(parts)
    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        op, left, right = test.ops[0], ast.unparse(test.left), ast.unparse(test.comparators[0])
        return bool((isinstance(op, ast.Gt | ast.GtE) and gpu.search(left) and not gpu.search(right))
                    or (isinstance(op, ast.Lt | ast.LtE) and gpu.search(right) and not gpu.search(left)))  # fmt: skip
    return not isinstance(test, ast.UnaryOp) and bool(gpu.search(ast.unparse(test)))


def gpu_skip(node, machine: re.Pattern) -> bool:
    """A marker that skips a test where no GPU is: unittest.skipIf(not torch.cuda.is_available(), ...), skipUnless,
    pytest.mark.skipif(...), a list of them, or a marker named for a GPU (requires_cuda, require_torch_gpu)."""
    if isinstance(node, ast.List | ast.Tuple):
        return any(gpu_skip(e, machine) for e in node.elts)
    name = dotted(node.func if isinstance(node, ast.Call) else node).split(".")[-1].lower()
    if re.fullmatch(r"requires?_(torch_)?(cuda|gpu|multi_gpu|accelerator)\w*", name):
        return True
    conds = [*(node.args[:1] if isinstance(node, ast.Call) else []),
             *(k.value for k in getattr(node, "keywords", []) if k.arg == "condition")]  # fmt: skip
    if name not in ("skipif", "skipunless") or not conds or not machine.search(cond := ast.unparse(conds[0])):
        return False
    negated = cond.startswith("not ") or bool(re.search(r"device_count\(\)\s*(==\s*0|<)", cond))
    return negated if name == "skipif" else not negated


def gpu_actor(node) -> bool:
    """@ray.remote(num_gpus=1): Ray starts the actor or task only on a worker that has a GPU for it."""
    return isinstance(node, ast.Call) and dotted(node.func).split(".")[-1] == "remote" and any(
        k.arg == "num_gpus" and isinstance(k.value, ast.Constant) and type(k.value.value) in (int, float)
        and k.value.value > 0 for k in node.keywords
    )  # fmt: skip


def is_gpu_test(node) -> bool:
    """An expression true only where there is a GPU: torch.cuda.is_available() (and ...), device_count() > 0; not one
    that picks a device string or has another way to be true."""
    if isinstance(node, ast.BoolOp):
        parts = [is_gpu_test(v) for v in node.values]
        return any(parts) if isinstance(node.op, ast.And) else all(parts)
    if isinstance(node, ast.UnaryOp):
        return False
    strings = {x.value for x in ast.walk(node) if isinstance(x, ast.Constant) and isinstance(x.value, str)}
    return bool(re.search(GPU_CHECK, ast.unparse(node))) and not strings & {"cuda", "cpu"}


def leaves(stmt) -> bool:
    """return, raise, sys.exit(...), exit(...), quit(...), pytest.skip(...): the rest of the block does not run."""
    if isinstance(stmt, ast.Return | ast.Raise):
        return True
    call = stmt.value if isinstance(stmt, ast.Expr) else None
    return isinstance(call, ast.Call) and dotted(call.func) in ("sys.exit", "exit", "quit", "os._exit", "pytest.skip")


def is_main(node) -> bool:
    """if __name__ == "__main__": (the block a script runs)"""
    test = node.test if isinstance(node, ast.If) else None
    return isinstance(test, ast.Compare) and isinstance(test.ops[0], ast.Eq) and {
        ast.unparse(test.left), ast.unparse(test.comparators[0])} == {"__name__", "'__main__'"}  # fmt: skip


def _tests(nodes) -> list:
    """What a module tests: if/while/assert tests, decorators, pytestmark and skip markers assigned to names."""
    tests = [n.test for n in nodes if isinstance(n, ast.If | ast.IfExp | ast.While | ast.Assert)]
    tests += [d for n in nodes if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
              for d in n.decorator_list]  # fmt: skip
    return tests + [n.value for n in nodes if isinstance(n, ast.Assign) and (
        any(dotted(t) == "pytestmark" for t in n.targets)
        or isinstance(n.value, ast.Call) and "skip" in dotted(n.value.func).lower())]  # fmt: skip


class Guards:
    """The guarded lines and expressions of one module, computed once; ``guarded(node)`` asks."""

    def __init__(self, tree: ast.AST, nodes: list, n_lines: int):
        self.tree, self.nodes = tree, nodes
        self.spans: list[tuple[int, int]] = []  # guarded line ranges
        self.ids: set[int] = set()  # guarded expressions (the body of `x if use_gpu else y`)
        guard, gpu, machine = self._patterns()
        self.tests = {id(n): ast.unparse(n.test) for n in nodes if isinstance(n, ast.If | ast.IfExp | ast.While)}
        self._branches(guard, gpu)
        self._requests()
        self._markers(machine)
        self._exits(gpu, machine)
        self._lines = bytearray(n_lines + 2)
        for a, b in self.spans:
            self._lines[a : b + 1] = b"\x01" * (b + 1 - a)
        self.guard = guard

    def guarded(self, node) -> bool:
        return id(node) in self.ids or bool(self._lines[min(node.lineno, len(self._lines) - 1)])

    def _patterns(self) -> tuple[re.Pattern, re.Pattern, re.Pattern]:
        """Regexes of a guard, a GPU test and a machine test, with the names this module sets from one
        (use_cuda = torch.cuda.is_available()) and its functions that return one (def has_gpu(): ...)."""
        nodes = self.nodes
        flags = {dotted(t) for n in nodes if isinstance(n, ast.Assign) and GUARD.search(ast.unparse(n.value))
                 for t in n.targets if isinstance(t, ast.Name | ast.Attribute)}  # fmt: skip
        used = {x.id for t in _tests(nodes) for x in ast.walk(t) if isinstance(x, ast.Name)}
        returns = {n.name for n in getattr(self.tree, "body", []) if isinstance(n, ast.FunctionDef) and n.name in used
                   and (r := [x.value for x in ast.walk(n) if isinstance(x, ast.Return) and x.value is not None])
                   and all(is_gpu_test(x) for x in r)}  # fmt: skip
        strict = {dotted(t) for n in nodes if isinstance(n, ast.Assign) and is_gpu_test(n.value) for t in n.targets}
        strict |= returns
        names = lambda s: "".join(rf"|\b{re.escape(f)}\b" for f in sorted(s) if f)  # noqa: E731
        return (re.compile(GUARD.pattern + names(flags | returns)), re.compile(GPU_CHECK + names(strict)),
                re.compile(MACHINE + names(flags | returns)))  # fmt: skip

    def _branches(self, guard: re.Pattern, gpu: re.Pattern) -> None:
        """An `if` that tests the GPU guards the branch that runs with one; a loop or conditional expression, all."""
        for n in (n for n in self.nodes if id(n) in self.tests and guard.search(self.tests[id(n)])):
            branch = (n.orelse if no_gpu(n.test, gpu) else n.body) if isinstance(n, ast.If) else [n]
            self.spans += [(branch[0].lineno, branch[-1].end_lineno)] if branch else []

    def _requests(self) -> None:
        """`if args.num_gpus > 1:` and the like guard their body, unless the module sets the value itself
        (use_gpu = True, outside a class whose fields a user sets)."""
        in_class = {id(t) for c in self.nodes if isinstance(c, ast.ClassDef) for a in c.body
                    if isinstance(a, ast.Assign) for t in a.targets}  # fmt: skip
        switches = {dotted(t) for n in self.nodes if isinstance(n, ast.Assign) and isinstance(n.value, ast.Constant)
                    for t in n.targets if id(t) not in in_class}  # fmt: skip
        switches |= {dotted(a.target) for a in getattr(self.tree, "body", [])
                     if isinstance(a, ast.AnnAssign) and isinstance(a.value, ast.Constant)}  # fmt: skip
        for n in (n for n in self.nodes if id(n) in self.tests and not isinstance(n, ast.While)):
            if asked_gpu(n.test, switches):
                if isinstance(n, ast.If):
                    self.spans.append((n.body[0].lineno, n.body[-1].end_lineno))
                else:
                    self.ids |= {id(x) for x in ast.walk(n.body)}

    def _markers(self, machine: re.Pattern) -> None:
        """Test functions a marker skips without a GPU (on the function, its class, the module's pytestmark), Ray
        actors that ask for GPUs, and a class's own cuda()/to() methods. Module and class bodies run at import or
        collection on every machine: never guarded."""
        nodes, fns = self.nodes, functions(self.nodes)
        markers = {dotted(t) for n in nodes if isinstance(n, ast.Assign) and gpu_skip(n.value, machine)
                   for t in n.targets}  # fmt: skip  # gpu_test = unittest.skipUnless(torch.cuda.is_available(), ...)
        for d in (n for n in nodes if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)):
            if any(gpu_skip(dec, machine) or dotted(dec) in markers or gpu_actor(dec) for dec in d.decorator_list):
                marked = [d] if not isinstance(d, ast.ClassDef) else [f for f in d.body if f in fns]
                self.spans += [(f.body[0].lineno, f.end_lineno) for f in marked]
        for stmt in getattr(self.tree, "body", []):
            if isinstance(stmt, ast.Assign) and any(dotted(t) == "pytestmark" for t in stmt.targets):
                if gpu_skip(stmt.value, machine):
                    self.spans += [(f.body[0].lineno, f.end_lineno) for f in fns]
        self.spans += [(f.lineno, f.end_lineno) for f in fns if f.name in ("cuda", "to")]

    def _exits(self, gpu: re.Pattern, machine: re.Pattern) -> None:
        """After `assert torch.cuda.device_count() > rank` or `if not torch.cuda.is_available(): return` (raise,
        sys.exit()), the rest of the block (function, module, __main__ block) runs only with a GPU."""
        for block in (getattr(n, f, None) for n in self.nodes for f in ("body", "orelse", "finalbody")):
            for stmt in block if isinstance(block, list) else ():
                if isinstance(stmt, ast.Assert) and needs_gpu(stmt.test, machine):
                    self.spans.append((stmt.end_lineno + 1, block[-1].end_lineno))
        mains = [n for n in getattr(self.tree, "body", []) if is_main(n)]
        for scope in [self.tree, *mains, *functions(self.nodes)]:
            for stmt in getattr(scope, "body", []):
                if isinstance(stmt, ast.If) and not stmt.orelse and no_gpu(stmt.test, gpu) and leaves(stmt.body[-1]):
                    self.spans.append((stmt.end_lineno + 1, scope.body[-1].end_lineno))


def fallbacks(nodes, guard: re.Pattern, key) -> set[str]:
    """Values that a GPU check replaces with a CPU device: `if not torch.cuda.is_available(): args.device = "cpu"`,
    `torch.device(args.device if torch.cuda.is_available() else "cpu")`. ``key`` names a target (see PyModule.key)."""
    out = set()
    for n in (n for n in nodes if isinstance(n, ast.If | ast.IfExp) and guard.search(ast.unparse(n.test))):
        if isinstance(n, ast.IfExp):
            parts = [a for a, b in ((n.body, n.orelse), (n.orelse, n.body)) if is_cpu(b)]
        else:
            parts = [t for stmt in n.body + n.orelse if isinstance(stmt, ast.Assign) and is_cpu(stmt.value)
                     for t in stmt.targets]  # fmt: skip
        out |= {key(x) for p in parts for x in ast.walk(p) if isinstance(x, ast.Name | ast.Attribute)}
    return out
