// The two ops of this extension, fused bias + GELU and a row-wise softmax: their definitions and CPU implementation.
// They are registered with PyTorch's dispatcher (TORCH_LIBRARY), as PyTorch's custom C++ operator tutorial does, so
// Python calls them as torch.ops.fused_ops.bias_gelu and torch.ops.fused_ops.row_softmax, and they work under
// torch.compile once a fake implementation is registered (lesson 05 does that in Python with register_fake).
// The GPU implementation, fused_ops_cuda.cu, adds itself under the CUDA dispatch key in its own library. On ROCm
// builds of PyTorch AMD GPUs are "cuda" devices, so the same key serves them (cpp_extension hipifies the .cu file).
#include <torch/library.h>  // TORCH_LIBRARY: the ops reach Python through the dispatcher

#include <cmath>

#include "fused_ops.h"

torch::Tensor bias_gelu_cpu(const torch::Tensor& x_, const torch::Tensor& bias_) {
  check_bias_gelu(x_, bias_);
  auto x = x_.contiguous();
  auto bias = bias_.contiguous();
  auto y = torch::empty_like(x);
  const int64_t rows = x.size(0), cols = x.size(1);
  const float* px = x.data_ptr<float>();
  const float* pb = bias.data_ptr<float>();
  float* py = y.data_ptr<float>();
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) {
      const float v = px[r * cols + c] + pb[c];
      py[r * cols + c] = 0.5f * v * (1.0f + std::erf(v * 0.70710678118654752f));  // exact GELU
    }
  }
  return y;
}

torch::Tensor row_softmax_cpu(const torch::Tensor& x_) {
  check_2d_float(x_);
  auto x = x_.contiguous();
  auto y = torch::empty_like(x);
  const int64_t rows = x.size(0), cols = x.size(1);
  const float* px = x.data_ptr<float>();
  float* py = y.data_ptr<float>();
  for (int64_t r = 0; r < rows; ++r) {
    const float* row = px + r * cols;
    float m = -INFINITY, sum = 0.0f;
    for (int64_t c = 0; c < cols; ++c) m = std::max(m, row[c]);
    for (int64_t c = 0; c < cols; ++c) sum += std::exp(row[c] - m);
    for (int64_t c = 0; c < cols; ++c) py[r * cols + c] = std::exp(row[c] - m) / sum;
  }
  return y;
}

TORCH_LIBRARY(fused_ops, m) {  // the schemas: what torch.compile and torch.library.opcheck reason about
  m.def("bias_gelu(Tensor x, Tensor bias) -> Tensor");
  m.def("row_softmax(Tensor x) -> Tensor");
}

TORCH_LIBRARY_IMPL(fused_ops, CPU, m) {
  m.impl("bias_gelu", &bias_gelu_cpu);
  m.impl("row_softmax", &row_softmax_cpu);
}
