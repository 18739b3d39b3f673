// One compare-exchange step of a bitonic sort (the HSA dispatch blog: 32,768 integers sorted
// by 120 short launches of this kernel). One thread per element.
extern "C" __global__ void bitonic_step(int* a, int j, int k, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int partner = i ^ j;
    if (partner > i) {
        bool ascending = (i & k) == 0;
        int x = a[i], y = a[partner];
        if ((x > y) == ascending) {
            a[i] = y;
            a[partner] = x;
        }
    }
}
