"""Print pip constraints that pin torch & co. to the versions installed in this Python.

The workshop image (Dockerfile) installs the tooling with `-c` on this output, so that no dependency
can replace the image's ROCm build of torch with a CUDA build from PyPI.

    python3 tools/pin_image_torch.py > /tmp/constraints.txt
"""

from importlib import metadata

PINNED = ("torch", "torchvision", "torchaudio", "triton", "pytorch-triton-rocm", "numpy")

if __name__ == "__main__":
    installed = {(d.metadata["Name"] or "").lower(): d.version for d in metadata.distributions()}
    for name in PINNED:
        if name in installed:
            print(f"{name}=={installed[name]}")
