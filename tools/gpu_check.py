"""GPU check: unit tests, then nbval over every notebook one by one, with a timed summary.

Run by `make gpu-check` on a machine with a GPU (it uses whatever python3 runs it, with its own
torch). Writes summary.md and the logs to $OUT when that variable is set, else to build/gpu-check/.
Exit code 1 when anything failed.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def run(cmd: list[str], log: Path, timeout: int) -> tuple[str, float]:
    """Run cmd, appending its output to log; (status, seconds)."""
    t0 = time.perf_counter()
    try:
        with log.open("a") as f:
            f.write(f"\n$ {' '.join(cmd)}\n")
            f.flush()
            rc = subprocess.run(cmd, cwd=ROOT, stdout=f, stderr=subprocess.STDOUT, timeout=timeout).returncode
        status = "pass" if rc == 0 else f"FAIL (rc {rc})"
    except subprocess.TimeoutExpired:
        status = f"FAIL (timeout {timeout} s)"
    return status, time.perf_counter() - t0


def prepare_env() -> None:
    """Make `helpers` importable in every child (pytest, kernels), and install carried wheels if any.

    The lent GPU machine has torch but no Jupyter tooling: tools/gpu_wheels.sh puts the missing wheels in
    .whl/ here, the device tool carries them, and they are installed into /tmp/site for this run.
    """
    paths = [str(ROOT)]
    wheels = sorted((ROOT / ".whl").glob("*.whl"))
    if wheels:
        site = "/tmp/site"
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-index", "--no-deps", "--no-compile",
                        "--upgrade", "--target", site, *map(str, wheels)], check=True)  # fmt: skip
        paths.append(site)
        sys.path.insert(0, site)
    os.environ["PYTHONPATH"] = os.pathsep.join(paths + [p for p in [os.environ.get("PYTHONPATH")] if p])
    sys.path.insert(0, str(ROOT))


def main() -> int:
    prepare_env()
    from helpers.device import describe, detect

    out = Path(os.environ.get("OUT") or ROOT / "build" / "gpu-check")
    out.mkdir(parents=True, exist_ok=True)
    info = detect()
    device = f"{info.device} ({info.name}{', ' + info.arch if info.arch else ''})"
    print(describe(info), flush=True)
    py = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    rows = []
    status, secs = run(py + ["tests"], out / "unit.log", 300)
    rows.append(("unit tests", status, secs))
    print(f"unit tests: {status} in {secs:.0f} s", flush=True)
    nbval = py + ["--nbval-lax", "--nbval-current-env", "--nbval-cell-timeout=300"]
    for nb in sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb")):
        status, secs = run(nbval + [str(nb.relative_to(ROOT))], out / "nbval.log", 300)
        rows.append((nb.name, status, secs))
        print(f"{nb.name}: {status} in {secs:.0f} s", flush=True)
    lines = [f"device: {device}, torch {info.torch_version}", "", "| what | status | seconds |", "| --- | --- | ---: |"]
    lines += [f"| {n} | {s} | {t:.1f} |" for n, s, t in rows]
    (out / "summary.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0 if all(s == "pass" for _, s, _ in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
