"""Build the course's website: the lessons with the outputs of a run, the README as landing page, docs/ as manuals.

Used by `make site`. Assembles a Sphinx source folder (default build/site-src) and runs Sphinx with myst-nb on it
(configuration: docs/conf.py):

- index.md: the README (the curriculum and the agenda), with a table of contents;
- notebooks/NN_*.ipynb: each lesson as `make run` executed it (build/executed), or as stored when it has not run;
  under its title a box that names where it ran, read from build/summary.json, and a box "Run this lesson yourself";
- docs/**/*.md: the tools' manuals, the workshop, CI and translation guides, the zh-CN glossary;
- results.md: the numbers each lesson recorded, per run (this run's summary.json and any other given, such as one
  from a GPU machine), and `make gpu-check`'s summary when one is given;
- every other file a page links to (helpers/device.py, notebooks/assets/...), copied, so Sphinx serves it.

With --lang zh_CN it builds the Chinese edition (into build/site/zh_CN): the notebooks tools/i18n.py translated,
each with the outputs of the same executed English notebook (the code cells are identical), README.zh-CN.md as
landing page; every page links to its counterpart in the other edition.

    python tools/site.py [--executed build/executed] [--summary build/summary.json ...] [--gpu-check FILE.md]
                         [--lang en|zh_CN] [--src build/site-src] [--out build/site]

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
    serves it as a download); a folder or another Markdown file (README.zh-CN.md) is no page, so its link goes.
    """
    path, _, anchor = target.partition("#")
    if re.match(r"[a-z]+:", target) or not path:
        return target
    repo_path = (ROOT / page.parent / path).resolve()
    if not (repo_path.exists() and repo_path.is_relative_to(ROOT)):
        return target  # Sphinx reports it, and the build fails: a broken link in the repository
    rel = repo_path.relative_to(ROOT)
    if rel == Path("README.md"):
        path = path.replace("README.md", "index.md")
    elif repo_path.is_dir() or (rel.suffix == ".md" and rel.parts[0] != "docs"):
        return None  # a folder, or README.zh-CN.md (the other edition: the header's switch leads there)
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


TEXT = {  # the boxes on a lesson page, per edition
    "en": {
        "not_run": "Not run for this page\n:class: warning\nThis page shows the notebook as stored, without outputs. "
        "`make run && make site` builds it with the outputs of a run.",
        "unknown": "Where this page ran: not recorded\n:class: warning\nThese outputs come from a run that "
        "build/summary.json does not list (it lists the last `make run`).",
        "ran": "Where this page ran\n:class: note\nThese outputs were made by `make run` on **{device}** ({facts}), "
        "{torch}, Python {python}. The run finished {date} UTC; this lesson took {seconds:.0f} s with {profile} and "
        "{outcome}.",
        "gpus": "{n} GPUs visible",
        "backend": "{b} backend",
        "built": " (built with {x})",
        "defaults": "the notebook's defaults",
        "passed": "passed",
        "failed": "**failed**: {e}",
        "yourself": "Run this lesson yourself\n:class: tip\nAny machine (CPU, NVIDIA, AMD, Apple): clone the course, "
        "`make lab`, open `notebooks/{name}.ipynb`. On an AMD GPU, the ROCm workshop image: "
        "`make docker-build && make docker-lab`. The download button at the top of this page gives the notebook "
        "itself.",
    },
    "zh_CN": {
        "not_run": "本页未运行\n:class: warning\n本页显示仓库中保存的笔记本，没有输出。"
        "`make run && make site` 会用一次运行的输出构建它。",
        "unknown": "本页的运行环境：未记录\n:class: warning\n这些输出来自 build/summary.json 没有列出的一次运行"
        "（它只列出最近一次 `make run`）。",
        "ran": "本页在哪里运行\n:class: note\n这些输出由 `make run` 在 **{device}**（{facts}）上生成，{torch}，"
        "Python {python}。运行结束于 {date} UTC；本课用时 {seconds:.0f} 秒，参数：{profile}，结果：{outcome}。"
        "输出保持英文原样：代码与英文版逐字节相同，这是同一次运行的输出。",
        "gpus": "可见 {n} 块 GPU",
        "backend": "{b} 后端",
        "built": "（基于 {x} 构建）",
        "defaults": "笔记本的默认值",
        "passed": "通过",
        "failed": "**失败**：{e}",
        "yourself": "自己运行本课\n:class: tip\n任何机器（CPU、NVIDIA、AMD、Apple）：克隆课程仓库，运行 "
        "`make lab COURSE_LANG=zh_CN`，打开 `{name}.ipynb`。AMD GPU 上可用 ROCm 工作坊镜像："
        "`make docker-build && make docker-lab`。页面顶部的下载按钮可下载本笔记本。",
    },
}


