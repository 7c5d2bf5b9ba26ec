"""Execute notebooks with papermill; write HTML, build/summary.md, build/junit.xml and build/summary.json.

Used by `make run`. Each notebook runs in a fresh temporary directory (papermill --cwd), so nothing
is written into the repository; every notebook runs even when an earlier one failed, and the exit
code is 1 when any failed, 2 when the parameters file is wrong (nothing runs then).

    python tools/run_notebooks.py [--params FILE.yaml] [--cell-timeout S] [--out build] NOTEBOOK...

A parameters file maps notebook names (the file name without .ipynb) to papermill parameters; the
section `all` applies to every notebook that runs (see params/smoke.yaml). A parameter that the
notebook's `parameters` cell does not define is an error: papermill itself would only warn, and the
run would silently use the default.
"""

from __future__ import annotations

import argparse
import ast
import json
import platform
import re
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from datetime import UTC, datetime
from pathlib import Path

import nbformat
import papermill
import yaml
from nbconvert import HTMLExporter

from helpers.record import collect

ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


class ParamsError(Exception):
    """The parameters file cannot be used; the message says why, in one line."""


def defined_parameters(nb: Path) -> list[str]:
    """The names the notebook's `parameters` cell assigns (papermill's own parser skips some lines)."""
    cells = [c for c in nbformat.read(nb, as_version=4).cells if "parameters" in c.metadata.get("tags", [])]
    names = []
    for node in ast.parse(cells[0].source).body if cells else []:
        targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
        for t in targets:
            names += [n.id for n in ast.walk(t) if isinstance(n, ast.Name)] if t is not None else []
    return names


def load_params(path: Path, notebooks: list[Path]) -> dict[str, dict]:
    """Parameters per notebook name, checked against each notebook's `parameters` cell."""
    try:
        raw = yaml.safe_load(path.read_text()) or {}
    except (OSError, yaml.YAMLError) as e:
        raise ParamsError(f"cannot read parameters file {path}: {e}") from None
    if not isinstance(raw, dict) or not all(isinstance(v, dict | None) for v in raw.values()):
        raise ParamsError(f"{path} must map notebook names (or `all`) to mappings of parameter names to values")
    known = {p.stem: p for folder in {nb.parent for nb in notebooks} for p in folder.glob("*.ipynb")}
    known.update({nb.stem: nb for nb in notebooks})
    unknown = sorted(set(raw) - set(known) - {"all"})
    if unknown:
        raise ParamsError(f"{path}: no notebook named {', '.join(unknown)} (sections are notebook names or `all`)")
    per_nb = {}
    for nb in [known[s] for s in raw if s != "all"] + [nb for nb in notebooks if nb.stem not in raw]:
        params = {**((raw.get("all") or {}) if nb in notebooks else {}), **(raw.get(nb.stem) or {})}
        defined = defined_parameters(nb)
        extra = sorted(set(params) - set(defined))
        if extra:
            raise ParamsError(
                f"{path}: {nb.name} defines no parameter {', '.join(extra)} "
                f"(its parameters cell has: {', '.join(defined) or 'none'})"
            )
        per_nb[nb.stem] = params
    return per_nb


def machine() -> dict:
    """Where the notebooks run: device, versions. The JSON summary's header."""
    import torch

    from helpers.device import detect, pick_device

    info = detect()
    return {
        "device": f"{pick_device()} ({info.name})",
        "backend": info.backend,
        "gpu_arch": info.arch,
        "gpu_count": info.count if info.backend != "cpu" else 0,
        "torch": torch.__version__,
        "hip": torch.version.hip,
        "cuda": torch.version.cuda,
        "python": platform.python_version(),
        "host": platform.node(),
    }


def failure(e: Exception) -> dict:
    """What went wrong, from papermill's PapermillExecutionError (or any other exception)."""
    ename = getattr(e, "ename", None) or type(e).__name__
    evalue = getattr(e, "evalue", None)
    if evalue is None:  # nbclient's CellTimeoutError: a sentence, then the cell between lines of dashes
        lines = [ln.strip() for ln in str(e).splitlines() if any(ch.isalpha() for ch in ln)]
        evalue = lines[0] if lines else ""
    count = getattr(e, "exec_count", None)
    where = f"cell [{count}]: " if count is not None else ""
    trace = getattr(e, "traceback", None) or [str(e)]
    return {"message": f"{where}{ename}: {evalue}"[:500], "type": ename, "traceback": ANSI.sub("", "\n".join(trace))}


