"""GPU check: unit tests and nbval over every notebook, run side by side, with a timed summary.

Run by `make gpu-check` on a machine with a GPU (it uses whatever python3 runs it, with its own
torch). Writes summary.md and log.txt to $OUT when that variable is set, else to build/gpu-check/.
Everything must end within GPU_CHECK_BUDGET seconds (default 420): a lent GPU is lent for minutes,
so the jobs run concurrently (GPU_CHECK_JOBS at a time, default 4; the lessons that assert GPU speed ratios are timed
with no other notebook beside them: phases()) and each is stopped at the deadline, after its log gets what its
processes were doing then: their wait states, and every Jupyter kernel's Python stacks.
GPU_CHECK_ONLY="05_,unit" runs only the jobs whose names contain one of those parts. Exit code 1 when anything failed.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import signal
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# Lessons that assert a GPU speed ratio (low precision and the tuned port beat fp32): timed alone on the GPU, one
# after the other, while only lesson 05 (mostly its compilers, on the CPU) runs beside them.
TIMED = ("02_mixed_precision.ipynb", "03_resnet_port.ipynb")
BESIDE_TIMED = ("05_custom_kernels_hipify.ipynb",)  # not the unit tests: tests/test_train.py trains on the GPU


def run(cmd: list[str], log: Path, deadline: float) -> tuple[str, float]:
    """Run cmd until `deadline` (time.monotonic()), writing its output to log; (status, seconds).

    A job still running at the deadline gets a report of what its processes were doing (hang_report), and then
    every one of them is killed, the Jupyter kernels too (they run in sessions of their own, so an orphaned kernel
    would keep the GPU, and a lock in its build folder, for the next run).
    """
    t0 = time.monotonic()
    timeout = deadline - t0
    with log.open("w") as f:
        f.write(f"$ {' '.join(cmd)}\n")
        if timeout < 5:  # earlier jobs spent the budget: say so, rather than a 1 s "deadline" that looks like a hang
            f.write("not started: GPU_CHECK_BUDGET was spent by the jobs before it\n")
            return "FAIL (not started: budget spent)", 0.0
        f.flush()
        proc = subprocess.Popen(cmd, cwd=ROOT, stdout=f, stderr=subprocess.STDOUT)
        try:
            rc = proc.wait(timeout=timeout)
            status = "pass" if rc == 0 else f"FAIL (rc {rc})"
        except subprocess.TimeoutExpired:
            pids = [proc.pid, *descendants(proc.pid)]
            try:
                f.write(hang_report(proc.pid))
            finally:  # whatever the report met, stop every process of the job
                for pid in pids:
                    with contextlib.suppress(OSError):
                        os.kill(pid, signal.SIGKILL)
                proc.wait()
            status = f"FAIL (stopped at the {timeout:.0f} s deadline)"
    return status, time.monotonic() - t0


def phases(names: list[str], workers: int) -> list[list[list[str]]]:
    """The order of the jobs: phases run one after the other, each a list of lanes that run side by side, the jobs of
    a lane one after the other. First the TIMED lessons in one lane, beside the BESIDE_TIMED jobs; then the rest."""
    timed = [n for n in names if n in TIMED]
    first = ([timed] if timed else []) + [[n] for n in names if n in BESIDE_TIMED]
    rest = [[n] for n in names if n not in TIMED and n not in BESIDE_TIMED]
    if workers < 2 or not timed:  # nothing to keep apart
        return [[[n] for n in names]]
    return [p for p in (first, rest) if p]


def processes() -> dict[int, tuple[int, str]]:
    """pid -> (parent pid, "state wait-channel command line") of every process, from /proc (Linux)."""
    table = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        folder, wchan, command = stat.parent, "-", ""
        with contextlib.suppress(OSError):  # either may be unreadable; the parent link is what matters
            wchan = (folder / "wchan").read_text().strip() or "-"
            command = (folder / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
        with contextlib.suppress(OSError, ValueError, IndexError):
            fields = stat.read_text().rsplit(")", 1)[1].split()  # after "pid (name)": state, ppid, ...
            table[int(folder.name)] = (int(fields[1]), f"{fields[0]} {wchan:<24} {command[:200]}")
    return table


def descendants(root: int, table: dict[int, tuple[int, str]] | None = None) -> list[int]:
    """The pids of root's children, their children, and so on."""
    table = processes() if table is None else table
    found, frontier = [], [root]
    while frontier:
        children = [pid for pid, (ppid, _) in table.items() if ppid in frontier]
        found += children
        frontier = children
    return found


def hang_report(root: int, wait_s: float = 2.0) -> str:
    """What a job that ran past its deadline was doing: each of its processes (state, the kernel function it waits
    in, command line), and every thread's Python stack in each Jupyter kernel among them. The kernels register
    faulthandler for SIGUSR1 in the IPython startup file that prepare_env installs; the stacks land in files."""
    table = processes()
    pids = [root, *descendants(root, table)]
    lines = ["", "===== ran past the deadline; its processes (pid ppid state wait-channel command):"]
    lines += [f"{pid} {table[pid][0]} {table[pid][1]}" for pid in pids if pid in table]
    stacks = Path(os.environ.get("GPU_CHECK_STACKS", "/nonexistent"))
    kernels = [pid for pid in pids if (stacks / f"{pid}.txt").exists() and "ipykernel" in table.get(pid, (0, ""))[1]]
    for pid in kernels:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGUSR1)
    time.sleep(wait_s if kernels else 0)
    for pid in kernels:
        with contextlib.suppress(OSError):
            lines += [f"===== Python stacks of kernel {pid} (faulthandler):", (stacks / f"{pid}.txt").read_text()]
    return "\n".join(lines) + "\n"


