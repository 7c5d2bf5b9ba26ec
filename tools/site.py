"""Build the course's website: the lessons with the outputs of a run, the README as landing page, docs/ as manuals.

Used by `make site`. Assembles a Sphinx source folder (default build/site-src) and runs Sphinx with myst-nb on it
(configuration: docs/conf.py):

- index.md: the README (the curriculum and the agenda), with a table of contents;
- notebooks/NN_*.ipynb: each lesson as `make run` executed it (build/executed), or as stored when it has not run;
  under its title a box that names where it ran, read from build/summary.json, and a box "Run this lesson yourself";
- docs/*.md: the tools' manuals and the workshop and CI guides;
- results.md: the numbers each lesson recorded, per run (this run's summary.json and any other given, such as one
  from a GPU machine), and `make gpu-check`'s summary when one is given;
- every other file a page links to (helpers/device.py, notebooks/assets/...), copied, so Sphinx serves it.

    python tools/site.py [--executed build/executed] [--summary build/summary.json ...] [--gpu-check FILE.md]
                         [--src build/site-src] [--out build/site]

Needs requirements-site.txt (Sphinx, myst-nb, the theme), not the lessons' packages: it imports no torch.
"""

from __future__ import annotations

import argparse
import html
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WIDGET = "application/vnd.jupyter.widget-view+json"
LINK = re.compile(r"(!?)\[([^\]]*)\]\(([^)\s]+)\)")


def page_link(target: str, page: Path, src: Path) -> str | None:
    """Where a relative link of `page` (a path in the repository) points on the site; None: drop the link.

    Lessons and docs are pages; README.md is the landing page; any other file is copied into `src` (Sphinx then
    serves it as a download); a folder is no page, so its link goes.
    """
    path, _, anchor = target.partition("#")
    if re.match(r"[a-z]+:", target) or not path:
        return target
    repo_path = (ROOT / page.parent / path).resolve()
    if not repo_path.exists():
        return target  # Sphinx reports it, and the build fails: a broken link in the repository
    rel = repo_path.relative_to(ROOT)
    if rel == Path("README.md"):
        path = path.replace("README.md", "index.md")
    elif repo_path.is_dir():
        return None
    elif not (rel.suffix == ".ipynb" or (rel.parts[0] == "docs" and rel.suffix == ".md")):
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(repo_path, src / rel)
    return path + (f"#{anchor}" if anchor else "")


def relink(markdown: str, page: Path, src: Path) -> str:
    """The Markdown of `page` with its links pointing where they do on the site (page_link)."""

    def one(m: re.Match) -> str:
        bang, text, target = m.groups()
        new = page_link(target, page, src)
        return text if new is None else f"{bang}[{text}]({new})"

    return LINK.sub(one, markdown)


def widget_text(model_id: str, state: dict) -> str | None:
    """A tqdm progress bar's last state as the text line a terminal shows, from the notebook's saved widget state.

    tqdm.notebook draws an HBox of [HTML: description and percentage, FloatProgress, HTML: counts and rate].
    """
    box = state.get(model_id, {}).get("state", {})
    kids = [state.get(k.removeprefix("IPY_MODEL_"), {}).get("state", {}) for k in box.get("children", [])]
    texts = [html.unescape(k.get("value", "")).strip() for k in kids if k.get("_model_name") == "HTMLModel"]
    return " ".join(t for t in texts if t) or None


def clean_outputs(nb: dict) -> None:
    """Progress-bar widgets become their last line of text (a static page runs no widget); others are dropped."""
    state = nb.get("metadata", {}).get("widgets", {}).get("application/vnd.jupyter.widget-state+json", {})
    for cell in nb["cells"]:
        outputs = []
        for out in cell.get("outputs", []):
            if WIDGET in out.get("data", {}):
                text = widget_text(out["data"][WIDGET]["model_id"], state.get("state", {}))
                if text is None:
                    continue
                out = {"output_type": "stream", "name": "stdout", "text": text + "\n"}
            outputs.append(out)
        cell["outputs"] = outputs
    nb.get("metadata", {}).pop("widgets", None)


def where_it_ran(name: str, summary: dict | None, executed: bool) -> str:
    """The box under a lesson's title: the machine, versions, date and seconds of the run that made its outputs."""
    if not executed:
        return (
            ":::{admonition} Not run for this page\n:class: warning\n"
            "This page shows the notebook as stored, without outputs. `make run && make site` builds it with the "
            "outputs of a run.\n:::"
        )
    run = (summary or {}).get("notebooks", {}).get(name)
    if run is None:
        return (
            ":::{admonition} Where this page ran: not recorded\n:class: warning\n"
            "These outputs come from a run that build/summary.json does not list (it lists the last `make run`).\n:::"
        )
    m = summary["machine"]
    facts = [m["gpu_arch"]] if m.get("gpu_arch") else []
    if m.get("gpu_count", 0) > 1:
        facts.append(f"{m['gpu_count']} GPUs visible")
    facts.append(f"{m['backend']} backend")
    built = " and ".join(f"{k.upper()} {m[k]}" for k in ("hip", "cuda") if m.get(k))
    torch = f"torch {m['torch']}" + (f" (built with {built})" if built else "")
    profile = summary.get("params") or "the notebook's defaults"
    outcome = "passed" if run["status"] == "pass" else f"**failed**: {run.get('error') or run['status']}"
    return (
        f":::{{admonition}} Where this page ran\n:class: note\n"
        f"These outputs were made by `make run` on **{m['device']}** ({', '.join(facts)}), {torch}, "
        f"Python {m['python']}. The run finished {summary['finished'][:16].replace('T', ' ')} UTC; this lesson "
        f"took {run['seconds']:.0f} s with {profile} and {outcome}.\n:::"
    )


