"""The website's pages (tools/site.py): links that work on the site, progress bars as text, where each lesson ran.

Sphinx, the link check and the browser test run in `make site-check` (part of `make test`); these tests hold the
page assembly to its rules without them.
"""

import json
from pathlib import Path

from tools import site

ROOT = Path(__file__).parent.parent

ROCM_RUN = {
    "finished": "2026-11-30T21:04:11+00:00",
    "params": "params/full.yaml",
    "machine": {
        "device": "cuda:0 (AMD Instinct MI300X)",
        "backend": "rocm",
        "gpu_arch": "gfx942",
        "gpu_count": 8,
        "torch": "2.9.1+rocm6.4",
        "hip": "6.4.43484",
        "cuda": None,
        "python": "3.12.3",
    },
    "notebooks": {
        "02_mixed_precision": {
            "status": "pass",
            "seconds": 61.4,
            "error": None,
            "metrics": {"images_per_s/bf16": {"value": 2311.5, "unit": "images/s", "better": "higher"}},
        },
        "06_multi_gpu_rccl": {"status": "fail", "seconds": 480.0, "error": "CellTimeoutError", "metrics": {}},
    },
}


def test_links_to_lessons_and_docs_stay_and_the_readme_becomes_the_landing_page(tmp_path):
    text = "[02](02_mixed_precision.ipynb), [top](../README.md#running-a-workshop), [ci](../docs/conf.py)"
    out = site.relink(text, Path("notebooks/01_device_mapping.ipynb"), tmp_path)
    assert out == "[02](02_mixed_precision.ipynb), [top](../index.md#running-a-workshop), [ci](../docs/conf.py)"


def test_a_linked_file_is_copied_into_the_site_and_a_folder_link_keeps_only_its_text(tmp_path):
    text = "see [`device.py`](helpers/device.py) and [the sources](notebooks/assets/csrc/)"
    out = site.relink(text, Path("README.md"), tmp_path)
    assert out == "see [`device.py`](helpers/device.py) and the sources"
    assert (tmp_path / "helpers/device.py").read_text() == (ROOT / "helpers/device.py").read_text()


def test_a_broken_link_is_left_for_sphinx_to_report(tmp_path):
    assert site.relink("[x](no/such/file.py)", Path("README.md"), tmp_path) == "[x](no/such/file.py)"
    assert not (tmp_path / "no").exists()


def tqdm_notebook(value: str) -> dict:
    """A cell with tqdm.notebook's bar and the widget state papermill saved for it (lesson 02's, trimmed)."""
    html = {"model_name": "HTMLModel", "state": {"_model_name": "HTMLModel"}}
    state = {
        "box": {
            "model_name": "HBoxModel",
            "state": {"children": ["IPY_MODEL_left", "IPY_MODEL_bar", "IPY_MODEL_right"]},
        },
        "left": {**html, "state": {**html["state"], "value": "benchmark: 100%"}},
        "bar": {"model_name": "FloatProgressModel", "state": {"_model_name": "FloatProgressModel", "value": 3.0}},
        "right": {**html, "state": {**html["state"], "value": value}},
    }
    widget = {"model_id": "box", "version_major": 2, "version_minor": 0}
    shown = {
        "application/vnd.jupyter.widget-view+json": widget,
        "text/plain": "benchmark:   0%|  | 0/3 [00:00<?, ?it/s]",
    }
    cell = {"cell_type": "code", "outputs": [{"output_type": "display_data", "data": shown, "metadata": {}}]}
    widgets = {"application/vnd.jupyter.widget-state+json": {"state": state, "version_major": 2, "version_minor": 0}}
    return {"cells": [cell], "metadata": {"widgets": widgets}}


def test_a_progress_bar_shows_its_last_state_as_text_not_the_0_percent_it_was_displayed_with():
    nb = tqdm_notebook(" 3/3 [00:04&lt;00:00,  2.02s/it]")
    site.clean_outputs(nb)
    assert nb["cells"][0]["outputs"] == [
        {"output_type": "stream", "name": "stdout", "text": "benchmark: 100% 3/3 [00:04<00:00,  2.02s/it]\n"}
    ]
    assert "widgets" not in nb["metadata"]


