// graphstate: a CUDA graph's time per kernel node, before and after the process has had work
// in flight on several streams. Measured on an H200 (driver 580.159.04): 0.50 µs a node fresh
// and after 120k launches on one stream; 0.68 µs after 120k launches spread over 8 streams,
// and it stays there after those streams are destroyed. It is why the bench suite runs its
// several-stream rows last (bench/scenarios.go).
// Build: nvcc -O2 -std=c++17 -arch=sm_90 -o graphstate graphstate.cu
#include <cuda_runtime.h>
#include <chrono>
#include <cstdio>
#include <vector>
#include <algorithm>
__global__ void empty() {}
#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e_)); return 1; } } while (0)
using clk = std::chrono::steady_clock;
static cudaGraphExec_t x; static cudaStream_t gs;
double pernode(int n) {
  std::vector<double> v;
  for (int r = 0; r < 5; r++) {
    auto t0 = clk::now();
    for (int i = 0; i < 100; i++) cudaGraphLaunch(x, gs);
    cudaStreamSynchronize(gs);
    v.push_back(std::chrono::duration<double, std::micro>(clk::now() - t0).count() / (100.0 * n));
  }
  std::sort(v.begin(), v.end()); return v[2];
}
int main() {
  CK(cudaSetDevice(0));
  CK(cudaStreamCreateWithFlags(&gs, cudaStreamNonBlocking));
  cudaGraph_t g; CK(cudaGraphCreate(&g, 0));
  cudaKernelNodeParams p = {}; p.func = (void*)empty; p.gridDim = dim3(1); p.blockDim = dim3(1);
  cudaGraphNode_t prev = nullptr;
  for (int i = 0; i < 1000; i++) { cudaGraphNode_t nd; CK(cudaGraphAddKernelNode(&nd, g, prev ? &prev : nullptr, prev ? 1 : 0, &p)); prev = nd; }
  CK(cudaGraphInstantiateWithFlags(&x, g, 0)); CK(cudaGraphLaunch(x, gs)); CK(cudaStreamSynchronize(gs));
  printf("fresh: %.3f us/node\n", pernode(1000));
  cudaEvent_t ev; CK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
  for (int i = 0; i < 120000; i++) { empty<<<1,1,0,gs>>>(); if (i % 16 == 15) cudaEventRecord(ev, gs); }
  CK(cudaStreamSynchronize(gs));
  printf("after 120k launches on its stream: %.3f us/node\n", pernode(1000));
  std::vector<cudaStream_t> ss(8);
  for (auto& s : ss) CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  for (int i = 0; i < 120000; i++) { empty<<<1,1,0,ss[i%8]>>>(); if (i % 32 == 31) cudaEventRecord(ev, ss[i%8]); }
  CK(cudaDeviceSynchronize());
  printf("after 120k launches over 8 live streams: %.3f us/node\n", pernode(1000));
  for (auto& s : ss) CK(cudaStreamDestroy(s));
  printf("after destroying them: %.3f us/node\n", pernode(1000));
  for (int i = 0; i < 120000; i++) { empty<<<1,1,0,gs>>>(); }
  CK(cudaStreamSynchronize(gs));
  printf("after 120k more launches: %.3f us/node\n", pernode(1000));
  return 0;
}