def clear_build_locks() -> list[Path]:
    """Remove the lock files in lesson 05's build folders. On torch releases that lock with a plain file
    (FileBaton), a build killed at an earlier run's deadline leaves one, and the next load() waits for it forever.
    Nothing builds there yet when the check starts."""
    from torch.utils import cpp_extension

    if hasattr(cpp_extension, "FileLock"):  # an OS lock (torch >= 2.13) dies with its holder: a leftover file is fine
        return []
    locks = sorted(Path(tempfile.gettempdir()).glob("course-fused-ops-*/*/lock"))
    for lock in locks:
        with contextlib.suppress(OSError):  # another user's folder in a shared /tmp
            lock.unlink()
    return locks


# Runs at the start of every IPython kernel of the run (IPYTHONDIR/profile_default/startup): on SIGUSR1, write
# every thread's Python stack to GPU_CHECK_STACKS/<pid>.txt. Works even while the kernel is stuck in C code.
STARTUP = """def _gpu_check_stacks():
    import faulthandler, os, signal
    path = os.path.join(os.environ["GPU_CHECK_STACKS"], f"{os.getpid()}.txt")
    faulthandler.register(signal.SIGUSR1, file=open(path, "w"), all_threads=True)
_gpu_check_stacks()
del _gpu_check_stacks
"""


def prepare_env() -> None:
    """Make `helpers` importable in every child (pytest, kernels), and install carried wheels if any.

    A GPU machine may have torch but no Jupyter tooling and no network: tools/gpu_wheels.sh puts the missing wheels
    in .whl/ beside the working tree that is copied there, and they are installed into /tmp/site for this run.
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
    os.environ.setdefault("COURSE_EXPECT_GPU", "1")  # lessons 00 and 05 in their strict, GPU-expecting mode
    ipython = Path(tempfile.mkdtemp(prefix="gpu-check-ipython-"))  # kernels that can show their stacks (hang_report)
    (ipython / "profile_default" / "startup").mkdir(parents=True)
    (ipython / "profile_default" / "startup" / "00-stacks.py").write_text(STARTUP)
    (ipython / "stacks").mkdir()
    os.environ["IPYTHONDIR"], os.environ["GPU_CHECK_STACKS"] = str(ipython), str(ipython / "stacks")
    sys.path.insert(0, str(ROOT))


def main() -> int:
    start = time.monotonic()
    deadline = start + float(os.environ.get("GPU_CHECK_BUDGET", "420"))
    prepare_env()
    for lock in clear_build_locks():
        print(f"removed {lock}, left by a build an earlier run stopped", flush=True)
    from helpers.device import describe, detect

    out = Path(os.environ.get("OUT") or ROOT / "build" / "gpu-check")
    out.mkdir(parents=True, exist_ok=True)
    info = detect()
    device = f"{info.device} ({info.name}{', ' + info.arch if info.arch else ''})"
    print(describe(info), flush=True)
    py = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    nbval = py + ["-v", "--nbval-lax", "--nbval-current-env", "--nbval-cell-timeout=300"]
    # Tests of tooling a GPU machine lacks (JupyterLab, papermill) are left out there, and the summary says so.
    left_out = [t for t, mod in [("tests/test_lab.py", "jupyterlab"), ("tests/test_run_notebooks.py", "papermill")]
                if importlib.util.find_spec(mod) is None]  # fmt: skip
    jobs = {"unit tests": py + ["tests"] + [f"--ignore={t}" for t in left_out]}
    notebooks = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    for nb in notebooks:
        jobs[nb.name] = nbval + [str(nb.relative_to(ROOT))]
    logs = Path(tempfile.mkdtemp(prefix="gpu-check-"))

    def job(name: str) -> tuple[str, float]:
        status, secs = run(jobs[name], logs / f"{len(name)}-{abs(hash(name))}.log", deadline)
        print(f"{name}: {status} in {secs:.0f} s", flush=True)
        return status, secs

    only = os.environ.get("GPU_CHECK_ONLY")  # e.g. "05_,unit": just the jobs whose names contain one of these
    if only:
        jobs = {k: v for k, v in jobs.items() if any(part and part in k for part in only.split(","))}
    workers = int(os.environ.get("GPU_CHECK_JOBS", "4"))
    results = {}
    for phase in phases(list(jobs), workers):
        with ThreadPoolExecutor(max_workers=workers) as pool:
            for lane, statuses in zip(phase, pool.map(lambda lane: [job(name) for name in lane], phase), strict=True):
                results.update(zip(lane, statuses, strict=True))
    with (out / "log.txt").open("w") as f:
        for name in jobs:
            f.write(f"\n===== {name}: {results[name][0]}\n")
            f.write((logs / f"{len(name)}-{abs(hash(name))}.log").read_text(errors="replace"))
    lines = [f"device: {device}, torch {info.torch_version}, {workers} jobs at a time", ""]
    lines += [f"left out (tooling not installed): {', '.join(left_out)}", ""] if left_out else []
    lines += ["| what | status | seconds |", "| --- | --- | ---: |"]
    lines += [f"| {n} | {s} | {t:.1f} |" for n, (s, t) in sorted(results.items())]
    lines += ["", f"total: {time.monotonic() - start:.0f} s"]
    (out / "summary.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0 if all(s == "pass" for s, _ in results.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
