// Residency probe for benchmarks/gpu/occupancy_residency.py: how many blocks really sit on one SM
// at once. Thread 0 of each block counts its block in on its SM (%smid), records the most seen at
// once, and holds the block resident for `spin` cycles before counting it out; the other threads
// keep NV accumulators live so that -maxrregcount sets the register count, and touch the dynamic
// shared memory so it is really allocated.
#define NV 224
extern "C" __global__ void probe(const float* __restrict__ in, float* __restrict__ out, int n,
                                 unsigned* active, unsigned* most, long long spin, int dyn_floats) {
  extern __shared__ float dyn[];
  __shared__ unsigned sm_s;
  if (threadIdx.x == 0) {
    unsigned sm;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
    sm_s = sm;
    unsigned now = atomicAdd(&active[sm], 1u) + 1u;
    atomicMax(&most[sm], now);
  }
  __syncthreads();
  float acc[NV];
#pragma unroll
  for (int i = 0; i < NV; ++i) acc[i] = in[(threadIdx.x + i * 37) % n];
  for (int r = 0; r < n; ++r) {
#pragma unroll
    for (int i = 0; i < NV; ++i) acc[i] = fmaf(acc[i], acc[(i + 1) % NV], in[(r + i) % n]);
  }
  float s = 0.f;
#pragma unroll
  for (int i = 0; i < NV; ++i) s += acc[i];
  if (dyn_floats > 0) dyn[threadIdx.x % dyn_floats] = s;
  if (threadIdx.x == 0) {
    long long t0 = clock64();
    while (clock64() - t0 < spin) {
    }
    atomicSub(&active[sm_s], 1u);
  }
  __syncthreads();
  if (dyn_floats > 0) s += dyn[(threadIdx.x + 1) % dyn_floats];
  out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}
