# Porting PyTorch from CUDA to AMD GPUs (ROCm): the course's commands.
# Every target creates .venv when it is missing or when a requirements file changed.
#
# Inside the workshop image (Dockerfile) COURSE_SYSTEM_PYTHON=1 is set: the targets then use the
# image's own python3 and its ROCm torch, and never create a venv or install torch.

SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
NOTEBOOKS := $(sort $(wildcard notebooks/[0-9][0-9]_*.ipynb))
LAB_PORT ?= 8888
PARAMS ?=
CELL_TIMEOUT ?= 600

ifeq ($(COURSE_SYSTEM_PYTHON),1)
PY := $(PYTHON)
ENV_STAMP :=
else
PY := $(VENV)/bin/python
ENV_STAMP := $(VENV)/.stamp
endif

.PHONY: help run lab test lint hygiene unit nbval gpu-check clean

help:
	@echo "make run        execute every notebook (papermill) -> build/executed, build/html, build/summary.md"
	@echo "make lab        JupyterLab on 127.0.0.1:$(LAB_PORT), token-protected"
	@echo "make test       lint + notebook hygiene + unit tests + nbval over every notebook"
	@echo "make gpu-check  unit tests + nbval per notebook with a timed summary (for a GPU machine)"

$(VENV)/.stamp: requirements.txt requirements-torch.txt pyproject.toml
	test -x $(VENV)/bin/python || $(PYTHON) -m venv $(VENV)
	$(VENV)/bin/python -m pip install --quiet --upgrade pip
	$(VENV)/bin/python -m pip install --quiet -r requirements-torch.txt -r requirements.txt
	$(VENV)/bin/python -m pip install --quiet --no-deps -e .
	touch $@

run: $(ENV_STAMP)
	$(PY) tools/run_notebooks.py --cell-timeout $(CELL_TIMEOUT) $(if $(PARAMS),--params $(PARAMS)) $(NOTEBOOKS)

lab: $(ENV_STAMP)
	@export JUPYTER_TOKEN="$${JUPYTER_TOKEN-$$($(PY) -c 'import secrets; print(secrets.token_hex(24))')}"; \
	if [ -z "$$JUPYTER_TOKEN" ]; then echo "JUPYTER_TOKEN is empty: refusing to start an open server" >&2; exit 2; fi; \
	root_ok=; if [ "$$(id -u)" = 0 ]; then root_ok=--ServerApp.allow_root=True; \
	  echo "note: running JupyterLab as root (loopback only, token required); prefer a normal user" >&2; fi; \
	echo "Open http://127.0.0.1:$(LAB_PORT)/lab?token=$$JUPYTER_TOKEN"; \
	exec $(PY) -m jupyterlab --no-browser --ServerApp.ip=127.0.0.1 --ServerApp.port=$(LAB_PORT) \
	  --ServerApp.port_retries=0 --ServerApp.root_dir=notebooks $$root_ok

lint: $(ENV_STAMP)
	$(PY) -m ruff check helpers tests tools notebooks
	$(PY) -m ruff format --check helpers tests tools
	@if [ -f Dockerfile ]; then PATH="$(dir $(PY)):$$PATH" hadolint Dockerfile && echo "hadolint: ok"; fi

hygiene: $(ENV_STAMP)
	$(PY) -m pytest -q tests/test_notebook_hygiene.py

unit: $(ENV_STAMP)
	$(PY) -m pytest -q tests

nbval: $(ENV_STAMP)
	$(PY) -m pytest -q --nbval-lax --nbval-current-env --nbval-cell-timeout=$(CELL_TIMEOUT) notebooks/

test: lint unit nbval

gpu-check:
	$(PYTHON) tools/gpu_check.py

clean:
	rm -rf build
