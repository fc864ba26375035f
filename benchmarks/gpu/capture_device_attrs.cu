// Device attributes that matter for L2 persistence and on-chip memory, read through the CUDA runtime.
//
//   nvcc -O2 -gencode=arch=compute_90a,code=sm_90a -o capture_device_attrs benchmarks/gpu/capture_device_attrs.cu
//   ./capture_device_attrs > device.json
//
// Prints one JSON object: every attribute read with cudaDeviceGetAttribute (and the same fields of
// cudaDeviceProp where CUDA 13 still has them, as a cross-check), the driver and runtime versions,
// and what happens when this process asks for the largest persisting-L2 carve-out
// (cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize), a setting of this process's context only,
// undone when the process exits) and applies an access-policy window to a stream.
// Every CUDA call's status is checked; a failed read is reported as {"error": "..."}.
#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

static std::string esc(const char* s) {
    std::string out;
    for (; *s; ++s) {
        if (*s == '"' || *s == '\\') out += '\\';
        out += *s;
    }
    return out;
}

struct Attr {
    const char* name;
    cudaDeviceAttr attr;
    const char* unit;
};

__global__ void touch(float* p, size_t n) {
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) p[i] = p[i] * 2.0f + 1.0f;
}

int main() {
    int dev = 0;
    cudaError_t e = cudaSetDevice(dev);
    if (e != cudaSuccess) {
        printf("{\"error\": \"cudaSetDevice: %s\"}\n", cudaGetErrorString(e));
        return 1;
    }
    const Attr attrs[] = {
        {"l2CacheSize", cudaDevAttrL2CacheSize, "bytes"},
        {"persistingL2CacheMaxSize", cudaDevAttrMaxPersistingL2CacheSize, "bytes"},
        {"accessPolicyMaxWindowSize", cudaDevAttrMaxAccessPolicyWindowSize, "bytes"},
        {"sharedMemPerBlock", cudaDevAttrMaxSharedMemoryPerBlock, "bytes"},
        {"sharedMemPerBlockOptin", cudaDevAttrMaxSharedMemoryPerBlockOptin, "bytes"},
        {"sharedMemPerMultiprocessor", cudaDevAttrMaxSharedMemoryPerMultiprocessor, "bytes"},
        {"reservedSharedMemPerBlock", cudaDevAttrReservedSharedMemoryPerBlock, "bytes"},
        {"regsPerMultiprocessor", cudaDevAttrMaxRegistersPerMultiprocessor, "32-bit registers"},
        {"regsPerBlock", cudaDevAttrMaxRegistersPerBlock, "32-bit registers"},
        {"maxThreadsPerMultiProcessor", cudaDevAttrMaxThreadsPerMultiProcessor, "threads"},
        {"maxThreadsPerBlock", cudaDevAttrMaxThreadsPerBlock, "threads"},
        {"maxBlocksPerMultiProcessor", cudaDevAttrMaxBlocksPerMultiprocessor, "blocks"},
        {"multiProcessorCount", cudaDevAttrMultiProcessorCount, "SMs"},
        {"warpSize", cudaDevAttrWarpSize, "threads"},
        {"clusterLaunch", cudaDevAttrClusterLaunch, "bool"},
        {"memoryBusWidth", cudaDevAttrGlobalMemoryBusWidth, "bits"},
        {"memoryClockRate", cudaDevAttrMemoryClockRate, "kHz"},
        {"clockRate", cudaDevAttrClockRate, "kHz"},
        {"computeCapabilityMajor", cudaDevAttrComputeCapabilityMajor, ""},
        {"computeCapabilityMinor", cudaDevAttrComputeCapabilityMinor, ""},
        {"totalConstMem", cudaDevAttrTotalConstantMemory, "bytes"},
        {"eccEnabled", cudaDevAttrEccEnabled, "bool"},
        {"unifiedAddressing", cudaDevAttrUnifiedAddressing, "bool"},
        {"pageableMemoryAccess", cudaDevAttrPageableMemoryAccess, "bool"},
        {"memoryPoolsSupported", cudaDevAttrMemoryPoolsSupported, "bool"},
        {"cooperativeLaunch", cudaDevAttrCooperativeLaunch, "bool"},
        {"globalL1CacheSupported", cudaDevAttrGlobalL1CacheSupported, "bool"},
        {"localL1CacheSupported", cudaDevAttrLocalL1CacheSupported, "bool"},
        {"asyncEngineCount", cudaDevAttrAsyncEngineCount, "engines"},
        {"pciBusId", cudaDevAttrPciBusId, ""},
        {"pciDeviceId", cudaDevAttrPciDeviceId, ""},
    };

    printf("{\n");
    int driver = 0, runtime = 0;
    cudaDriverGetVersion(&driver);
    cudaRuntimeGetVersion(&runtime);
    printf("  \"cudaDriverGetVersion\": %d,\n  \"cudaRuntimeGetVersion\": %d,\n", driver, runtime);

    cudaDeviceProp prop;
    memset(&prop, 0, sizeof(prop));
    e = cudaGetDeviceProperties(&prop, dev);
    if (e == cudaSuccess) {
        char uuid[64];
        char* u = uuid;
        for (int i = 0; i < 16; ++i) u += snprintf(u, 4, "%02x", (unsigned char)prop.uuid.bytes[i]);
        printf("  \"name\": \"%s\",\n  \"uuid\": \"%s\",\n", esc(prop.name).c_str(), uuid);
        printf("  \"totalGlobalMem\": %zu,\n", prop.totalGlobalMem);
        printf("  \"cudaGetDeviceProperties\": {\"l2CacheSize\": %d, \"persistingL2CacheMaxSize\": %d, "
               "\"accessPolicyMaxWindowSize\": %d, \"sharedMemPerBlock\": %zu, \"sharedMemPerBlockOptin\": %zu, "
               "\"sharedMemPerMultiprocessor\": %zu, \"reservedSharedMemPerBlock\": %zu, \"regsPerMultiprocessor\": %d, "
               "\"regsPerBlock\": %d, \"maxThreadsPerMultiProcessor\": %d, \"maxBlocksPerMultiProcessor\": %d, "
               "\"multiProcessorCount\": %d, \"memoryBusWidth\": %d, \"clusterLaunch\": %d, \"major\": %d, \"minor\": %d},\n",
               prop.l2CacheSize, prop.persistingL2CacheMaxSize, prop.accessPolicyMaxWindowSize, prop.sharedMemPerBlock,
               prop.sharedMemPerBlockOptin, prop.sharedMemPerMultiprocessor, prop.reservedSharedMemPerBlock,
               prop.regsPerMultiprocessor, prop.regsPerBlock, prop.maxThreadsPerMultiProcessor,
               prop.maxBlocksPerMultiProcessor, prop.multiProcessorCount, prop.memoryBusWidth, prop.clusterLaunch,
               prop.major, prop.minor);
    } else {
        printf("  \"cudaGetDeviceProperties\": {\"error\": \"%s\"},\n", cudaGetErrorString(e));
    }
    size_t free_b = 0, total_b = 0;
    e = cudaMemGetInfo(&free_b, &total_b);
    if (e == cudaSuccess) printf("  \"cudaMemGetInfo\": {\"free\": %zu, \"total\": %zu},\n", free_b, total_b);

    printf("  \"attributes\": {\n");
    const int n = sizeof(attrs) / sizeof(attrs[0]);
    for (int i = 0; i < n; ++i) {
        int v = 0;
        e = cudaDeviceGetAttribute(&v, attrs[i].attr, dev);
        if (e == cudaSuccess)
            printf("    \"%s\": {\"value\": %d, \"unit\": \"%s\", \"enum\": %d}%s\n", attrs[i].name, v, attrs[i].unit,
                   (int)attrs[i].attr, i + 1 < n ? "," : "");
        else
            printf("    \"%s\": {\"error\": \"%s\", \"enum\": %d}%s\n", attrs[i].name, cudaGetErrorString(e), (int)attrs[i].attr,
                   i + 1 < n ? "," : "");
    }
    printf("  },\n");

    // Driver API: the same L2 figures through cuDeviceGetAttribute (a second path to the same numbers),
    // reached through the runtime's entry-point query so that the program needs no -lcuda.
    typedef CUresult (*GetAttr)(int*, CUdevice_attribute, CUdevice);
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult q;
    e = cudaGetDriverEntryPointByVersion("cuDeviceGetAttribute", &fn, 12000, cudaEnableDefault, &q);
    if (e == cudaSuccess && fn) {
        GetAttr get = (GetAttr)fn;
        int l2 = -1, pers = -1, win = -1, smem = -1;
        CUresult r1 = get(&l2, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, (CUdevice)dev);
        CUresult r2 = get(&pers, CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE, (CUdevice)dev);
        CUresult r3 = get(&win, CU_DEVICE_ATTRIBUTE_MAX_ACCESS_POLICY_WINDOW_SIZE, (CUdevice)dev);
        CUresult r4 = get(&smem, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR, (CUdevice)dev);
        printf("  \"cuDeviceGetAttribute\": {\"L2_CACHE_SIZE\": %d, \"MAX_PERSISTING_L2_CACHE_SIZE\": %d, "
               "\"MAX_ACCESS_POLICY_WINDOW_SIZE\": %d, \"MAX_SHARED_MEMORY_PER_MULTIPROCESSOR\": %d, \"status\": [%d, %d, %d, %d]},\n",
               l2, pers, win, smem, (int)r1, (int)r2, (int)r3, (int)r4);
    } else {
        printf("  \"cuDeviceGetAttribute\": {\"error\": \"%s\"},\n", cudaGetErrorString(e));
    }

    // Persisting-L2 limit of this context: default, then asked for the maximum, read back.
    size_t lim0 = 0, lim1 = 0;
    cudaError_t g0 = cudaDeviceGetLimit(&lim0, cudaLimitPersistingL2CacheSize);
    cudaError_t s1 = cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, (size_t)prop.persistingL2CacheMaxSize);
    cudaError_t g1 = cudaDeviceGetLimit(&lim1, cudaLimitPersistingL2CacheSize);
    printf("  \"persistingL2Limit\": {\"default\": %zu, \"default_status\": \"%s\", \"asked\": %d, \"set_status\": \"%s\", "
           "\"read_back\": %zu, \"read_status\": \"%s\"},\n",
           lim0, cudaGetErrorString(g0), prop.persistingL2CacheMaxSize, cudaGetErrorString(s1), lim1, cudaGetErrorString(g1));

    // An access-policy window on a stream, then a kernel in it: does the runtime accept it?
    cudaStream_t st;
    cudaStreamCreate(&st);
    size_t bytes = (size_t)prop.accessPolicyMaxWindowSize;
    float* buf = nullptr;
    cudaError_t ma = cudaMalloc(&buf, bytes);
    cudaError_t sa = cudaErrorUnknown, ka = cudaErrorUnknown, ga = cudaErrorUnknown;
    cudaStreamAttrValue back;
    memset(&back, 0, sizeof(back));
    if (ma == cudaSuccess) {
        cudaMemset(buf, 0, bytes);
        cudaStreamAttrValue v;
        memset(&v, 0, sizeof(v));
        v.accessPolicyWindow.base_ptr = buf;
        v.accessPolicyWindow.num_bytes = bytes;
        v.accessPolicyWindow.hitRatio = 1.0f;
        v.accessPolicyWindow.hitProp = cudaAccessPropertyPersisting;
        v.accessPolicyWindow.missProp = cudaAccessPropertyStreaming;
        sa = cudaStreamSetAttribute(st, cudaStreamAttributeAccessPolicyWindow, &v);
        ga = cudaStreamGetAttribute(st, cudaStreamAttributeAccessPolicyWindow, &back);
        size_t nf = bytes / sizeof(float);
        touch<<<(unsigned)((nf + 255) / 256), 256, 0, st>>>(buf, nf);
        ka = cudaGetLastError();
        if (ka == cudaSuccess) ka = cudaStreamSynchronize(st);
        // Reset: window off, persisting lines back to normal.
        cudaStreamAttrValue off;
        memset(&off, 0, sizeof(off));
        cudaStreamSetAttribute(st, cudaStreamAttributeAccessPolicyWindow, &off);
        cudaCtxResetPersistingL2Cache();
        cudaFree(buf);
    }
    printf("  \"accessPolicyWindowTest\": {\"num_bytes\": %zu, \"malloc\": \"%s\", \"set\": \"%s\", \"get\": \"%s\", "
           "\"num_bytes_read_back\": %zu, \"kernel\": \"%s\"},\n",
           bytes, cudaGetErrorString(ma), cudaGetErrorString(sa), cudaGetErrorString(ga), back.accessPolicyWindow.num_bytes,
           cudaGetErrorString(ka));
    cudaStreamDestroy(st);

    // Function attributes of the tiny kernel above: registers, and the shared-memory carve-out it sees.
    cudaFuncAttributes fa;
    e = cudaFuncGetAttributes(&fa, touch);
    if (e == cudaSuccess)
        printf("  \"probeKernel\": {\"numRegs\": %d, \"ptxVersion\": %d, \"binaryVersion\": %d, \"maxDynamicSharedSizeBytes\": %d},\n",
               fa.numRegs, fa.ptxVersion, fa.binaryVersion, fa.maxDynamicSharedSizeBytes);
    e = cudaDeviceSynchronize();
    printf("  \"final_status\": \"%s\"\n}\n", cudaGetErrorString(e));
    return e == cudaSuccess ? 0 : 1;
}
