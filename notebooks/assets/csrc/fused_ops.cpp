// Python bindings and the CPU implementation of two ops: fused bias + GELU, and a row-wise softmax.
// The GPU implementation lives in fused_ops_cuda.cu and is compiled only when WITH_CUDA is defined
// (torch.utils.cpp_extension hipifies it automatically on ROCm builds of PyTorch).
#include <torch/extension.h>

#include <cmath>

#ifdef WITH_CUDA
torch::Tensor bias_gelu_cuda(const torch::Tensor& x, const torch::Tensor& bias);
torch::Tensor row_softmax_cuda(const torch::Tensor& x);
#endif

static void check(const torch::Tensor& x) {
  TORCH_CHECK(x.dim() == 2, "expected a 2-D tensor, got ", x.dim(), " dimensions");
  TORCH_CHECK(x.scalar_type() == torch::kFloat32, "expected float32, got ", x.scalar_type());
}

torch::Tensor bias_gelu_cpu(const torch::Tensor& x_, const torch::Tensor& bias_) {
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

torch::Tensor bias_gelu(const torch::Tensor& x, const torch::Tensor& bias) {
  check(x);
  TORCH_CHECK(bias.dim() == 1 && bias.size(0) == x.size(1), "bias must have x.size(1) elements");
  TORCH_CHECK(bias.device() == x.device(), "x and bias must be on the same device");
  if (x.is_cuda()) {
#ifdef WITH_CUDA
    return bias_gelu_cuda(x, bias);
#else
    TORCH_CHECK(false, "this build of fused_ops has no GPU code (built without WITH_CUDA)");
#endif
  }
  return bias_gelu_cpu(x, bias);
}

torch::Tensor row_softmax(const torch::Tensor& x) {
  check(x);
  if (x.is_cuda()) {
#ifdef WITH_CUDA
    return row_softmax_cuda(x);
#else
    TORCH_CHECK(false, "this build of fused_ops has no GPU code (built without WITH_CUDA)");
#endif
  }
  return row_softmax_cpu(x);
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.def("bias_gelu", &bias_gelu, "GELU(x + bias), x: (rows, cols) float32, bias: (cols,)");
  m.def("row_softmax", &row_softmax, "softmax over dim 1 of a (rows, cols) float32 tensor");
}