def test_a_widget_without_saved_state_is_dropped():
    nb = tqdm_notebook("")
    nb["metadata"]["widgets"]["application/vnd.jupyter.widget-state+json"]["state"] = {}
    site.clean_outputs(nb)
    assert nb["cells"][0]["outputs"] == []


def test_the_box_names_the_gpu_its_architecture_and_the_stack_from_the_summary():
    box = site.where_it_ran("02_mixed_precision", ROCM_RUN, executed=True)
    for fact in (
        "cuda:0 (AMD Instinct MI300X)",
        "gfx942",
        "8 GPUs visible",
        "rocm backend",
        "torch 2.9.1+rocm6.4",
        "built with HIP 6.4.43484",
        "Python 3.12.3",
        "2026-11-30 21:04 UTC",
        "61 s",
        "params/full.yaml",
        "passed",
    ):
        assert fact in box, fact
    assert "CUDA" not in box


def test_the_box_says_when_the_lesson_failed_was_not_recorded_or_did_not_run():
    assert "**failed**: CellTimeoutError" in site.where_it_ran("06_multi_gpu_rccl", ROCM_RUN, executed=True)
    assert "not recorded" in site.where_it_ran("03_resnet_port", ROCM_RUN, executed=True)
    assert "Not run for this page" in site.where_it_ran("03_resnet_port", None, executed=False)


def test_a_lesson_page_keeps_its_title_first_and_the_boxes_under_it(tmp_path):
    stored = json.loads((ROOT / "notebooks/01_device_mapping.ipynb").read_text())
    page = site.lesson(json.loads((ROOT / "notebooks/01_device_mapping.ipynb").read_text()), "01_device_mapping",
                       False, None, tmp_path)  # fmt: skip
    assert page["cells"][0]["source"] == "".join(stored["cells"][0]["source"])
    assert "Run this lesson yourself" in page["cells"][1]["source"]
    assert [c["source"] for c in page["cells"][2:] if c["cell_type"] == "code"] == [
        c["source"] for c in stored["cells"][1:] if c["cell_type"] == "code"
    ]


def test_a_translated_page_takes_the_outputs_of_the_english_run_cell_by_cell():
    executed = {"metadata": {"widgets": {"w": 1}}, "cells": [
        {"cell_type": "markdown", "id": "m", "source": "# Lesson"},
        {"cell_type": "code", "id": "c", "source": "print(1)", "execution_count": 3,
         "outputs": [{"output_type": "stream", "name": "stdout", "text": "1\n"}]},
    ]}  # fmt: skip
    zh = {"metadata": {}, "cells": [
        {"cell_type": "markdown", "id": "m", "source": "# 第 01 课"},
        {"cell_type": "markdown", "id": "m-zh_CN-0", "source": "中文版独有的一节"},
        {"cell_type": "code", "id": "c", "source": "print(1)", "execution_count": None, "outputs": []},
    ]}  # fmt: skip
    page = site.with_outputs(zh, executed)
    assert page["cells"][2]["outputs"] == executed["cells"][1]["outputs"] and page["cells"][2]["execution_count"] == 3
    assert [c["source"] for c in page["cells"][:2]] == ["# 第 01 课", "中文版独有的一节"]
    assert page["metadata"]["widgets"] == {"w": 1}


def test_the_chinese_box_names_the_same_facts():
    box = site.where_it_ran("02_mixed_precision", ROCM_RUN, executed=True, lang="zh_CN")
    for fact in ("cuda:0 (AMD Instinct MI300X)", "gfx942", "可见 8 块 GPU", "HIP 6.4.43484", "61 秒", "通过"):
        assert fact in box, fact


def test_the_results_page_lists_each_recorded_number_and_each_failed_lesson():
    page = site.results([ROCM_RUN], gpu_check="| notebook | result |")
    assert "| 02_mixed_precision | images_per_s/bf16 | 2312 images/s | higher |" in page
    assert "| 06_multi_gpu_rccl | (the lesson failed: nothing recorded) | | |" in page
    assert page.rstrip().endswith("| notebook | result |")
