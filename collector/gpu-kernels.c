/* The CUDA C source of the GPU backends' own kernels (backend-cuda.c
 * compiles it at run time with NVRTC or hipRTC), apart from the backend so
 * that the backend's file holds its logic. */
#include "config.h"

#include "collector.h"

/* The backend's own kernels, one program:
 * - tc_softmax, the softmax of unfused attention: one block per row of
 *   scores, scale 1/sqrt(d) and the causal mask aligned to the last key, in
 *   place, in the scores' type (0 fp32, 1 fp16, 2 bf16);
 * - tc_spin, which keeps the device busy for `ns` nanoseconds while the host
 *   queues a group of short launches (gpu_run);
 * - tc_flush, the L2 flush: reads n 8-byte words, so that the L2 holds
 *   only clean lines afterwards (a memset leaves dirty ones, whose
 *   write-back then lands in the timed work). The buffer holds zeros, so
 *   the store that keeps the loads alive never happens.
 * No headers: fp16 conversions and the timer use PTX on NVIDIA and
 * builtins on AMD, so the source compiles with any NVRTC or hipRTC. */
const char tc_gpu_kernels_src[] =
    "#if defined(__HIPCC_RTC__) || defined(__HIP_DEVICE_COMPILE__)\n"
    "__device__ float h2f(unsigned short h) { _Float16 x; __builtin_memcpy(&x, &h, 2);"
    " return (float)x; }\n"
    "__device__ unsigned short f2h(float f) { _Float16 x = (_Float16)f; unsigned short h;"
    " __builtin_memcpy(&h, &x, 2); return h; }\n"
    "__device__ long long now_ns() {"
    " return (long long)__builtin_amdgcn_s_memrealtime() * 10; }\n" /* 100 MHz */
    "#else\n"
    "__device__ float h2f(unsigned short h) { float f;"
    " asm(\"cvt.f32.f16 %0, %1;\" : \"=f\"(f) : \"h\"(h)); return f; }\n"
    "__device__ unsigned short f2h(float f) { unsigned short h;"
    " asm(\"cvt.rn.f16.f32 %0, %1;\" : \"=h\"(h) : \"f\"(f)); return h; }\n"
    "__device__ long long now_ns() { unsigned long long t;"
    " asm volatile(\"mov.u64 %0, %%globaltimer;\" : \"=l\"(t)); return (long long)t; }\n"
    "#endif\n"
    "extern \"C\" __global__ void tc_spin(long long ns) {\n"
    "  long long t0 = now_ns();\n"
    "  while (now_ns() - t0 < ns) { }\n"
    "}\n"
    "extern \"C\" __global__ void __launch_bounds__(256)\n"
    "tc_flush(const unsigned long long *p, long long n, unsigned long long *sink) {\n"
    "  unsigned long long acc = 0;\n"
    "  long long stride = (long long)gridDim.x * blockDim.x;\n"
    "  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)\n"
    "    acc ^= p[i];\n"
    "  if (acc == 0x9e3779b97f4a7c15ull) *sink = acc;\n"
    "}\n"
    "__device__ float ld(const void *p, long long i, int t) {\n"
    "  if (t == 0) return ((const float *)p)[i];\n"
    "  if (t == 1) return h2f(((const unsigned short *)p)[i]);\n"
    "  return __int_as_float(((unsigned int)((const unsigned short *)p)[i]) << 16);\n"
    "}\n"
    "__device__ void st(void *p, long long i, int t, float v) {\n"
    "  if (t == 0) { ((float *)p)[i] = v; return; }\n"
    "  if (t == 1) { ((unsigned short *)p)[i] = f2h(v); return; }\n"
    "  unsigned int b = __float_as_uint(v);\n"
    "  b += 0x7fffu + ((b >> 16) & 1u);\n"
    "  ((unsigned short *)p)[i] = (unsigned short)(b >> 16);\n"
    "}\n"
    "extern \"C\" __global__ void __launch_bounds__(256)\n"
    "tc_softmax(void *p, int cols, int seq_q, int offset, float scale, int causal, int t) {\n"
    "  __shared__ float red[256];\n"
    "  long long row = blockIdx.x;\n"
    "  long long base = row * cols;\n"
    "  int q = (int)(row % seq_q);\n"
    "  int valid = causal ? min(cols, max(0, q + 1 + offset)) : cols;\n"
    "  float mx = __int_as_float(0xff800000);\n"
    "  for (int j = threadIdx.x; j < valid; j += blockDim.x)\n"
    "    mx = fmaxf(mx, ld(p, base + j, t) * scale);\n"
    "  red[threadIdx.x] = mx; __syncthreads();\n"
    "  for (int s = blockDim.x / 2; s > 0; s >>= 1) {\n"
    "    if (threadIdx.x < s) red[threadIdx.x] = fmaxf(red[threadIdx.x], red[threadIdx.x + s]);\n"
    "    __syncthreads();\n"
    "  }\n"
    "  mx = red[0]; __syncthreads();\n"
    "  float sum = 0.f;\n"
    "  for (int j = threadIdx.x; j < valid; j += blockDim.x)\n"
    "    sum += __expf(ld(p, base + j, t) * scale - mx);\n"
    "  red[threadIdx.x] = sum; __syncthreads();\n"
    "  for (int s = blockDim.x / 2; s > 0; s >>= 1) {\n"
    "    if (threadIdx.x < s) red[threadIdx.x] += red[threadIdx.x + s];\n"
    "    __syncthreads();\n"
    "  }\n"
    "  float inv = valid > 0 ? 1.f / red[0] : 0.f;\n"
    "  for (int j = threadIdx.x; j < cols; j += blockDim.x)\n"
    "    st(p, base + j, t, j < valid ? __expf(ld(p, base + j, t) * scale - mx) * inv : 0.f);\n"
    "}\n";
