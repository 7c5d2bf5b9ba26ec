// Row-wise softmax, written the way CUDA developers often write it: one 32-lane warp per row.
// Correct on NVIDIA GPUs. It carries the classic portability bugs on purpose (lesson 05):
//   - the warp size 32 is hard-coded (AMD CDNA GPUs run 64-lane wavefronts),
//   - 32-bit lane masks in __shfl_*_sync / __ballot_sync,
//   - the broadcast from "lane 0" assumes that lane 0 of the hardware warp belongs to this row.
// hipify translates the API calls; it cannot fix any of this. fused_ops_cuda.cu is the portable version.
#include <cuda_runtime.h>
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>

#define WARP_SIZE 32
#define FULL_MASK 0xffffffff

__global__ void row_softmax_warp32(const float* x, float* y, int rows, int cols, int* nonfinite) {
  const int row = blockIdx.x * (blockDim.x / WARP_SIZE) + threadIdx.x / WARP_SIZE;
  const int lane = threadIdx.x % WARP_SIZE;
  if (row >= rows) return;
  const float* in = x + (size_t)row * cols;
  float m = -INFINITY, s = 0.0f;
  bool finite = true;
  for (int c = lane; c < cols; c += WARP_SIZE) {
    m = fmaxf(m, in[c]);
    finite = finite && isfinite(in[c]);
  }
  if (__ballot_sync(FULL_MASK, !finite) != 0 && lane == 0) atomicAdd(nonfinite, 1);
  for (int offset = 16; offset > 0; offset /= 2) m = fmaxf(m, __shfl_down_sync(0xffffffff, m, offset));
  m = __shfl_sync(0xffffffff, m, 0);  // lane 0 holds the row maximum
  for (int c = lane; c < cols; c += WARP_SIZE) s += expf(in[c] - m);
  for (int offset = 16; offset > 0; offset /= 2) s += __shfl_down_sync(0xffffffff, s, offset);
  s = __shfl_sync(0xffffffff, s, 0);  // lane 0 holds the row sum
  for (int c = lane; c < cols; c += WARP_SIZE) y[(size_t)row * cols + c] = expf(in[c] - m) / s;
}

torch::Tensor row_softmax_legacy(const torch::Tensor& x) {
  auto y = torch::empty_like(x);
  const int rows = x.size(0), cols = x.size(1);
  int* nonfinite;
  cudaMalloc(&nonfinite, sizeof(int));
  cudaMemset(nonfinite, 0, sizeof(int));
  cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  const int threads = 8 * WARP_SIZE;  // 8 rows per block
  row_softmax_warp32<<<(rows + 7) / 8, threads, 0, stream>>>(x.data_ptr<float>(), y.data_ptr<float>(), rows, cols,
                                                              nonfinite);
  cudaError_t err = cudaGetLastError();
  TORCH_CHECK(err == cudaSuccess, "kernel launch failed: ", cudaGetErrorString(err));
  int host = 0;
  cudaMemcpyAsync(&host, nonfinite, sizeof(int), cudaMemcpyDeviceToHost, stream);
  cudaStreamSynchronize(stream);
  cudaFree(nonfinite);
  TORCH_CHECK(host == 0, host, " rows hold inf or nan");
  return y;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("row_softmax", &row_softmax_legacy, "softmax over dim 1, warp-32"); }
