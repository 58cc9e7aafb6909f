// launch.cu: the C++ twin of gpuactor's launch benchmarks, direct cudart calls from one thread.
// Build and run on a GPU host:  nvcc -O2 -o launch launch.cu && ./launch
// Prints one line per figure: name, then the median over repeats of the per-op time.
#include <cuda_runtime.h>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK(call)                                                                   \
  do {                                                                                \
    cudaError_t e_ = (call);                                                          \
    if (e_ != cudaSuccess) {                                                          \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #call,               \
                   cudaGetErrorString(e_));                                           \
      std::exit(1);                                                                   \
    }                                                                                 \
  } while (0)

__global__ void empty() {}

using clk = std::chrono::steady_clock;

template <typename F>
static double median_us(int repeats, int iters, F body) {
  std::vector<double> per;
  for (int r = 0; r < repeats; ++r) {
    auto t0 = clk::now();
    body(iters);
    auto t1 = clk::now();
    per.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count() / iters);
  }
  std::sort(per.begin(), per.end());
  return per[per.size() / 2];
}

int main() {
  CHECK(cudaSetDevice(0));
  cudaStream_t s;
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaDeviceProp p;
  CHECK(cudaGetDeviceProperties(&p, 0));
  int rt = 0, drv = 0;
  CHECK(cudaRuntimeGetVersion(&rt));
  CHECK(cudaDriverGetVersion(&drv));
  std::printf("device %s runtime %d driver %d\n", p.name, rt, drv);
  for (int i = 0; i < 1000; ++i) empty<<<1, 1, 0, s>>>();  // warm up
  CHECK(cudaStreamSynchronize(s));

  double launch = median_us(21, 20000, [&](int n) {
    for (int i = 0; i < n; ++i) empty<<<1, 1, 0, s>>>();
    CHECK(cudaGetLastError());
    CHECK(cudaStreamSynchronize(s));
  });
  double roundtrip = median_us(21, 2000, [&](int n) {
    for (int i = 0; i < n; ++i) {
      empty<<<1, 1, 0, s>>>();
      CHECK(cudaStreamSynchronize(s));
    }
  });
  double query = median_us(21, 100000, [&](int n) {
    for (int i = 0; i < n; ++i) CHECK(cudaStreamQuery(s));
  });
  std::printf("cpp launch_enqueue_us %.3f\n", launch);
  std::printf("cpp launch_sync_roundtrip_us %.3f\n", roundtrip);
  std::printf("cpp stream_query_ns %.1f\n", query * 1e3);
  CHECK(cudaStreamDestroy(s));
  return 0;
}
