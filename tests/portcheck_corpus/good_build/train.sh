#!/usr/bin/env bash
# The same launcher with the ROCm counterparts next to the CUDA names: nothing to report.
export CUDA_DEVICE_MAX_CONNECTIONS=1 GPU_MAX_HW_QUEUES=2
export TORCH_CUDNN_V8_API_LRU_CACHE_LIMIT=20000 MIOPEN_FIND_MODE=FAST
CUDA_LAUNCH_BLOCKING=1 AMD_SERIALIZE_KERNEL=3 torchrun --nproc-per-node 8 train.py
# torch for ROCm comes from a ROCm wheel index (there is no pytorch-rocm package):
pip install torch --index-url https://download.pytorch.org/whl/rocm7.1
