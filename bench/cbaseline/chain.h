// chain.h: what the graph probes share (graphmarks.cu, graphpaths.cu): the error check and a
// chain of n empty kernels, instantiated, as suite.cu's graph rows launch it.
#pragma once
#include <cuda_runtime.h>
#include <cstdio>
#include <cstdlib>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { std::printf("%s: %s\n", #x, cudaGetErrorString(e_)); std::exit(1); } } while (0)

__global__ void empty() {}

static cudaGraphExec_t chain(int n) {
  cudaGraph_t g;
  CK(cudaGraphCreate(&g, 0));
  cudaKernelNodeParams p = {};
  p.func = reinterpret_cast<void*>(empty);
  p.gridDim = dim3(1);
  p.blockDim = dim3(1);
  cudaGraphNode_t prev = nullptr;
  for (int i = 0; i < n; ++i) {
    cudaGraphNode_t node;
    CK(cudaGraphAddKernelNode(&node, g, prev ? &prev : nullptr, prev ? 1 : 0, &p));
    prev = node;
  }
  cudaGraphExec_t x;
  CK(cudaGraphInstantiateWithFlags(&x, g, 0));
  CK(cudaGraphDestroy(g));
  return x;
}
