"""`make lab` starts JupyterLab on loopback with a token; the API refuses requests without it."""

import json
import os
import secrets
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).parent.parent


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get(url, token=None):
    req = urllib.request.Request(url, headers={"Authorization": f"token {token}"} if token else {})
    try:
        with urllib.request.urlopen(req, timeout=5) as r:
            return r.status, json.load(r)
    except urllib.error.HTTPError as e:
        return e.code, None


def test_make_lab_serves_notebooks_with_token_only():
    port, token = free_port(), secrets.token_hex(16)
    env = {**os.environ, "JUPYTER_TOKEN": token}
    proc = subprocess.Popen(
        ["make", "-s", "lab", f"LAB_PORT={port}"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        url = f"http://127.0.0.1:{port}/api/contents"
        deadline = time.time() + 60
        while True:
            try:
                status, body = get(url, token)
                break
            except (urllib.error.URLError, ConnectionError):
                assert proc.poll() is None, proc.stdout.read()
                assert time.time() < deadline, "JupyterLab did not start in 60 s"
                time.sleep(0.5)
        assert status == 200
        names = {item["name"] for item in body["content"]}
        assert {p.name for p in (ROOT / "notebooks").glob("*.ipynb")} <= names
        assert get(url)[0] == 403
        assert get(url, "wrong-" + token)[0] == 403
        # The first screen asks no question: JupyterLab's news prompt ("Would you like to get notified about official
        # Jupyter news?") shows while fetchNews is "none", the default of apputils-extension's notification schema.
        # The course's defaults (tools/jupyter/labconfig) replace the schema's, so the lab itself sees "false".
        plugin = f"http://127.0.0.1:{port}/lab/api/settings/@jupyterlab/apputils-extension:notification"
        status, notification = get(plugin, token)
        defaults = {k: v["default"] for k, v in notification["schema"]["properties"].items()}
        assert status == 200 and defaults["fetchNews"] == "false" and defaults["checkForUpdates"] is False
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        out = proc.communicate(timeout=30)[0]
    assert f"http://127.0.0.1:{port}/lab?token={token}" in out


def test_make_lab_refuses_an_empty_token():
    env = {**os.environ, "JUPYTER_TOKEN": ""}
    r = subprocess.run(
        ["make", "-s", "lab", f"LAB_PORT={free_port()}"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    assert r.returncode != 0 and "empty" in r.stderr
