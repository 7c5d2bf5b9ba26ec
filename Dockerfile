# The workshop image: JupyterLab and the course on AMD GPUs, with the base image's own ROCm build of PyTorch.
#   make docker-build && make docker-lab      (docs/workshop.md)
# The newest rocm/pytorch release found (ROCm 10.1, PyTorch 2.14, released 2026-10). Another base is a one-line change
# (or: docker build --build-arg BASE_IMAGE=rocm/pytorch:<full tag> .); the lessons support PyTorch 2.5 and newer.
ARG BASE_IMAGE=rocm/pytorch:rocm10.1.0_ubuntu24.04_py3.12_pytorch_release_2.14.0
FROM ${BASE_IMAGE}

ARG COURSE_USER=ubuntu
ARG USER_UID=1000
SHELL ["/bin/bash", "-o", "pipefail", "-c"]
# COURSE_SYSTEM_PYTHON=1 tells the Makefile to use this image's python3 and its ROCm torch: no .venv, no torch install.
# PIP_BREAK_SYSTEM_PACKAGES: for a base whose torch lives in Ubuntu's system Python, which carries the "externally
# managed" marker (PEP 668); the image is that Python's only user, and the constraints keep its torch. It changes
# nothing where the Python is a venv (/opt/venv in the ROCm 10.x tags) or a conda env (older tags).
ENV COURSE_SYSTEM_PYTHON=1 \
    PIP_BREAK_SYSTEM_PACKAGES=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PYTHONUNBUFFERED=1 \
    LAB_IP=0.0.0.0 \
    LAB_PORT=8888

WORKDIR /workspace/course
COPY tools/image_user.py tools/pin_image_torch.py tools/
# The course user, whatever the base holds: "ubuntu" (UID 1000) in Ubuntu 24.04 bases, "jenkins" at UID 1000 in images
# built by PyTorch's CI scripts (where "ubuntu" is gone), or nobody (tools/image_user.py says which and why).
RUN python3 tools/image_user.py --uid "${USER_UID}" "${COURSE_USER}"
COPY requirements.txt requirements-dev.txt pyproject.toml README.md ./
COPY helpers/ helpers/

# The tooling, never a PyPI torch: a constraints file pins torch & co. to the versions already in the image,
# so no dependency can pull a CUDA build of torch over the ROCm one. The last step fails the build if it did.
# requirements-dev.txt too: the image's `make docker-test` runs nbval, the instructors' pre-flight.
RUN python3 tools/pin_image_torch.py | tee /tmp/constraints.txt \
 && python3 -m pip install --no-cache-dir -r requirements.txt -r requirements-dev.txt -c /tmp/constraints.txt \
 && python3 -m pip install --no-cache-dir --no-deps -e . \
 && python3 -c "import sys, torch; print('torch', torch.__version__, 'HIP', torch.version.hip); sys.exit(torch.version.hip is None)"

COPY --chown=${COURSE_USER}:${COURSE_USER} . .
RUN chown "${COURSE_USER}:${COURSE_USER}" /workspace/course

USER ${COURSE_USER}
EXPOSE 8888
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
  CMD ["python3", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8888/api', timeout=4)"]
# Token from JUPYTER_TOKEN, or a random one printed in the log; never empty, never as root.
CMD ["tools/lab.sh"]
