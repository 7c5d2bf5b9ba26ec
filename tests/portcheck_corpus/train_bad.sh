#!/usr/bin/env bash
# A launcher tuned for NVIDIA only: every line marked "expect" must be reported.
export CUDA_DEVICE_MAX_CONNECTIONS=1  # expect: PC114
export TORCH_CUDNN_V8_API_LRU_CACHE_LIMIT=20000  # expect: PC114
CUDA_LAUNCH_BLOCKING=1 torchrun --nproc-per-node 8 train.py  # expect: PC114
# CUDA_LAUNCH_BLOCKING=1 in a comment is not a setting
pip install pytorch-rocm  # expect: PC307
