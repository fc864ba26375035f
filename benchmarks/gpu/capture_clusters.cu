// Thread-block cluster capacity: cudaOccupancyMaxActiveClusters for cluster sizes 1..16 and shapes,
// over kernel configurations that give 1..32 blocks per SM, plus a residency check at 1 block per SM.
//
//   nvcc -O2 -gencode=arch=compute_90a,code=sm_90a -o capture_clusters benchmarks/gpu/capture_clusters.cu
//   ./capture_clusters > clusters.json
//
// The kernel is tiny (its registers are read back with cudaFuncGetAttributes); blocks per SM are set
// with threads per block and dynamic shared memory, and the occupancy calculator's answer
// (cudaOccupancyMaxActiveBlocksPerMultiprocessor) is recorded next to every cluster count.
// Clusters of more than 8 blocks are queried twice: without cudaFuncAttributeNonPortableClusterSizeAllowed
// (expected to fail: 8 is the portable limit) and with it set to 1.
//
// Residency check (the correctness method for the 1-block-per-SM rows): launch exactly the reported
// number of clusters, each block counting itself in and waiting (at most 200 ms, %globaltimer) until
// every block of the grid has arrived; then launch one cluster more. If the API's number is right,
// the first launch completes with no block timing out, and the second has blocks that time out
// (they could not all be resident at once). Every CUDA call's status is checked.
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define CHECK(x)                                                                                     \
    do {                                                                                             \
        cudaError_t err_ = (x);                                                                      \
        if (err_ != cudaSuccess) {                                                                   \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(err_));    \
            exit(1);                                                                                 \
        }                                                                                            \
    } while (0)

__global__ void probe(float* out) {
    extern __shared__ float smem[];
    if (threadIdx.x == 0) smem[0] = (float)blockIdx.x;
    __syncthreads();
    if (out && threadIdx.x == 0) out[blockIdx.x] = smem[0];
}

__device__ __forceinline__ unsigned long long now_ns() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %globaltimer;" : "=l"(t));
    return t;
}

// Every block arrives, then waits for all `expected` blocks of the grid or the timeout.
__global__ void arrive_and_wait(unsigned* counter, unsigned* timed_out, unsigned* max_seen, unsigned expected,
                                unsigned long long timeout_ns) {
    extern __shared__ float smem[];
    if (threadIdx.x == 0) {
        smem[0] = 1.0f;
        unsigned seen = atomicAdd(counter, 1u) + 1u;
        unsigned long long t0 = now_ns();
        while (seen < expected) {
            if (now_ns() - t0 > timeout_ns) {
                atomicAdd(timed_out, 1u);
                break;
            }
            seen = atomicAdd(counter, 0u);
        }
        atomicMax(max_seen, seen);
    }
    __syncthreads();
}

struct Query {
    int ok;
    int clusters;
    const char* error;
};

template <typename K>
static Query max_clusters(K kernel, int threads, int smem, int cx, int cy, int cz) {
    cudaLaunchConfig_t cfg;
    memset(&cfg, 0, sizeof(cfg));
    cfg.gridDim = dim3(cx * 64, cy * 2, cz);
    cfg.blockDim = dim3(threads, 1, 1);
    cfg.dynamicSmemBytes = smem;
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeClusterDimension;
    attr[0].val.clusterDim.x = cx;
    attr[0].val.clusterDim.y = cy;
    attr[0].val.clusterDim.z = cz;
    cfg.attrs = attr;
    cfg.numAttrs = 1;
    int n = -1;
    cudaError_t e = cudaOccupancyMaxActiveClusters(&n, (void*)kernel, &cfg);
    if (e != cudaSuccess) {
        cudaGetLastError();  // clear it
        return {0, -1, cudaGetErrorString(e)};
    }
    return {1, n, ""};
}

static void set_kernel_attrs(const void* k, int smem, int nonportable) {
    CHECK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    CHECK(cudaFuncSetAttribute(k, cudaFuncAttributeNonPortableClusterSizeAllowed, nonportable));
}

static int blocks_per_sm(const void* k, int threads, int smem) {
    int b = -1;
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&b, k, threads, smem));
    return b;
}

// Largest dynamic shared memory (a multiple of 128 B, within the opt-in limit) giving exactly `want` blocks per SM.
static int smem_for(const void* k, int threads, int want, int optin) {
    int lo = 0, hi = optin / 128, best = -1;
    while (lo <= hi) {  // blocks per SM fall as shared memory grows
        int mid = (lo + hi) / 2;
        int b = blocks_per_sm(k, threads, mid * 128);
        if (b >= want) {
            if (b == want) best = mid * 128;
            lo = mid + 1;
        } else {
            hi = mid - 1;
        }
    }
    return best;
}