def box(text: str) -> str:
    return f":::{{admonition}} {text}\n:::"


def where_it_ran(name: str, summary: dict | None, executed: bool, lang: str = "en") -> str:
    """The box under a lesson's title: the machine, versions, date and seconds of the run that made its outputs."""
    t = TEXT[lang]
    run = (summary or {}).get("notebooks", {}).get(name)
    if not executed or run is None:
        return box(t["not_run"] if not executed else t["unknown"])
    m = summary["machine"]
    facts = [m["gpu_arch"]] if m.get("gpu_arch") else []
    if m.get("gpu_count", 0) > 1:
        facts.append(t["gpus"].format(n=m["gpu_count"]))
    facts.append(t["backend"].format(b=m["backend"]))
    built = " and ".join(f"{k.upper()} {m[k]}" for k in ("hip", "cuda") if m.get(k))
    torch = f"torch {m['torch']}" + (t["built"].format(x=built) if built else "")
    ok = run["status"] == "pass"
    outcome = t["passed"] if ok else t["failed"].format(e=run.get("error") or run["status"])
    date = summary["finished"][:16].replace("T", " ")
    profile = summary.get("params") or t["defaults"]
    sep = ", " if lang == "en" else "，"
    fields = dict(device=m["device"], facts=sep.join(facts), torch=torch, python=m["python"], date=date)
    return box(t["ran"].format(**fields, seconds=run["seconds"], profile=profile, outcome=outcome))


def run_yourself(name: str, lang: str = "en") -> str:
    """The box "Run this lesson yourself", on every lesson page."""
    return box(TEXT[lang]["yourself"].format(name=name))


def with_outputs(nb: dict, executed: dict) -> dict:
    """A translated notebook with the outputs of the executed English one: the code cells are the same, ids too."""
    ran = {c["id"]: c for c in executed["cells"] if c["cell_type"] == "code"}
    for cell in nb["cells"]:
        if cell["cell_type"] == "code" and cell["id"] in ran:
            cell["outputs"], cell["execution_count"] = ran[cell["id"]]["outputs"], ran[cell["id"]]["execution_count"]
    nb["metadata"]["widgets"] = executed["metadata"].get("widgets", {})
    return nb


def lesson(nb: dict, name: str, executed: bool, summary: dict | None, src: Path, lang: str = "en") -> dict:
    """One lesson as a site page: outputs cleaned, links pointed at the site, the two boxes under the title."""
    clean_outputs(nb)
    repo_page = Path("notebooks") / f"{name}.ipynb"
    for cell in nb["cells"]:
        if cell["cell_type"] == "markdown":
            cell["source"] = relink("".join(cell["source"]), repo_page, src)
    boxes = where_it_ran(name, summary, executed, lang) + "\n\n" + run_yourself(name, lang)
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


CAPTIONS = {"en": ("Lessons", "Manuals"), "zh_CN": ("课程", "手册")}


def index(readme: str, lessons: list[str], docs: list[str], lang: str = "en") -> str:
    """The landing page: the README, then the site's tables of contents (hidden: the sidebar shows them)."""
    lessons_caption, docs_caption = CAPTIONS[lang]
    toc = [(lessons_caption, [f"notebooks/{n}" for n in lessons]), (docs_caption, docs + ["results"])]
    tail = "".join(f"\n```{{toctree}}\n:hidden:\n:caption: {c}\n\n" + "\n".join(e) + "\n```\n" for c, e in toc)
    return readme + tail


