// graphpaths.cu: what a graph replay costs per node through the runtime's cudaGraphLaunch and
// through the driver's cuGraphLaunch (reached with cudaGetDriverEntryPointByVersion, as
// gpuactor reaches its driver functions), measured as suite.cu's graph_node row is: 100
// launches of an empty-kernel chain back to back, then a synchronize. The two paths alternate
// repeat by repeat, so that drift hits both alike. Prints the median µs/node of each and their
// ratio, for chains of 1 and 10 nodes.
// Build: nvcc -O2 -std=c++17 -arch=sm_90 -o graphpaths graphpaths.cu
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

typedef CUresult (*cuGraphLaunch_t)(CUgraphExec, CUstream);
using clk = std::chrono::steady_clock;

static cudaGraph_t chain(int n) {
  cudaGraph_t g;
  CHECK(cudaGraphCreate(&g, 0));
  cudaKernelNodeParams p = {};
  p.func = reinterpret_cast<void*>(empty);
  p.gridDim = dim3(1);
  p.blockDim = dim3(1);
  cudaGraphNode_t prev = nullptr;
  for (int i = 0; i < n; ++i) {
    cudaGraphNode_t node;
    CHECK(cudaGraphAddKernelNode(&node, g, prev ? &prev : nullptr, prev ? 1 : 0, &p));
    prev = node;
  }
  return g;
}

static double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

int main() {
  CHECK(cudaSetDevice(0));
  cudaStream_t s;
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult q;
  CHECK(cudaGetDriverEntryPointByVersion("cuGraphLaunch", &fn, 12000, cudaEnableDefault, &q));
  if (q != cudaDriverEntryPointSuccess || fn == nullptr) {
    std::fprintf(stderr, "cuGraphLaunch not found\n");
    return 1;
  }
  auto cuLaunch = reinterpret_cast<cuGraphLaunch_t>(fn);
  const int kLaunches = 100, kRepeats = 201;
  for (int n : {1, 10}) {
    cudaGraph_t g = chain(n);
    cudaGraphExec_t x;
    CHECK(cudaGraphInstantiateWithFlags(&x, g, 0));
    CHECK(cudaGraphLaunch(x, s));
    CHECK(cudaStreamSynchronize(s));
    std::vector<double> rt, drv;
    for (int r = -2; r < kRepeats; ++r) {
      for (int path = 0; path < 2; ++path) {
        auto t0 = clk::now();
        for (int i = 0; i < kLaunches; ++i) {
          if (path == 0) {
            CHECK(cudaGraphLaunch(x, s));
          } else if (cuLaunch((CUgraphExec)x, (CUstream)s) != CUDA_SUCCESS) {
            std::fprintf(stderr, "cuGraphLaunch failed\n");
            return 1;
          }
        }
        CHECK(cudaStreamSynchronize(s));
        double us = std::chrono::duration<double>(clk::now() - t0).count() * 1e6 / (kLaunches * n);
        if (r >= 0) (path == 0 ? rt : drv).push_back(us);
      }
    }
    double a = median(rt), b = median(drv);
    std::printf("graph_node %dB: cudaGraphLaunch %.3f us/node, cuGraphLaunch %.3f us/node, driver/runtime %.3f\n", n, a,
                b, b / a);
    CHECK(cudaGraphExecDestroy(x));
    CHECK(cudaGraphDestroy(g));
  }
  return 0;
}
