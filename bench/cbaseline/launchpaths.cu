// launchpaths.cu: the enqueue cost of one empty kernel through each launch path the runtime
// offers, to tell what the path costs from what a binding adds. gpuactor launches a
// cudaKernel_t (cudaLibraryGetKernel) on 12.8+ and a CUfunction (cuLaunchKernel) before.
// Build: nvcc -O2 -std=c++17 -arch=sm_90 -o launchpaths launchpaths.cu
#include <cuda.h>
#include <cuda_runtime.h>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK(call)                                                                        \
  do {                                                                                     \
    cudaError_t e_ = (call);                                                               \
    if (e_ != cudaSuccess) {                                                               \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
      std::exit(1);                                                                        \
    }                                                                                      \
  } while (0)

__global__ void empty() {}

typedef CUresult (*cuLaunchKernel_t)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                                     unsigned, unsigned, CUstream, void**, void**);

template <typename F>
static double median_us(F launch, cudaStream_t s) {
  const int n = 20000;
  std::vector<double> per;
  for (int r = 0; r < 22; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < n; ++i) launch();
    CHECK(cudaStreamSynchronize(s));
    auto t1 = std::chrono::steady_clock::now();
    if (r > 0) per.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count() / n);
  }
  std::sort(per.begin(), per.end());
  return per[per.size() / 2];
}

int main() {
  CHECK(cudaSetDevice(0));
  cudaStream_t s;
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  dim3 one(1, 1, 1);

  cudaKernel_t k;
  CHECK(cudaGetKernel(&k, (const void*)empty));
  cudaFunction_t f;
  CHECK(cudaGetFuncBySymbol(&f, (const void*)empty));
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult q;
  CHECK(cudaGetDriverEntryPointByVersion("cuLaunchKernel", &fn, 12000, cudaEnableDefault, &q));
  auto cuLaunch = (cuLaunchKernel_t)fn;

  auto chevrons = [&] { empty<<<one, one, 0, s>>>(); };
  auto stub = [&] { CHECK(cudaLaunchKernel((const void*)empty, one, one, nullptr, 0, s)); };
  auto kernel_t = [&] { CHECK(cudaLaunchKernel((const void*)k, one, one, nullptr, 0, s)); };
  auto driver = [&] {
    if (cuLaunch((CUfunction)f, 1, 1, 1, 1, 1, 1, 0, (CUstream)s, nullptr, nullptr) != CUDA_SUCCESS) std::exit(1);
  };
  for (int round = 0; round < 2; ++round) {  // twice: the spread between rounds is the noise
    std::printf("cpp launch path <<<>>>             %.3f us\n", median_us(chevrons, s));
    std::printf("cpp launch path cudaLaunchKernel   %.3f us\n", median_us(stub, s));
    std::printf("cpp launch path cudaKernel_t       %.3f us\n", median_us(kernel_t, s));
    std::printf("cpp launch path cuLaunchKernel     %.3f us\n", median_us(driver, s));
  }
  CHECK(cudaGetLastError());
  return 0;
}
