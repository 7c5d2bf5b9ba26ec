"""Execute notebooks with papermill, render HTML with nbconvert, and write build/summary.md.

Used by `make run`. Each notebook runs in a fresh temporary directory (papermill --cwd), so nothing
is written into the repository; every notebook runs even when an earlier one failed, and the exit
code is 1 when any failed.

    python tools/run_notebooks.py [--params FILE.yaml] [--cell-timeout S] [--out build] NOTEBOOK...
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import nbformat
import papermill
import yaml
from nbconvert import HTMLExporter


def where() -> tuple[str, str]:
    """(device, torch version) the notebooks will see on this machine."""
    import torch

    from helpers.device import detect, pick_device

    info = detect()
    dev = pick_device()
    return f"{dev} ({info.name})", torch.__version__


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("notebooks", nargs="+", type=Path)
    ap.add_argument("--params", type=Path, help="YAML file of papermill parameters for every notebook")
    ap.add_argument("--cell-timeout", type=int, default=600)
    ap.add_argument("--out", type=Path, default=Path("build"))
    a = ap.parse_args(argv)
    params = {}
    if a.params:
        try:
            params = yaml.safe_load(a.params.read_text()) or {}
        except (OSError, yaml.YAMLError) as e:
            print(f"error: cannot read parameters file {a.params}: {e}", file=sys.stderr)
            return 2
        if not isinstance(params, dict):
            print(f"error: {a.params} must hold a mapping of parameter names to values", file=sys.stderr)
            return 2
    (a.out / "executed").mkdir(parents=True, exist_ok=True)
    (a.out / "html").mkdir(parents=True, exist_ok=True)
    device, torch_version = where()
    rows, failed = [], 0
    for nb in a.notebooks:
        out_nb = a.out / "executed" / nb.name
        t0 = time.perf_counter()
        status = "pass"
        print(f"== {nb.name} on {device}", flush=True)
        try:
            with tempfile.TemporaryDirectory(prefix="course-run-") as cwd:
                papermill.execute_notebook(
                    str(nb),
                    str(out_nb),
                    parameters=params,
                    cwd=cwd,
                    kernel_name="python3",
                    execution_timeout=a.cell_timeout,
                    progress_bar=False,
                )
        except Exception as e:  # papermill raises PapermillExecutionError; keep going with the next one
            status, failed = f"FAIL: {str(e).strip().splitlines()[-1][:120]}", failed + 1
        seconds = time.perf_counter() - t0
        if out_nb.exists():
            html, _ = HTMLExporter().from_notebook_node(nbformat.read(out_nb, as_version=4))
            (a.out / "html" / (nb.stem + ".html")).write_text(html, encoding="utf-8")
        rows.append(f"| {nb.name} | {status} | {seconds:.1f} | {device} | {torch_version} |")
        print(f"   {status} in {seconds:.1f} s", flush=True)
    summary = "\n".join(["| notebook | status | seconds | device | torch |", "| --- | --- | ---: | --- | --- |", *rows])
    (a.out / "summary.md").write_text(summary + "\n")
    print(summary)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
