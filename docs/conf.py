"""Sphinx configuration of the course's website (`make site`; tools/site.py assembles the pages it reads).

Sphinx with myst-nb and the book theme: the stack of AMD's own ROCm documentation (rocm-docs-core) and of Jupyter
Book. The notebooks are rendered with the outputs `make run` saved; nothing is executed here.
"""

import os

project = "Porting PyTorch from NVIDIA CUDA to AMD GPUs (ROCm)"
html_title = "CUDA to ROCm, hands-on"
author = "the course's authors"
language = "en"

extensions = ["myst_nb", "sphinx_copybutton"]
myst_enable_extensions = ["colon_fence"]
myst_heading_anchors = 3  # the README's "#running-a-workshop" links
nb_execution_mode = "off"  # outputs come from `make run`, with the machine they ran on named on each page
nb_merge_streams = True  # one block per stream, carriage returns (progress bars) applied as a terminal would
# helpers.record's numbers travel in their own MIME type (application/vnd.rocm-course.metric+json), which no page
# renders: the results page lists them.
suppress_warnings = ["mystnb.unknown_mime_type"]

html_theme = "sphinx_book_theme"
html_copy_source = False
html_theme_options = {
    "use_download_button": True,  # the .ipynb of a lesson, to run it yourself
    "repository_url": os.environ.get("SITE_REPO_URL", ""),
    "use_repository_button": bool(os.environ.get("SITE_REPO_URL")),
    "show_toc_level": 2,
    "article_header_end": ["article-header-buttons.html", "language-switch.html"],  # English | 中文
}
templates_path = ["_templates"]
copybutton_exclude = ".linenos, .gp, .go"  # copy commands, not prompts or outputs
html_context = {"default_mode": "auto"}  # light or dark as the reader's system says (and no console error)
html_favicon = "_static/favicon.svg"
html_static_path = ["_static"]
html_css_files = ["course.css"]


def _search_dict(confdir: str) -> str:
    """A jieba dictionary of the glossary's terms, so Chinese search finds 混合精度 as one word, not 混合 + 精度."""
    import re
    from pathlib import Path

    table = (Path(confdir) / "zh_CN" / "glossary.md").read_text()
    cells = re.findall(r"(?m)^\| [^|]+ \| ([^|]+) \|", table)  # the column "本课程的译法"
    terms = {t for cell in cells for t in re.findall(r"[\u4e00-\u9fff]{2,}", cell)}
    out = Path(confdir).parent / "build" / "jieba-glossary.txt"
    out.parent.mkdir(exist_ok=True)
    out.write_text("".join(f"{t} 100000 n\n" for t in sorted(terms)))
    return str(out)


html_search_options = {"dict": _search_dict(os.path.dirname(os.path.abspath(__file__)))}  # read by zh_CN only
