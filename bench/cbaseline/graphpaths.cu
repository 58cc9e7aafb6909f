// graphpaths.cu: what a graph replay costs per node through the runtime's cudaGraphLaunch and
// through the driver's cuGraphLaunch (reached with cudaGetDriverEntryPointByVersion, as
// gpuactor reaches its driver functions), measured as suite.cu's graph_node row is: 100
// launches of an empty-kernel chain back to back, then a synchronize. The two paths alternate
// repeat by repeat, so that drift hits both alike. Prints the median µs/node of each and their
// ratio, for chains of 1 and 10 nodes.
// Build: nvcc -O2 -std=c++17 -arch=sm_90 -o graphpaths graphpaths.cu
#include <cuda.h>

#include "chain.h"

#include <algorithm>
#include <chrono>
#include <vector>

typedef CUresult (*cuGraphLaunch_t)(CUgraphExec, CUstream);

int main() {
  CK(cudaSetDevice(0));
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult q;
  CK(cudaGetDriverEntryPointByVersion("cuGraphLaunch", &fn, 12000, cudaEnableDefault, &q));
  if (q != cudaDriverEntryPointSuccess || fn == nullptr) {
    std::fprintf(stderr, "cuGraphLaunch not found\n");
    return 1;
  }
  auto cuLaunch = reinterpret_cast<cuGraphLaunch_t>(fn);
  const int kLaunches = 100, kRepeats = 201;
  for (int n : {1, 10}) {
    cudaGraphExec_t x = chain(n);
    CK(cudaGraphLaunch(x, s));
    CK(cudaStreamSynchronize(s));
    std::vector<double> rt, drv;
    for (int r = -2; r < kRepeats; ++r) {
      for (int path = 0; path < 2; ++path) {
        auto t0 = clk::now();
        for (int i = 0; i < kLaunches; ++i) {
          if (path == 0) {
            CK(cudaGraphLaunch(x, s));
          } else if (cuLaunch((CUgraphExec)x, (CUstream)s) != CUDA_SUCCESS) {
            std::fprintf(stderr, "cuGraphLaunch failed\n");
            return 1;
          }
        }
        CK(cudaStreamSynchronize(s));
        double us = std::chrono::duration<double>(clk::now() - t0).count() * 1e6 / (kLaunches * n);
        if (r >= 0) (path == 0 ? rt : drv).push_back(us);
      }
    }
    double a = median(rt), b = median(drv);
    std::printf("graph_node %dB: cudaGraphLaunch %.3f us/node, cuGraphLaunch %.3f us/node, driver/runtime %.3f\n", n, a,
                b, b / a);
    CK(cudaGraphExecDestroy(x));
  }
  return 0;
}
