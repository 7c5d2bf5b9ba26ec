"""Record a lesson's key numbers, so that `make run` collects them into build/summary.json.

The idea is papermill/scrapbook's "glue": a number is *displayed* with its own MIME type, so it lands in the
executed notebook's outputs; the runner reads it back from there (no parsing of printed text). In JupyterLab it
shows nothing (its plain-text part is empty: plumbing, not part of the lesson); in a plain Python script it is
printed.

    >>> record("images_per_s/fp32", 812.4, unit="images/s", better="higher")   # outside a notebook
    recorded images_per_s/fp32 = 812.4 images/s

Imports no torch.
"""

from __future__ import annotations

import math
from numbers import Real

MIME = "application/vnd.rocm-course.metric+json"
BETTER = (None, "higher", "lower")  # which way is an improvement; None: neither (e.g. a count)


def record(name: str, value: float, unit: str = "", better: str | None = None) -> None:
    """Tag `name = value unit` for `make run`: quietly in a notebook, printed in a script."""
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"a metric needs a non-empty name, got {name!r}")
    if isinstance(value, bool) or not isinstance(value, Real) or not math.isfinite(value):
        raise ValueError(f"metric {name!r}: value must be a finite number, got {value!r}")
    if better not in BETTER:
        raise ValueError(f"metric {name!r}: better must be one of {BETTER}, got {better!r}")
    data = {"name": name.strip(), "value": float(value), "unit": unit, "better": better}
    text = f"recorded {data['name']} = {data['value']:.4g} {unit}".rstrip()
    try:
        from IPython import get_ipython
        from IPython.display import display
    except ImportError:  # no IPython at all: a plain script
        get_ipython = None
    shell = get_ipython() if get_ipython is not None else None
    if type(shell).__name__ == "ZMQInteractiveShell":  # a Jupyter kernel: JupyterLab, papermill, nbval
        display({MIME: data, "text/plain": ""}, raw=True)  # (a renderer for every front end: an empty line)
    else:  # a script, or IPython in a terminal
        print(text)


def collect(notebook: dict) -> dict[str, dict]:
    """The numbers an executed notebook recorded, by name (a later record of the same name wins).

    `notebook` is the notebook as nbformat (or `json.load`) gives it.
    """
    found = {}
    for cell in notebook.get("cells", []):
        for out in cell.get("outputs", []) or []:
            data = (out.get("data") or {}).get(MIME)
            if isinstance(data, dict) and isinstance(data.get("name"), str):
                found[data["name"]] = {k: data.get(k) for k in ("value", "unit", "better")}
    return found
