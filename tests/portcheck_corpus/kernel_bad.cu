// Reduction written the CUDA way: every "expect" line must be reported.
#include <cublasLt.h>  // expect: PC204
#include <cutlass/gemm/device/gemm.h>  // expect: PC204
#include <mma.h>  // expect: PC204
#define WARP_SIZE 32  // expect: PC201
#define FULL_MASK 0xffffffff  // expect: PC202

__device__ float warp_sum(float v) {
  for (int offset = 16; offset > 0; offset /= 2)  // expect: PC201
    v += __shfl_down_sync(0xffffffff, v, offset);  // expect: PC202
  return v;
}

__global__ void reduce(const float* x, float* out, int n) {
  int lane = threadIdx.x % 32;  // expect: PC201
  unsigned mask = __ballot_sync(0xFFFFFFFF, lane < n);  // expect: PC202
  unsigned active = __activemask();  // expect: PC202
  unsigned laneid;
  asm("mov.u32 %0, %%laneid;" : "=r"(laneid));  // expect: PC203
  float s = warp_sum(x[threadIdx.x]);
  if (lane == 0) atomicAdd(out, s + mask + active + laneid);
}

constexpr int WARP_THREADS = 32;  // expect: PC201
__device__ float tile_sum(float v) {
  int warp_id = threadIdx.x / 32;  // expect: PC201
  v += __shfl_xor_sync(0xFFFFFFFFu, v, 1);  // expect: PC202
  unsigned any = __ballot_sync(~0u, v > 0);  // expect: PC202
  __asm__ __volatile__("membar.gl;");  // expect: PC203
  return v + warp_id + any;
}

__device__ float rcp_no_fallback(float x) {
  float r = x;
#if defined(__CUDA_ARCH__)
  asm("rcp.approx.f32 %0, %1;" : "=f"(r) : "f"(x));  // expect: PC203
#endif
  return r;
}

// The same choice with CDNA (wave64) in the 32 branch is still wrong there.
#if defined(__gfx1030__) || defined(__gfx90a__)
#define WARP_LANES 32  // expect: PC201
#endif
