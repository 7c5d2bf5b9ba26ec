"""Output: text for people (fixes once per rule per file, whole descriptions, what each severity means), SARIF."""

from __future__ import annotations

import os
from collections import Counter

from .model import CONTEXT, MEANING, SEVERITIES
from .rules import RULES


def _count(n: int, severity: str) -> str:
    return f"{n} {severity}{'s' * (n != 1 and severity != 'info')}"  # 1 error, 2 errors, 2 info


def format_text(result: dict) -> str:
    """One line per finding; a rule's fix once per file, under its first finding there; then the rules found, each
    described in full, the totals, and what the severities found mean."""
    out, last, fixed = [], None, set()
    for f in result["findings"]:
        if f["path"] != last:
            out += [""] if last is not None else []
            last, fixed = f["path"], set()
        out.append(f"{f['path']}:{f['line']}:{f['col']}: {f['rule']} {f['severity']} {f['message']}")
        if f["fix"] and (f["rule"], f["fix"]) not in fixed:
            out.append(f"    fix: {f['fix']}")
            fixed.add((f["rule"], f["fix"]))
    out += [f"{e['path']}: could not read: {e['error']}" for e in result["errors"]]
    out += [""] if out else []
    for rule, n in result["summary"].items():  # by the severity each finding got
        got = Counter(f["severity"] for f in result["findings"] if f["rule"] == rule)
        how = ", ".join(_count(got[s], s) for s in SEVERITIES if got[s])
        out.append(f"{n:5d}  {rule} ({how}) {RULES[rule].message}")
    n, by = len(result["findings"]), Counter(f["severity"] for f in result["findings"])
    counts = ", ".join(_count(by[s], s) for s in SEVERITIES if by[s]) or "nothing to change"
    files, lines = result["files_scanned"], result["lines_scanned"]
    out.append(f"{n} finding{'s' * (n != 1)} in {files} file{'s' * (files != 1)} ({lines} lines): {counts}")
    out += [f"  {s}: {MEANING[s]}" for s in SEVERITIES if by[s]]
    return "\n".join(out)


def to_sarif(result: dict) -> dict:
    """The result as SARIF 2.1.0 (GitHub code scanning, GitLab, Azure DevOps show it inline)."""
    from helpers import __version__

    level = {"error": "error", "warning": "warning", "info": "note"}
    rules = [{"id": r.id, "shortDescription": {"text": r.message}, "fullDescription": {"text": r.why},
              "help": {"text": r.fix}, "defaultConfiguration": {"level": level[r.severity]}}
             for r in RULES.values()]  # fmt: skip
    index = {r["id"]: i for i, r in enumerate(rules)}
    results = []
    for f in result["findings"]:
        uri = os.path.relpath(f["path"]).replace(os.sep, "/")
        results.append({
            "ruleId": f["rule"], "ruleIndex": index[f["rule"]], "level": level[f["severity"]],
            "message": {"text": f"{f['message']}. Fix: {f['fix']}" if f["fix"] else f["message"]},
            "locations": [{"physicalLocation": {"artifactLocation": {"uri": uri, "uriBaseId": "%SRCROOT%"},
                                                "region": {"startLine": f["line"], "startColumn": f["col"]}}}],
        })  # fmt: skip
    notes = [{"level": "error", "message": {"text": f"{e['path']}: could not read: {e['error']}"}}
             for e in result["errors"]]  # fmt: skip
    driver = {"name": "portcheck", "version": __version__, "rules": rules}
    return {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{"tool": {"driver": driver}, "results": results,
                  "invocations": [{"executionSuccessful": True, "toolExecutionNotifications": notes}]}],
    }  # fmt: skip


def reference() -> str:
    """The rule reference of docs/portcheck.md, made from the rules' metadata and model.CONTEXT (a test keeps the
    file in step: ``python tools/portcheck_reference.py`` rewrites it)."""

    def row(cells) -> str:
        return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"

    out = ["| rule | severity | what it reports | why that severity | fix | example |", "| --- " * 6 + "|"]
    for r in RULES.values():
        example = "<br>".join(f"`{x}`" for x in r.example.splitlines())
        out.append(row([r.id, r.severity, r.message, r.why, r.fix, example]))
    out += ["", "Where a finding's context changes its rule's severity (nothing else does):", "",
            "| context | severity | when |", "| --- | --- | --- |"]  # fmt: skip
    out += [row([name, sev, why]) for name, (sev, why) in CONTEXT.items()]
    return "\n".join(out)