def english_anchors(translated: str, english: str) -> str:
    """The translated README with each section also reachable by its English anchor (docs/ link to those).

    The sections are the same, in the same order: a MyST target `(running-a-workshop)=` goes above each heading.
    """
    slugs = iter(re.sub(r"[^\w\- ]", "", h.lower()).replace(" ", "-") for h in re.findall(r"(?m)^## (.+)$", english))
    return re.sub(r"(?m)^## ", lambda m: f"({next(slugs)})=\n## ", translated)


def page_source(name: str, a: argparse.Namespace) -> tuple[dict, bool]:
    """The notebook a lesson page shows, and whether it carries the outputs of a run."""
    ran = a.executed / f"{name}.ipynb"
    if a.lang == "en":
        return json.loads((ran if ran.exists() else ROOT / "notebooks" / f"{name}.ipynb").read_text()), ran.exists()
    nb = json.loads((a.translated / f"{name}.ipynb").read_text())  # tools/i18n.py build
    return (with_outputs(nb, json.loads(ran.read_text())) if ran.exists() else nb), ran.exists()


def assemble(a: argparse.Namespace) -> None:
    """Write the Sphinx source folder a.src from the repository, the executed notebooks and the summaries."""
    shutil.rmtree(a.src, ignore_errors=True)
    (a.src / "notebooks").mkdir(parents=True)
    summaries = [json.loads(p.read_text()) for p in a.summary if p.exists()]
    this_run = summaries[0] if summaries and a.summary[0].exists() else None
    names = sorted(p.stem for p in (ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    for name in names:
        nb, ran = page_source(name, a)
        page = lesson(nb, name, ran, this_run, a.src, a.lang)
        (a.src / "notebooks" / f"{name}.ipynb").write_text(json.dumps(page, indent=1))
    docs = sorted((ROOT / "docs").rglob("*.md"))  # the manuals, and docs/zh_CN/'s glossary in both editions
    for path in docs:
        rel = path.relative_to(ROOT)
        (a.src / rel).parent.mkdir(parents=True, exist_ok=True)
        (a.src / rel).write_text(relink(path.read_text(), rel, a.src))
    front = "README.md" if a.lang == "en" else f"README.{a.lang.replace('_', '-')}.md"
    readme = relink((ROOT / front).read_text(), Path(front), a.src)
    readme = re.sub(r"(?m)^\[English\]\(index\.md\).*\n", "", readme)  # the header's switch links the editions
    if a.lang != "en":
        readme = english_anchors(readme, (ROOT / "README.md").read_text())
    toc = [str(p.relative_to(ROOT).with_suffix("")) for p in docs]
    (a.src / "index.md").write_text(index(readme, names, toc, a.lang))
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
    ap.add_argument("--lang", default="en", choices=sorted(TEXT), help="zh_CN: the edition tools/i18n.py built")
    ap.add_argument("--translated", type=Path, default=ROOT / "build/zh_CN/notebooks", help="for --lang zh_CN")
    ap.add_argument("--src", type=Path, default=ROOT / "build/site-src")
    ap.add_argument("--out", type=Path, default=ROOT / "build/site")
    a = ap.parse_args(argv)
    assemble(a)
    sphinx = [sys.executable, "-m", "sphinx", "-b", "html", "-E", "-q", "-W", "--keep-going"]  # a warning fails it
    if a.lang != "en":
        sphinx += ["-D", f"language={a.lang}", "-D", "html_title=CUDA 到 ROCm 实战"]
    cmd = [*sphinx, "-c", str(ROOT / "docs"), str(a.src), str(a.out)]
    rc = subprocess.run(cmd).returncode
    print(f"site: {a.out / 'index.html'}" if rc == 0 else "site: Sphinx failed (its warnings above)")
    return rc


if __name__ == "__main__":
    sys.exit(main())
