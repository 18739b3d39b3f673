// Launches through the driver APIs (written for this test after cuda-samples'
// vectorAddDrv and HIP's module-launch examples): the kernel is a handle the file's
// cuModuleGetFunction / hipModuleGetFunction names, the grid and block three numbers each.
extern "C" __global__ void scale(float* x, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] *= 2.0f; }
void run(CUmodule mod, CUdeviceptr x, int n, CUstream s) {
  CUfunction fn;
  cuModuleGetFunction(&fn, mod, "scale");
  void* args[] = {&x, &n};
  cuLaunchKernel(fn, (n + 99) / 100, 1, 1, 100, 1, 1, 0, s, args, nullptr);
  hipFunction_t hf;
  hipModuleGetFunction(&hf, mod, "scale");
  hipModuleLaunchKernel(hf, 264, 1, 1, 48, 1, 1, 0, s, args, nullptr);
  cuLaunchKernel(other, 4, 1, 1, 32, 2, 1, 0, s, args, nullptr);
}
