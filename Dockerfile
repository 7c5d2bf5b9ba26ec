# The workshop image: JupyterLab and the course on AMD GPUs, with the base image's own ROCm build of PyTorch.
#   make docker-build && make docker-lab      (README: "Run the workshop on an AMD GPU")
# A newer base is a one-line change (or: docker build --build-arg BASE_IMAGE=rocm/pytorch:<full tag> .).
ARG BASE_IMAGE=rocm/pytorch:rocm6.4.1_ubuntu24.04_py3.12_pytorch_release_2.7.1
FROM ${BASE_IMAGE}

ARG COURSE_USER=ubuntu
ARG USER_UID=1000
SHELL ["/bin/bash", "-o", "pipefail", "-c"]
# COURSE_SYSTEM_PYTHON=1 tells the Makefile to use this image's python3 and its ROCm torch: no .venv, no torch install.
ENV COURSE_SYSTEM_PYTHON=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PYTHONUNBUFFERED=1 \
    LAB_IP=0.0.0.0 \
    LAB_PORT=8888

# Ubuntu 24.04 images already have the UID 1000 user "ubuntu"; older bases get it created.
RUN if ! id -u "${COURSE_USER}" >/dev/null 2>&1; then useradd --create-home --uid "${USER_UID}" "${COURSE_USER}"; fi

WORKDIR /workspace/course
COPY requirements.txt pyproject.toml README.md ./
COPY helpers/ helpers/
COPY tools/pin_image_torch.py tools/

# The tooling, never a PyPI torch: a constraints file pins torch & co. to the versions already in the image,
# so no dependency can pull a CUDA build of torch over the ROCm one. The last step fails the build if it did.
RUN python3 tools/pin_image_torch.py | tee /tmp/constraints.txt \
 && python3 -m pip install --no-cache-dir -r requirements.txt -c /tmp/constraints.txt \
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
