#!/usr/bin/env bash
# Start JupyterLab on the course notebooks, token-protected. Used by `make lab` (LAB_IP=127.0.0.1) and
# by the workshop image's CMD (LAB_IP=0.0.0.0 inside the container; docker publishes it on 127.0.0.1).
#   JUPYTER_TOKEN unset -> a random token is generated and printed; set but empty -> refused.
set -euo pipefail
PY="${PY:-python3}"
LAB_IP="${LAB_IP:-127.0.0.1}"
LAB_PORT="${LAB_PORT:-8888}"
NOTEBOOKS="${NOTEBOOKS:-$(cd "$(dirname "$0")/.." && pwd)/notebooks}"
if [ -z "${JUPYTER_TOKEN+set}" ]; then
  JUPYTER_TOKEN="$("$PY" -c 'import secrets; print(secrets.token_hex(24))')"
elif [ -z "$JUPYTER_TOKEN" ]; then
  echo "JUPYTER_TOKEN is set but empty: refusing to start a server without a token" >&2
  exit 2
fi
export JUPYTER_TOKEN
# The course's JupyterLab defaults (tools/jupyter/labconfig): no "get notified about official Jupyter news?" prompt
# and no update check on a workshop seat. Defaults only: a learner's own settings still win.
export JUPYTER_CONFIG_PATH="$(cd "$(dirname "$0")" && pwd)/jupyter${JUPYTER_CONFIG_PATH:+:$JUPYTER_CONFIG_PATH}"
extra=()
if [ "$(id -u)" = 0 ]; then  # root on a dev box or CI; the workshop image runs as a normal user
  echo "note: running JupyterLab as root (token required); prefer a normal user" >&2
  extra+=(--ServerApp.allow_root=True)
fi
echo "Open http://127.0.0.1:${LAB_PORT}/lab?token=${JUPYTER_TOKEN}"
exec "$PY" -m jupyterlab --no-browser --ServerApp.ip="$LAB_IP" --ServerApp.port="$LAB_PORT" \
  --ServerApp.port_retries=0 --ServerApp.root_dir="$NOTEBOOKS" "${extra[@]}"
