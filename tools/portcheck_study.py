"""How often portcheck's error findings really break on ROCm, on public projects its rules were not tuned on.

    python tools/portcheck_study.py --src DIR [--labels tests/portcheck/study/labels.jsonl] [--portcheck PATH]

DIR holds one exported snapshot per project, named owner+name (the commits are in the labels file). Each label says,
from reading the code and the build that compiles it, whether a finding's line breaks on ROCm (fails to build, to
run, or computes wrong). A PC101 finding never does: a hard-coded GPU runs unchanged on ROCm. Lines that break but
got no error finding ("missed") count for recall. ``--portcheck PATH`` scans with the portcheck found under PATH (an
older checkout) instead of this one. Prints, per rule and in all: error findings, labelled, breaking, precision;
then the same weighted by how many errors each labelled project has (where labels are a sample of each
project's findings), and recall over every known breaking line.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections import Counter
from pathlib import Path

LABELS = Path(__file__).resolve().parent.parent / "tests" / "portcheck" / "study" / "labels.jsonl"


def load(path: Path) -> tuple[dict, set, list]:
    """(repo, path, line, rule) -> breaks, and (repo, path, line) -> breaks for lines labelled without a finding
    (the "missed" rows: a line read because a search found it); the breaking lines (repo, path, line); the repos."""
    labels, breaking, repos = {}, set(), []
    for row in map(json.loads, path.read_text().splitlines()):
        if row.get("summary"):
            repos.append(row["repo"])
            continue
        if row.get("missed"):
            labels[row["repo"], row["path"], row["line"]] = row["breaks"]
            breaking |= {(row["repo"], row["path"], row["line"])} if row["breaks"] else set()
            continue
        labels[row["repo"], row["path"], row["line"], row["rule"]] = row["breaks"]
        breaking |= {(row["repo"], row["path"], row["line"])} if row["breaks"] else set()
    return labels, breaking, repos


def errors(scan, root: Path) -> list[tuple[str, int, str]]:
    """(path in the project, line, rule) of every error-severity finding."""
    found = scan([str(root)])["findings"]
    return [(os.path.relpath(f["path"], root), f["line"], f["rule"]) for f in found if f["severity"] == "error"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--src", type=Path, required=True)
    ap.add_argument("--labels", type=Path, default=LABELS)
    ap.add_argument("--portcheck", help="a folder holding the helpers package to scan with")
    a = ap.parse_args()
    if a.portcheck:
        sys.path.insert(0, a.portcheck)
    from helpers.portcheck import scan

    labels, breaking, repos = load(a.labels)
    per_rule, per_repo, reported, unlabelled = Counter(), Counter(), set(), []
    for repo in repos:
        for path, line, rule in errors(scan, a.src / repo.replace("/", "+")):
            reported.add((repo, path, line))
            per_repo[repo, "errors"] += 1
            key = (repo, path, line, rule)
            if rule == "PC101":
                labels[key] = False  # runs unchanged on ROCm, by definition
            per_rule[rule, "errors"] += 1
            key = key if key in labels else key[:3]  # (a line labelled without a finding of this rule)
            if key in labels:
                per_rule[rule, "labelled"] += 1
                per_rule[rule, "breaks"] += labels[key]
                per_repo[repo, "labelled"] += 1
                per_repo[repo, "breaks"] += labels[key]
            else:
                unlabelled.append(key)
    rules = sorted({r for r, _ in per_rule})
    print(f"{len(repos)} projects; portcheck from {scan.__module__} ({sys.modules['helpers'].__file__})")
    print(f"{'rule':6} {'errors':>7} {'labelled':>9} {'breaks':>7} {'precision':>10}")
    for r in [*rules, "all"]:
        keys = ("errors", "labelled", "breaks")
        n = [sum(per_rule[x, k] for x in rules) if r == "all" else per_rule[r, k] for k in keys]
        print(f"{r:6} {n[0]:7d} {n[1]:9d} {n[2]:7d} {n[2] / n[1] if n[1] else 0:10.1%}")
    sampled = [r for r in repos if per_repo[r, "labelled"]]
    weight = sum(per_repo[r, "errors"] for r in sampled)
    share = sum(per_repo[r, "errors"] * per_repo[r, "breaks"] / per_repo[r, "labelled"] for r in sampled)
    print(f"weighted by each project's error count: {share / weight if weight else 0:.1%} (of {weight} errors)")
    hit = len(breaking & reported)
    print(f"recall: {hit} of {len(breaking)} known breaking lines reported at error ({hit / len(breaking):.1%})")
    if unlabelled:
        print(f"{len(unlabelled)} error findings have no label (not counted above); the first: {unlabelled[:3]}")


if __name__ == "__main__":
    main()