int main() {
    CHECK(cudaSetDevice(0));
    cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, 0));
    int optin = (int)prop.sharedMemPerBlockOptin;
    cudaFuncAttributes fa;
    CHECK(cudaFuncGetAttributes(&fa, probe));
    set_kernel_attrs((const void*)probe, optin, 1);
    int potential8 = -1, potential16 = -1;
    {
        cudaLaunchConfig_t cfg;
        memset(&cfg, 0, sizeof(cfg));
        cfg.gridDim = dim3(16 * 64, 1, 1);
        cfg.blockDim = dim3(128, 1, 1);
        cfg.dynamicSmemBytes = 0;
        CHECK(cudaFuncSetAttribute((const void*)probe, cudaFuncAttributeNonPortableClusterSizeAllowed, 0));
        CHECK(cudaOccupancyMaxPotentialClusterSize(&potential8, (void*)probe, &cfg));
        CHECK(cudaFuncSetAttribute((const void*)probe, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
        CHECK(cudaOccupancyMaxPotentialClusterSize(&potential16, (void*)probe, &cfg));
    }
    printf("{\n  \"device\": \"%s\", \"sm_count\": %d, \"shared_mem_per_sm\": %zu, \"shared_mem_optin\": %d, "
           "\"reserved_smem_per_block\": %zu, \"max_blocks_per_sm\": %d,\n",
           prop.name, prop.multiProcessorCount, prop.sharedMemPerMultiprocessor, optin, prop.reservedSharedMemPerBlock,
           prop.maxBlocksPerMultiProcessor);
    printf("  \"kernel\": {\"name\": \"probe\", \"numRegs\": %d, \"staticSmem\": %zu, \"maxThreadsPerBlock\": %d},\n", fa.numRegs,
           fa.sharedSizeBytes, fa.maxThreadsPerBlock);
    printf("  \"maxPotentialClusterSize\": {\"portable\": %d, \"nonportable\": %d},\n", potential8, potential16);

    // Configurations: (threads, dynamic smem) for 1..32 blocks per SM.
    struct Cfg {
        int threads, smem, bps;
        const char* how;
    };
    std::vector<Cfg> cfgs;
    for (int want = 1; want <= 32; ++want) {
        int s = smem_for((const void*)probe, 64, want, optin);
        if (s >= 0) cfgs.push_back({64, s, blocks_per_sm((const void*)probe, 64, s), "64 threads, shared memory sets blocks/SM"});
    }
    const int tlist[] = {1024, 512, 256, 128, 96, 64};
    for (int t : tlist) cfgs.push_back({t, 0, blocks_per_sm((const void*)probe, t, 0), "threads alone set blocks/SM (no shared memory)"});
    const int mixed[][2] = {{256, 60 * 1024}, {512, 100 * 1024}, {128, 28 * 1024}};
    for (auto& m : mixed) cfgs.push_back({m[0], m[1], blocks_per_sm((const void*)probe, m[0], m[1]), "threads and shared memory"});

    printf("  \"rows\": [\n");
    bool first = true;
    for (const Cfg& c : cfgs) {
        for (int cs = 1; cs <= 16; ++cs) {
            for (int np = 0; np <= 1; ++np) {
                if (cs <= 8 && np == 1) continue;  // portable sizes: one query, with the attribute at 0
                set_kernel_attrs((const void*)probe, optin, np);
                Query q = max_clusters(probe, c.threads, c.smem, cs, 1, 1);
                printf("%s    {\"cluster\": [%d, 1, 1], \"size\": %d, \"nonportable_attr\": %d, \"threads\": %d, \"dyn_smem\": %d, "
                       "\"blocks_per_sm\": %d, \"max_active_clusters\": %d, \"status\": \"%s\", \"how\": \"%s\"}",
                       first ? "" : ",\n", cs, cs, np, c.threads, c.smem, c.bps, q.clusters, q.ok ? "ok" : q.error, c.how);
                first = false;
            }
        }
    }
    // Shapes: the API takes cluster dims; is it only the product that counts?
    const int shapes[][3] = {{2, 1, 1}, {1, 2, 1}, {4, 1, 1}, {2, 2, 1}, {1, 4, 1}, {8, 1, 1}, {4, 2, 1}, {2, 4, 1}, {1, 8, 1},
                             {2, 2, 2}, {1, 1, 8}, {16, 1, 1}, {4, 4, 1}, {8, 2, 1}, {2, 8, 1}, {1, 16, 1}, {12, 1, 1},
                             {3, 4, 1}, {6, 2, 1}, {3, 1, 1}, {1, 3, 1}};
    for (const Cfg& c : cfgs) {
        if (!(c.bps == 1 || c.bps == 2 || c.bps == 4 || c.bps == 8 || c.bps == 16) || c.threads != 64) continue;
        for (auto& s : shapes) {
            int size = s[0] * s[1] * s[2];
            set_kernel_attrs((const void*)probe, optin, size > 8 ? 1 : 0);
            Query q = max_clusters(probe, c.threads, c.smem, s[0], s[1], s[2]);
            printf(",\n    {\"cluster\": [%d, %d, %d], \"size\": %d, \"nonportable_attr\": %d, \"threads\": %d, \"dyn_smem\": %d, "
                   "\"blocks_per_sm\": %d, \"max_active_clusters\": %d, \"status\": \"%s\", \"how\": \"cluster shape\"}",
                   s[0], s[1], s[2], size, size > 8 ? 1 : 0, c.threads, c.smem, c.bps, q.clusters, q.ok ? "ok" : q.error);
        }
    }
    printf("\n  ],\n");

    // Residency check at 1 block per SM (64 threads, shared memory for 1 block/SM), cluster sizes 1..16.
    int s1 = smem_for((const void*)probe, 64, 1, optin);
    CHECK(cudaFuncSetAttribute((const void*)arrive_and_wait, cudaFuncAttributeMaxDynamicSharedMemorySize, optin));
    CHECK(cudaFuncSetAttribute((const void*)arrive_and_wait, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
    int bps_aw = blocks_per_sm((const void*)arrive_and_wait, 64, s1);
    cudaFuncAttributes fa2;
    CHECK(cudaFuncGetAttributes(&fa2, arrive_and_wait));
    unsigned* d = nullptr;
    CHECK(cudaMalloc(&d, 3 * sizeof(unsigned)));
    printf("  \"residency\": {\"threads\": 64, \"dyn_smem\": %d, \"blocks_per_sm\": %d, \"numRegs\": %d, \"timeout_ms\": 200, \"rows\": [\n",
           s1, bps_aw, fa2.numRegs);
    for (int cs = 1; cs <= 16; ++cs) {
        Query q = max_clusters(arrive_and_wait, 64, s1, cs, 1, 1);
        for (int extra = 0; extra <= 1; ++extra) {
            int nclusters = q.clusters + extra;
            unsigned host[3] = {0, 0, 0};
            const char* status = "not run";
            if (q.ok && nclusters > 0) {
                CHECK(cudaMemset(d, 0, 3 * sizeof(unsigned)));
                cudaLaunchConfig_t cfg;
                memset(&cfg, 0, sizeof(cfg));
                cfg.gridDim = dim3(nclusters * cs, 1, 1);
                cfg.blockDim = dim3(64, 1, 1);
                cfg.dynamicSmemBytes = s1;
                cudaLaunchAttribute attr[1];
                attr[0].id = cudaLaunchAttributeClusterDimension;
                attr[0].val.clusterDim.x = cs;
                attr[0].val.clusterDim.y = 1;
                attr[0].val.clusterDim.z = 1;
                cfg.attrs = attr;
                cfg.numAttrs = 1;
                unsigned expected = (unsigned)(nclusters * cs);
                cudaError_t e = cudaLaunchKernelEx(&cfg, arrive_and_wait, d, d + 1, d + 2, expected, 200000000ull);
                if (e == cudaSuccess) e = cudaDeviceSynchronize();
                status = cudaGetErrorString(e);
                if (e == cudaSuccess) CHECK(cudaMemcpy(host, d, sizeof(host), cudaMemcpyDeviceToHost));
            }
            printf("%s      {\"size\": %d, \"api_max_active_clusters\": %d, \"launched_clusters\": %d, \"blocks\": %d, "
                   "\"arrived\": %u, \"blocks_timed_out\": %u, \"max_seen_together\": %u, \"all_coresident\": %s, \"status\": \"%s\"}",
                   (cs == 1 && extra == 0) ? "" : ",\n", cs, q.clusters, nclusters, nclusters * cs, host[0], host[1], host[2],
                   host[1] == 0 && host[0] == (unsigned)(nclusters * cs) ? "true" : "false", status);
        }
    }
    printf("\n  ]},\n");
    CHECK(cudaFree(d));
    printf("  \"final_status\": \"%s\"\n}\n", cudaGetErrorString(cudaDeviceSynchronize()));
    return 0;
}
