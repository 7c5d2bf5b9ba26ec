"""Print pip constraints that pin torch & co. to the versions installed in this Python.

The workshop image (Dockerfile) installs the tooling with `-c` on this output, so that no dependency
can replace the image's ROCm build of torch with a CUDA build from PyPI. Where the image keeps its Python differs
by tag (a conda env such as /opt/conda/envs/py_3.12 in older rocm/pytorch images, a venv or the system Python in
newer ones): this must run with the python3 that holds torch, and fails (exit 1) when that one has none.

    python3 tools/pin_image_torch.py > /tmp/constraints.txt
"""

import sys
from importlib import metadata

PINNED = ("torch", "torchvision", "torchaudio", "triton", "pytorch-triton-rocm", "numpy")

if __name__ == "__main__":
    installed = {(d.metadata["Name"] or "").lower(): d.version for d in metadata.distributions()}
    if "torch" not in installed:
        print(f"error: {sys.executable} has no torch: run this with the image's own Python", file=sys.stderr)
        sys.exit(1)
    for name in PINNED:
        if name in installed:
            print(f"{name}=={installed[name]}")
