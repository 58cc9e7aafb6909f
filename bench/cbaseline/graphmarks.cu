// graphmarks: what gpuactor's completion tracking does to the graph_node rows, replayed in C++.
// A round is 100 launches of a chain of n empty kernels on one non-blocking stream, timed from
// the first launch until the host knows the last has run (the graph_node row's round). Ways:
//   plain    launches, then cudaStreamSynchronize (the C++ baseline's round);
//   marks    an event recorded after every 16th launch and after the last, then a synchronize;
//   window   as marks, but at most 64 launches in flight, the host spinning on cudaEventQuery
//            for the event covering the launch 64 back, and at the end for the last event
//            (gpuactor's futures, without the actor);
//   polled   as window, with a cudaEventQuery of the oldest event in flight after every launch
//            (the actor's poll between messages).
// Prints the median µs per node over 15 rounds for each way, the ways interleaved, 3 passes,
// and for the plain way the GPU's span (timing events around the launches) and how much of
// the round lies outside it (µs a round).
// Build: nvcc -O2 -std=c++17 -arch=sm_90 -o graphmarks graphmarks.cu
#include "chain.h"

#include <algorithm>
#include <chrono>
#include <deque>
#include <vector>

enum Way { kPlain, kMarks, kWindow, kPolled, kWays };
static const char* kNames[] = {"plain", "marks", "window", "polled"};

struct Marks {
  std::vector<cudaEvent_t> pool;
  std::deque<std::pair<int, cudaEvent_t>> inflight;  // launch index covered, event
  size_t next = 0;
  cudaEvent_t take() { return pool[next++ % pool.size()]; }
};

static void spin(cudaEvent_t e) {
  while (cudaEventQuery(e) == cudaErrorNotReady) {}
}

static cudaEvent_t g_t0, g_t1;  // timing events around the plain way's launches
static double g_gpu_us;          // the last plain round's GPU span

static double round_us(Way w, cudaGraphExec_t x, cudaStream_t s, Marks& m) {
  const int launches = 100, window = 64, every = 16;
  m.inflight.clear();
  int done = -1;  // launches known complete: [0, done]
  auto t0 = clk::now();
  if (w == kPlain) CK(cudaEventRecord(g_t0, s));
  for (int i = 0; i < launches; ++i) {
    if (w >= kWindow) {
      while (i - done > window) {  // wait for the event covering launch i-64
        auto [k, e] = m.inflight.front();
        spin(e);
        done = k;
        m.inflight.pop_front();
      }
    }
    CK(cudaGraphLaunch(x, s));
    if (w != kPlain && (i % every == every - 1 || i == launches - 1)) {
      cudaEvent_t e = m.take();
      CK(cudaEventRecord(e, s));
      m.inflight.push_back({i, e});
    }
    if (w == kPolled && !m.inflight.empty()) {
      auto [k, e] = m.inflight.front();
      if (cudaEventQuery(e) == cudaSuccess) {
        done = k;
        m.inflight.pop_front();
      }
    }
  }
  if (w >= kWindow) {
    while (!m.inflight.empty()) {
      spin(m.inflight.front().second);
      m.inflight.pop_front();
    }
  } else {
    if (w == kPlain) CK(cudaEventRecord(g_t1, s));
    CK(cudaStreamSynchronize(s));
  }
  double wall = std::chrono::duration<double, std::micro>(clk::now() - t0).count();
  if (w == kPlain) {
    float ms;
    CK(cudaEventElapsedTime(&ms, g_t0, g_t1));
    g_gpu_us = ms * 1e3;
  }
  return wall;
}

int main() {
  CK(cudaSetDevice(0));
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  std::printf("%s\n", prop.name);
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  CK(cudaEventCreate(&g_t0));
  CK(cudaEventCreate(&g_t1));
  Marks m;
  m.pool.resize(64);
  for (auto& e : m.pool) CK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  for (int n : {1, 10, 100}) {
    cudaGraphExec_t x = chain(n);
    CK(cudaGraphLaunch(x, s));
    CK(cudaStreamSynchronize(s));
    for (int pass = 0; pass < 3; ++pass) {
      std::vector<double> per[kWays], gpu, gap;
      for (int r = 0; r < 15; ++r)
        for (int w = 0; w < kWays; ++w) {
          double us = round_us(Way(w), x, s, m);
          per[w].push_back(us / (100.0 * n));
          if (w == kPlain) {
            gpu.push_back(g_gpu_us / (100.0 * n));
            gap.push_back(us - g_gpu_us);
          }
        }
      std::printf("n=%-3d pass %d", n, pass);
      double base = 0;
      for (int w = 0; w < kWays; ++w) {
        std::sort(per[w].begin(), per[w].end());
        double med = per[w][per[w].size() / 2];
        if (w == kPlain) base = med;
        std::printf("  %s %.3f (%.3fx)", kNames[w], med, med / base);
      }
      std::sort(gpu.begin(), gpu.end());
      std::sort(gap.begin(), gap.end());
      std::printf("  plain-gpu %.3f  plain wall-gpu %.1f us/round\n", gpu[gpu.size() / 2], gap[gap.size() / 2]);
    }
    CK(cudaGraphExecDestroy(x));
  }
  return 0;
}