def run_yourself(name: str) -> str:
    """The box "Run this lesson yourself", on every lesson page."""
    return (
        ":::{admonition} Run this lesson yourself\n:class: tip\n"
        f"Any machine (CPU, NVIDIA, AMD, Apple): clone the course, `make lab`, open `notebooks/{name}.ipynb`. "
        "On an AMD GPU, the ROCm workshop image: `make docker-build && make docker-lab`. "
        "The download button at the top of this page gives the notebook itself.\n:::"
    )


def lesson(path: Path, executed: bool, summary: dict | None, src: Path) -> dict:
    """One lesson as a site page: outputs cleaned, links pointed at the site, the two boxes under the title."""
    nb = json.loads(path.read_text())
    clean_outputs(nb)
    repo_page = Path("notebooks") / path.name
    for cell in nb["cells"]:
        if cell["cell_type"] == "markdown":
            cell["source"] = relink("".join(cell["source"]), repo_page, src)
    boxes = where_it_ran(path.stem, summary, executed) + "\n\n" + run_yourself(path.stem)
    nb["cells"].insert(1, {"cell_type": "markdown", "id": "where-it-ran", "metadata": {}, "source": boxes})
    return nb


def results(summaries: list[dict], gpu_check: str | None) -> str:
    """The page of recorded numbers: one table per run (helpers.record's metrics in each summary.json)."""
    lines = [
        "# Results of the runs",
        "",
        "What each lesson recorded (`helpers.record`), per run, as `make run` saved it.",
    ]
    for s in summaries:
        m = s["machine"]
        lines += ["", f"## {m['device']}, torch {m['torch']}, {s['finished'][:10]}", ""]
        lines += [f"Profile: {s.get('params') or 'defaults'}; GPU architecture: {m.get('gpu_arch') or 'none'}.", ""]
        lines += ["| lesson | measurement | value | better |", "| --- | --- | ---: | --- |"]
        for name, run in s["notebooks"].items():
            if run["status"] != "pass":
                lines.append(f"| {name} | (the lesson failed: nothing recorded) | | |")
            for key, v in run.get("metrics", {}).items():
                lines.append(f"| {name} | {key} | {v['value']:.4g} {v['unit']} | {v['better']} |")
    if gpu_check:
        lines += ["", "## `make gpu-check`", "", gpu_check]
    return "\n".join(lines) + "\n"


def index(readme: str, lessons: list[str], docs: list[str]) -> str:
    """The landing page: the README, then the site's tables of contents (hidden: the sidebar shows them)."""
    toc = [("Lessons", [f"notebooks/{n}" for n in lessons]), ("Manuals", [f"docs/{d}" for d in docs] + ["results"])]
    tail = "".join(f"\n```{{toctree}}\n:hidden:\n:caption: {c}\n\n" + "\n".join(e) + "\n```\n" for c, e in toc)
    return readme + tail


def assemble(a: argparse.Namespace) -> None:
    """Write the Sphinx source folder a.src from the repository, the executed notebooks and the summaries."""
    shutil.rmtree(a.src, ignore_errors=True)
    (a.src / "notebooks").mkdir(parents=True)
    summaries = [json.loads(p.read_text()) for p in a.summary if p.exists()]
    this_run = summaries[0] if summaries and a.summary[0].exists() else None
    names = sorted(p.stem for p in (ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    for name in names:
        ran = a.executed / f"{name}.ipynb"
        path = ran if ran.exists() else ROOT / "notebooks" / f"{name}.ipynb"
        page = lesson(path, ran.exists(), this_run, a.src)
        (a.src / "notebooks" / f"{name}.ipynb").write_text(json.dumps(page, indent=1))
    docs = sorted(p.stem for p in (ROOT / "docs").glob("*.md"))
    (a.src / "docs").mkdir()
    for d in docs:
        text = (ROOT / "docs" / f"{d}.md").read_text()
        (a.src / "docs" / f"{d}.md").write_text(relink(text, Path("docs") / f"{d}.md", a.src))
    readme = relink((ROOT / "README.md").read_text(), Path("README.md"), a.src)
    (a.src / "index.md").write_text(index(readme, names, docs))
    gpu_check = a.gpu_check.read_text() if a.gpu_check else None
    (a.src / "results.md").write_text(results(summaries, gpu_check))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--executed", type=Path, default=ROOT / "build/executed", help="make run's executed notebooks")
    ap.add_argument(
        "--summary",
        type=Path,
        nargs="+",
        default=[ROOT / "build/summary.json"],
        help="summary.json of this run (first), then of other runs for the results page",
    )
    ap.add_argument("--gpu-check", type=Path, help="make gpu-check's summary.md, for the results page")
    ap.add_argument("--src", type=Path, default=ROOT / "build/site-src")
    ap.add_argument("--out", type=Path, default=ROOT / "build/site")
    a = ap.parse_args(argv)
    assemble(a)
    sphinx = [sys.executable, "-m", "sphinx", "-b", "html", "-E", "-q", "-W", "--keep-going"]  # a warning fails it
    cmd = [*sphinx, "-c", str(ROOT / "docs"), str(a.src), str(a.out)]
    rc = subprocess.run(cmd).returncode
    print(f"site: {a.out / 'index.html'}" if rc == 0 else "site: Sphinx failed (its warnings above)")
    return rc


if __name__ == "__main__":
    sys.exit(main())
