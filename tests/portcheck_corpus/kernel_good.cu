// The portable version: no finding.
#include <hipblaslt/hipblaslt.h>
#include <rocwmma/rocwmma.hpp>  // the matrix-core API on AMD (nvcuda::wmma's counterpart)

__device__ float warp_sum(float v) {
  // all lanes of the warp (32 on NVIDIA, 64 on AMD CDNA): a 0xffffffff mask would drop half of them
  for (int offset = warpSize / 2; offset > 0; offset /= 2)
    v += __shfl_down(v, offset);
  return v;
}

__global__ void reduce(const float* x, float* out, int n) {
  int lane = threadIdx.x % warpSize;
  float s = warp_sum(x[threadIdx.x]);
  if (lane == 0) atomicAdd(out, s);
}

constexpr int kWarpsPerBlock = 4;  // a count of warps, not their width
__device__ float tile_sum(float v) {
  int warp_id = threadIdx.x / warpSize;
  return v + warp_id + kWarpsPerBlock;
}

__device__ float fast_rcp(float x) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 700
  float r;
  asm("rcp.approx.f32 %0, %1;" : "=f"(r) : "f"(x));  // NVIDIA only, with a portable fallback below
  return r;
#else
  return 1.0f / x;
#endif
}

__device__ float fast_half_rcp(float x) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  float r;
  asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));  // sm_80 and newer
  return r * 0.5f;
#elif defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 700
  float r;
  asm("rcp.approx.f32 %0, %1;" : "=f"(r) : "f"(x));  // sm_70: an #elif on __CUDA_ARCH__ is compiled out on HIP too
  return r * 0.5f;
#else
  return 0.5f / x;  // what HIP compiles
#endif
}

__device__ float rcp_host_branch(float x) {
  float r = x;
#ifndef __CUDA_ARCH__
  r = 1.0f / x;
#else
  asm("rcp.approx.f32 %0, %1;" : "=f"(r) : "f"(x));  // NVIDIA device code: HIP takes the #ifndef branch
#endif
  return r;
}

// A warp width chosen per GPU family at compile time: 32 is right on RDNA (gfx10-12 run wave32).
#if defined(__gfx90a__) || defined(__gfx942__)
#define WARP_LANES 64
#elif defined(__gfx1100__) || defined(__gfx1201__)
#define WARP_LANES 32
#else
#define WARP_LANES 64
#endif
