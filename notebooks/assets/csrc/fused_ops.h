// Input checks shared by the CPU (fused_ops.cpp) and GPU (fused_ops_cuda.cu) implementations.
#pragma once
#include <torch/types.h>  // the tensor API without torch/extension.h's Python bindings: half the compile time

inline void check_2d_float(const torch::Tensor& x) {
  TORCH_CHECK(x.dim() == 2, "expected a 2-D tensor, got ", x.dim(), " dimensions");
  TORCH_CHECK(x.scalar_type() == torch::kFloat32, "expected float32, got ", x.scalar_type());
}

inline void check_bias_gelu(const torch::Tensor& x, const torch::Tensor& bias) {
  check_2d_float(x);
  TORCH_CHECK(bias.dim() == 1 && bias.size(0) == x.size(1), "bias must have x.size(1) elements");
  TORCH_CHECK(bias.device() == x.device(), "x and bias must be on the same device");
}