def junit(results: dict[str, dict], info: dict, seconds: float) -> ET.ElementTree:
    """One JUnit test case per notebook, as every CI system displays it."""
    fails = sum(r["status"] != "pass" for r in results.values())
    stamp = datetime.now(UTC).isoformat(timespec="seconds")
    suite = ET.Element("testsuite", name="notebooks", tests=str(len(results)), failures=str(fails), errors="0",
                       skipped="0", time=f"{seconds:.1f}", timestamp=stamp, hostname=info["host"])  # fmt: skip
    props = ET.SubElement(suite, "properties")
    for k in ("device", "backend", "torch", "hip", "cuda", "python"):
        ET.SubElement(props, "property", name=k, value="" if info[k] is None else str(info[k]))
    for name, r in results.items():
        case = ET.SubElement(suite, "testcase", classname="notebooks", name=f"{name}.ipynb", time=f"{r['seconds']:.1f}")
        if r["error"]:
            node = ET.SubElement(case, "failure", message=r["error"]["message"], type=r["error"]["type"])
            node.text = r["error"]["traceback"]
    root = ET.Element("testsuites", name="course notebooks", tests=str(len(results)), failures=str(fails))
    root.append(suite)
    ET.indent(root)
    return ET.ElementTree(root)


def markdown(results: dict[str, dict], info: dict) -> str:
    rows = ["| notebook | status | seconds | device | torch |", "| --- | --- | ---: | --- | --- |"]
    metrics = ["", "| notebook | measured | value | unit |", "| --- | --- | ---: | --- |"]
    for name, r in results.items():
        status = "pass" if r["status"] == "pass" else f"FAIL: {r['error']['message'][:120]}"
        rows.append(f"| {name}.ipynb | {status} | {r['seconds']:.1f} | {info['device']} | {info['torch']} |")
        metrics += [f"| {name} | {k} | {m['value']:.4g} | {m['unit']} |" for k, m in r["metrics"].items()]
    return "\n".join(rows + (metrics if len(metrics) > 3 else [])) + "\n"


def run_one(nb: Path, out: Path, params: dict, cell_timeout: int) -> dict:
    out_nb = out / "executed" / nb.name
    out_nb.unlink(missing_ok=True)
    t0 = time.perf_counter()
    error = None
    try:
        with tempfile.TemporaryDirectory(prefix="course-run-") as cwd:
            papermill.execute_notebook(str(nb), str(out_nb), parameters=params, cwd=cwd, kernel_name="python3",
                                       execution_timeout=cell_timeout, progress_bar=False)  # fmt: skip
    except Exception as e:  # papermill raises PapermillExecutionError; keep going with the next one
        error = failure(e)
    seconds = time.perf_counter() - t0
    metrics = {}
    if out_nb.exists():
        executed = nbformat.read(out_nb, as_version=4)
        metrics = collect(executed)
        html, _ = HTMLExporter().from_notebook_node(executed)
        (out / "html" / (nb.stem + ".html")).write_text(html, encoding="utf-8")
    return {"status": "fail" if error else "pass", "seconds": round(seconds, 1), "error": error, "metrics": metrics}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("notebooks", nargs="+", type=Path)
    ap.add_argument("--params", type=Path, help="YAML file: notebook name (or `all`) -> papermill parameters")
    ap.add_argument("--cell-timeout", type=int, default=600)
    ap.add_argument("--out", type=Path, default=Path("build"))
    a = ap.parse_args(argv)
    missing = [str(nb) for nb in a.notebooks if not nb.is_file()]
    if missing:
        print(f"error: no such notebook: {', '.join(missing)}", file=sys.stderr)
        return 2
    try:
        params = load_params(a.params, a.notebooks) if a.params else {}
    except ParamsError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    (a.out / "executed").mkdir(parents=True, exist_ok=True)
    (a.out / "html").mkdir(parents=True, exist_ok=True)
    info = machine()
    results, t0 = {}, time.perf_counter()
    for nb in a.notebooks:
        print(f"== {nb.name} on {info['device']}", flush=True)
        r = results[nb.stem] = run_one(nb, a.out, params.get(nb.stem, {}), a.cell_timeout)
        status = "FAIL: " + r["error"]["message"] if r["error"] else "pass"
        print(f"   {status} in {r['seconds']} s", flush=True)
    summary = markdown(results, info)
    (a.out / "summary.md").write_text(summary)
    junit(results, info, time.perf_counter() - t0).write(a.out / "junit.xml", encoding="utf-8", xml_declaration=True)
    finished = datetime.now(UTC).isoformat(timespec="seconds")
    doc = {"schema": 1, "finished": finished, "params": str(a.params) if a.params else None, "machine": info,
           "notebooks": results}  # fmt: skip
    (a.out / "summary.json").write_text(json.dumps(doc, indent=1) + "\n")
    print(summary)
    return 1 if any(r["error"] for r in results.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
