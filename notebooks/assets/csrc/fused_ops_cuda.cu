// GPU implementation of fused_ops, portable between NVIDIA (CUDA) and AMD (ROCm/HIP), registered under the CUDA
// dispatch key (fused_ops.cpp defines the ops). On ROCm builds of PyTorch, torch.utils.cpp_extension hipifies this
// file automatically (.cu -> .hip); PyTorch's C++ API keeps its CUDA names there (at::cuda::getCurrentCUDAStream,
// at::cuda::CUDAGuard, C10_CUDA_KERNEL_LAUNCH_CHECK), and AMD GPUs are the CUDA key.
// Portable on purpose: no warp size is written down (warpSize in device code, at::cuda::warp_size() on the
// host), and shuffles go through ATen's WARP_SHFL_XOR, which uses the right intrinsic on each platform.
#include <torch/library.h>  // TORCH_LIBRARY: the ops reach Python through the dispatcher
#include <ATen/cuda/CUDAContext.h>
#include <ATen/cuda/DeviceUtils.cuh>
#include <c10/cuda/CUDAGuard.h>

#include "fused_ops.h"

__global__ void bias_gelu_kernel(const float* x, const float* bias, float* y, int64_t n, int64_t cols) {
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i < n) {
    const float v = x[i] + bias[i % cols];
    y[i] = 0.5f * v * (1.0f + erff(v * 0.70710678118654752f));
  }
}

__device__ float warp_max(float v) {
  for (int offset = warpSize / 2; offset > 0; offset /= 2) v = fmaxf(v, WARP_SHFL_XOR(v, offset));
  return v;  // every lane holds the maximum of all warpSize lanes
}

__device__ float warp_sum(float v) {
  for (int offset = warpSize / 2; offset > 0; offset /= 2) v += WARP_SHFL_XOR(v, offset);
  return v;
}

// One row per block of exactly one warp (32 lanes on NVIDIA, 64 on AMD CDNA).
__global__ void row_softmax_kernel(const float* x, float* y, int64_t cols) {
  const float* in = x + blockIdx.x * cols;
  float* out = y + blockIdx.x * cols;
  float m = -INFINITY;
  for (int64_t c = threadIdx.x; c < cols; c += warpSize) m = fmaxf(m, in[c]);
  m = warp_max(m);
  float s = 0.0f;
  for (int64_t c = threadIdx.x; c < cols; c += warpSize) s += expf(in[c] - m);
  s = warp_sum(s);
  for (int64_t c = threadIdx.x; c < cols; c += warpSize) out[c] = expf(in[c] - m) / s;
}

torch::Tensor bias_gelu_cuda(const torch::Tensor& x_, const torch::Tensor& bias_) {
  check_bias_gelu(x_, bias_);
  auto x = x_.contiguous();
  auto bias = bias_.contiguous();
  auto y = torch::empty_like(x);
  const int64_t n = x.numel();
  if (n == 0) return y;
  const at::cuda::CUDAGuard guard(x.device());
  const int threads = 256;
  const int64_t blocks = (n + threads - 1) / threads;
  bias_gelu_kernel<<<blocks, threads, 0, at::cuda::getCurrentCUDAStream()>>>(
      x.data_ptr<float>(), bias.data_ptr<float>(), y.data_ptr<float>(), n, x.size(1));
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return y;
}

torch::Tensor row_softmax_cuda(const torch::Tensor& x_) {
  check_2d_float(x_);
  auto x = x_.contiguous();
  auto y = torch::empty_like(x);
  if (x.numel() == 0) return y;
  const at::cuda::CUDAGuard guard(x.device());
  row_softmax_kernel<<<x.size(0), at::cuda::warp_size(), 0, at::cuda::getCurrentCUDAStream()>>>(
      x.data_ptr<float>(), y.data_ptr<float>(), x.size(1));
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return y;
}

TORCH_LIBRARY_IMPL(fused_ops, CUDA, m) {  // the CUDA key: NVIDIA GPUs, and AMD GPUs on ROCm builds
  m.impl("bias_gelu", &bias_gelu_cuda);
  m.impl("row_softmax", &row_softmax_cuda);
}
