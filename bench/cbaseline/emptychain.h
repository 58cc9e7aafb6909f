// emptychain.h: the empty kernel, and a graph of a chain of n of them, as suite.cu's graph
// rows build it.
#pragma once
#include <cuda_runtime.h>
#include <cstdio>
#include <cstdlib>

__global__ void empty() {}

// empty_chain returns a graph of n empty-kernel nodes, each after the one before. A failing
// call means the run is broken: it says which and exits.
static cudaGraph_t empty_chain(int n) {
  auto check = [](cudaError_t e, const char* what) {
    if (e != cudaSuccess) {
      std::fprintf(stderr, "empty_chain: %s: %s\n", what, cudaGetErrorString(e));
      std::exit(1);
    }
  };
  cudaGraph_t g;
  check(cudaGraphCreate(&g, 0), "cudaGraphCreate");
  cudaKernelNodeParams p = {};
  p.func = reinterpret_cast<void*>(empty);
  p.gridDim = dim3(1);
  p.blockDim = dim3(1);
  cudaGraphNode_t prev = nullptr;
  for (int i = 0; i < n; ++i) {
    cudaGraphNode_t node;
    check(cudaGraphAddKernelNode(&node, g, prev ? &prev : nullptr, prev ? 1 : 0, &p),
          "cudaGraphAddKernelNode");
    prev = node;
  }
  return g;
}
