// Built only by the CUDA branch of ../../setup.py, which builds kernels/amd for ROCm: reported as info.
#include <cublasLt.h>  // expect: PC204 info
__global__ void scan(const float* x, float* y) {
    float v = x[threadIdx.x];
    int lane = threadIdx.x % 32;  // expect: PC201 info
    for (int d = 1; d < 32; d <<= 1) {
        float u = __shfl_up_sync(0xffffffff, v, d);  // expect: PC202 info
        if (lane >= d) v += u;
    }
    y[threadIdx.x] = v;
}
