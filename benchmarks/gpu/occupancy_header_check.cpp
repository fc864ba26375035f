// Reads "threads regs static_smem dyn_smem carveout" lines on stdin and prints the blocks per SM
// that NVIDIA's header-only occupancy calculator (cuda_occupancy.h) gives for them, for the device
// properties on the command line:
//   major minor max_threads_per_block max_threads_per_sm regs_per_block regs_per_sm warp_size
//   smem_per_block smem_per_sm smem_per_block_optin reserved_smem_per_block
// carveout -1 = the driver default. Used by occupancy_header_check.py; needs no GPU.
#include <cstdio>
#include <cstdlib>
#include "cuda_occupancy.h"

int main(int argc, char** argv) {
  if (argc != 12) {
    std::fprintf(stderr, "usage: %s major minor maxThreadsPerBlock maxThreadsPerSM regsPerBlock regsPerSM warpSize smemPerBlock smemPerSM smemOptin reserved\n", argv[0]);
    return 2;
  }
  cudaOccDeviceProp prop;
  prop.computeMajor = std::atoi(argv[1]);
  prop.computeMinor = std::atoi(argv[2]);
  prop.maxThreadsPerBlock = std::atoi(argv[3]);
  prop.maxThreadsPerMultiprocessor = std::atoi(argv[4]);
  prop.regsPerBlock = std::atoi(argv[5]);
  prop.regsPerMultiprocessor = std::atoi(argv[6]);
  prop.warpSize = std::atoi(argv[7]);
  prop.sharedMemPerBlock = std::strtoul(argv[8], nullptr, 10);
  prop.sharedMemPerMultiprocessor = std::strtoul(argv[9], nullptr, 10);
  prop.numSms = 1;
  prop.sharedMemPerBlockOptin = std::strtoul(argv[10], nullptr, 10);
  prop.reservedSharedMemPerBlock = std::strtoul(argv[11], nullptr, 10);

  int threads, regs, carveout;
  unsigned long stat, dyn;
  while (std::scanf("%d %d %lu %lu %d", &threads, &regs, &stat, &dyn, &carveout) == 5) {
    cudaOccFuncAttributes attr;
    attr.maxThreadsPerBlock = prop.maxThreadsPerBlock;
    attr.numRegs = regs;
    attr.sharedSizeBytes = stat;
    attr.partitionedGCConfig = PARTITIONED_GC_OFF;
    // The kernel opts in to the largest dynamic size the device allows, as the H200 check did.
    attr.shmemLimitConfig = FUNC_SHMEM_LIMIT_OPTIN;
    attr.maxDynamicSharedSizeBytes = prop.sharedMemPerBlockOptin - stat;
    attr.numBlockBarriers = 1;
    attr.virtualResourceCount = 0;
    cudaOccDeviceState state;
    state.carveoutConfig = carveout;
    cudaOccResult result;
    cudaOccError err = cudaOccMaxActiveBlocksPerMultiprocessor(&result, &prop, &attr, &state, threads, dyn);
    if (err != CUDA_OCC_SUCCESS) {
      std::printf("error %d\n", static_cast<int>(err));
    } else {
      std::printf("%d\n", result.activeBlocksPerMultiprocessor);
    }
  }
  return 0;
}
