"""Create the workshop image's user, whatever layout the rocm/pytorch base image has. Run as root in the Dockerfile:

    python3 tools/image_user.py ubuntu            # --dry-run prints the commands instead

Layouts seen in public sources:
- Ubuntu 24.04 bases: ``ubuntu`` has UID 1000;
- images built by PyTorch's CI scripts (``.ci/docker/common/install_user.sh``): ``jenkins`` has UID 1000 (or 1001 on
  some runners) and passwordless sudo, and ``ubuntu`` is deleted on 24.04;
- older or minimal bases: no user with UID 1000.
The course user never reuses another account (``jenkins`` may sudo). It is kept when it exists, else created with
UID 1000 when that is free (the usual host UID), else with the next free UID; ``useradd`` on the second layout would
otherwise fail with "UID 1000 is not unique". It joins ``video`` and ``render`` where the image has them; GPU access
itself comes from ``docker run --group-add`` with the host's GIDs (Makefile).
"""

from __future__ import annotations

import argparse
import subprocess
import sys


def _entries(text: str) -> dict[str, list[str]]:
    """name -> fields, for /etc/passwd or /etc/group text."""
    return {f[0]: f for line in text.splitlines() if len(f := line.strip().split(":")) >= 3 and f[0]}


def plan(name: str, passwd: str, group: str, uid: int = 1000) -> list[list[str]]:
    """The commands that give this image a user ``name``, from the text of its /etc/passwd and /etc/group."""
    users, groups = _entries(passwd), _entries(group)
    commands = []
    if name not in users:
        taken = {f[2] for f in users.values()}
        cmd = ["useradd", "--create-home", "--shell", "/bin/bash"] + ([] if str(uid) in taken else ["--uid", str(uid)])
        if name in groups:  # a group left behind by a deleted user: useradd refuses to create it again
            cmd += ["--gid", name]
        commands.append(cmd + [name])
    extra = [g for g in ("video", "render") if g in groups]
    if extra:
        commands.append(["usermod", "-aG", ",".join(extra), name])
    return commands


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("name")
    ap.add_argument("--uid", type=int, default=1000)
    ap.add_argument("--root", default="/", help="where etc/passwd and etc/group are (tests)")
    ap.add_argument("--dry-run", action="store_true", help="print the commands, run nothing")
    a = ap.parse_args(argv)
    try:
        with open(f"{a.root.rstrip('/')}/etc/passwd") as p, open(f"{a.root.rstrip('/')}/etc/group") as g:
            commands = plan(a.name, p.read(), g.read(), a.uid)
    except OSError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    for cmd in commands:
        print("+", " ".join(cmd))
        if not a.dry_run:
            subprocess.run(cmd, check=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
