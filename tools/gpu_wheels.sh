#!/usr/bin/env bash
# Download the Jupyter/nbval wheels that the lent GPU machine lacks (it has torch, pytest, hypothesis, matplotlib,
# scikit-learn, tqdm, pyyaml, but no Jupyter tooling and no network) into .whl/, for Python 3.12 on x86-64.
# Versions are the ones pinned in this repo's .venv. Then, on the device tool:
#   carry [".whl"], command: "make gpu-check"   (tools/gpu_check.py installs .whl/*.whl into /tmp/site first)
set -euo pipefail
cd "$(dirname "$0")/.."
grep -qx '/.whl/' .git/info/exclude 2>/dev/null || echo '/.whl/' >> .git/info/exclude
PACKAGES="nbval nbformat nbclient jupyter_client jupyter_core ipykernel ipython ipython_pygments_lexers traitlets
pyzmq tornado fastjsonschema jsonschema jsonschema-specifications referencing rpds-py comm debugpy matplotlib-inline
nest-asyncio platformdirs jedi parso prompt_toolkit pexpect ptyprocess stack-data executing asttokens pure-eval
wcwidth decorator"
freeze="$(.venv/bin/python -m pip freeze)"
rm -rf .whl && mkdir -p .whl
for p in $PACKAGES; do
  norm="$(echo "$p" | tr '_' '-' | tr 'A-Z' 'a-z')"
  pin="$(echo "$freeze" | tr '_' '-' | grep -i "^${norm}==" || true)"
  python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_17_x86_64 \
    --platform manylinux2014_x86_64 --platform manylinux1_x86_64 -d .whl "${pin:-$p}"
done
du -sh .whl
