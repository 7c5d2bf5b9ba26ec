#!/usr/bin/env bash
# Start JupyterLab on the course notebooks, token-protected. Used by `make lab` (LAB_IP=127.0.0.1) and
# by the workshop image's CMD (LAB_IP=0.0.0.0 inside the container; docker publishes it on 127.0.0.1).
# COURSE_LANG=zh_CN serves the Simplified Chinese edition (make lab COURSE_LANG=zh_CN, docker run -e COURSE_LANG).
#   JUPYTER_TOKEN unset -> a random token is generated and printed; set but empty -> refused.
set -euo pipefail
PY="${PY:-python3}"
LAB_IP="${LAB_IP:-127.0.0.1}"
LAB_PORT="${LAB_PORT:-8888}"
COURSE="$(cd "$(dirname "$0")/.." && pwd)"
NOTEBOOKS="${NOTEBOOKS:-$COURSE/notebooks}"
# COURSE_LANG=zh_CN: the Simplified Chinese edition, generated from the English notebooks and i18n/zh_CN/ (never
# edited by hand); its exercise checks answer in Chinese (they read the language from the notebook they run in).
if [ "${COURSE_LANG:-}" = zh_CN ]; then
  "$PY" "$COURSE/tools/i18n.py" build --out "$COURSE/build/zh_CN"
  NOTEBOOKS="$COURSE/build/zh_CN/notebooks"
fi
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
