// Test oracle: evaluates NVIDIA's own cuda_occupancy.h (from the CUDA toolkit on the test
// machine) for cases read from stdin. Built by tests at run time; never committed as a binary.
//
// Input, one case per line (integers):
//   major minor maxThreadsPerBlock maxThreadsPerSM regsPerBlock regsPerSM warpSize
//   smemPerBlock smemPerSM numSms smemPerBlockOptin reservedSmemPerBlock
//   funcMaxThreads numRegs sharedSizeBytes shmemLimitConfig(0 default,1 optin)
//   maxDynamicSharedSizeBytes numBlockBarriers virtualResourceCount
//   carveout blockSize dynamicSmem availNumBlocks
// Output, one line per case:
//   status blocks limitingFactors limRegs limSmem limWarps limBlocks limBars limVirtual
//   allocRegs allocSmem potStatus potMinGrid potBlockSize availStatus availBytes
#include <cuda_occupancy.h>
#include <cstdio>

int main() {
    long long v[24];
    while (true) {
        for (int i = 0; i < 24; ++i) {
            if (scanf("%lld", &v[i]) != 1) return 0;
        }
        cudaOccDeviceProp p;
        p.computeMajor = (int)v[0]; p.computeMinor = (int)v[1];
        p.maxThreadsPerBlock = (int)v[2]; p.maxThreadsPerMultiprocessor = (int)v[3];
        p.regsPerBlock = (int)v[4]; p.regsPerMultiprocessor = (int)v[5]; p.warpSize = (int)v[6];
        p.sharedMemPerBlock = (size_t)v[7]; p.sharedMemPerMultiprocessor = (size_t)v[8];
        p.numSms = (int)v[9]; p.sharedMemPerBlockOptin = (size_t)v[10];
        p.reservedSharedMemPerBlock = (size_t)v[11];
        cudaOccFuncAttributes a;
        a.maxThreadsPerBlock = (int)v[12]; a.numRegs = (int)v[13]; a.sharedSizeBytes = (size_t)v[14];
        a.partitionedGCConfig = PARTITIONED_GC_OFF;
        a.shmemLimitConfig = v[15] ? FUNC_SHMEM_LIMIT_OPTIN : FUNC_SHMEM_LIMIT_DEFAULT;
        a.maxDynamicSharedSizeBytes = (size_t)v[16];
        a.numBlockBarriers = (int)v[17]; a.virtualResourceCount = (int)v[18];
        cudaOccDeviceState s;
        s.carveoutConfig = (int)v[19];
        int block = (int)v[20];
        size_t dyn = (size_t)v[21];
        int availBlocks = (int)v[22];
        (void)v[23];
        cudaOccResult r = {};
        cudaOccError st = cudaOccMaxActiveBlocksPerMultiprocessor(&r, &p, &a, &s, block, dyn);
        int minGrid = 0, bestBlock = 0;
        cudaOccError pst = cudaOccMaxPotentialOccupancyBlockSize(&minGrid, &bestBlock, &p, &a, &s, dyn);
        size_t avail = 0;
        cudaOccError ast = cudaOccAvailableDynamicSMemPerBlock(&avail, &p, &a, &s, availBlocks, block);
        printf("%d %d %u %d %d %d %d %d %d %d %zu %d %d %d %d %zu\n", (int)st,
               r.activeBlocksPerMultiprocessor, r.limitingFactors, r.blockLimitRegs,
               r.blockLimitSharedMem, r.blockLimitWarps, r.blockLimitBlocks, r.blockLimitBarriers,
               r.blockLimitVirtual, r.allocatedRegistersPerBlock, r.allocatedSharedMemPerBlock,
               (int)pst, minGrid, bestBlock, (int)ast, avail);
        fflush(stdout);
    }
}
