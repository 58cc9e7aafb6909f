// chain.h: what the graph probes share (graphmarks.cu, graphpaths.cu, markcost.cu,
// kernorigin.cu, spinneighbor.cu, streamslot.cu, cpuslot.cu): the error check, a chain of n
// empty kernels, instantiated, as suite.cu's graph rows launch it, the clock, the median and
// a timed replay.
#pragma once
#include <cuda_runtime.h>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "emptychain.h"

using clk = std::chrono::steady_clock;

static double micros(clk::time_point a, clk::time_point b) {
  return std::chrono::duration<double, std::micro>(b - a).count();
}

static double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { std::printf("%s: %s\n", #x, cudaGetErrorString(e_)); std::exit(1); } } while (0)

// chain is empty_chain(n) instantiated, its graph destroyed.
static cudaGraphExec_t chain(int n) {
  cudaGraph_t g = empty_chain(n);
  cudaGraphExec_t x;
  CK(cudaGraphInstantiateWithFlags(&x, g, 0));
  CK(cudaGraphDestroy(g));
  return x;
}

// replay times x on s as the suite's graph_node row does: 11 rounds of 100 launches then a
// synchronize, after one untimed; the median µs a launch.
inline double replay(cudaGraphExec_t x, cudaStream_t s) {
  std::vector<double> v;
  for (int r = -1; r < 11; r++) {
    auto t0 = clk::now();
    for (int i = 0; i < 100; i++) CK(cudaGraphLaunch(x, s));
    CK(cudaStreamSynchronize(s));
    if (r >= 0) v.push_back(micros(t0, clk::now()) / 100);
  }
  return median(v);
}
