// staging.h: what the staging probes share (stagecost.cu, regpipe.cu): the error check, the
// GB/s timer, and staged copies through pinned slots done by hand on T threads.
#pragma once
#include <cuda_runtime.h>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e_)); exit(1); } } while (0)

using clk = std::chrono::steady_clock;
static double since(clk::time_point t0) { return std::chrono::duration<double>(clk::now() - t0).count(); }

template <class F> double medianGBs(size_t bytes, F f) {
  f();  // warm-up
  std::vector<double> v;
  for (int r = 0; r < 5; r++) {
    auto t0 = clk::now();
    f();
    v.push_back(bytes / since(t0) / 1e9);
  }
  std::sort(v.begin(), v.end());
  return v[2];
}

// copyOnce copies n bytes between host and dev in one cudaMemcpyAsync on s and waits for it:
// the pinned (or pageable) copy the staged ones are measured against.
static void copyOnce(bool up, char* host, char* dev, size_t n, cudaStream_t s) {
  CK(cudaMemcpyAsync(up ? (void*)dev : (void*)host, up ? (void*)host : (void*)dev, n,
                     up ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost, s));
  CK(cudaStreamSynchronize(s));
}

static const size_t kSlot = 4 << 20;

// copyFn copies a chunk from host memory into a slot (an upload's host side).
using copyFn = void (*)(char*, const char*, size_t);
static void copyMemcpy(char* d, const char* s, size_t n) { memcpy(d, s, n); }

struct Worker {
  cudaStream_t s;
  char* slot[2];
  cudaEvent_t done[2];
};

// staged copies n bytes between host and dev with T workers; worker w takes chunks w, w+T, ...
// Chunks are chunk bytes (at most the workers' slot size); uploads copy each in with cp.
static void staged(bool up, char* host, char* dev, size_t n, std::vector<Worker>& ws, int T,
                   size_t chunk = kSlot, copyFn cp = copyMemcpy) {
  size_t chunks = (n + chunk - 1) / chunk;
  std::vector<std::thread> th;
  for (int w = 0; w < T; w++) {
    th.emplace_back([&, w] {
      Worker& k = ws[w];
      int b = 0;
      if (up) {
        for (size_t c = w; c < chunks; c += T, b ^= 1) {
          size_t off = c * chunk, len = std::min(chunk, n - off);
          CK(cudaEventSynchronize(k.done[b]));
          cp(k.slot[b], host + off, len);
          CK(cudaMemcpyAsync(dev + off, k.slot[b], len, cudaMemcpyHostToDevice, k.s));
          CK(cudaEventRecord(k.done[b], k.s));
        }
      } else {
        // Issue the DMA of the next chunk before copying out the current one.
        size_t first = w;
        if (first < chunks) {
          size_t len = std::min(chunk, n - first * chunk);
          CK(cudaMemcpyAsync(k.slot[0], dev + first * chunk, len, cudaMemcpyDeviceToHost, k.s));
          CK(cudaEventRecord(k.done[0], k.s));
        }
        for (size_t c = w; c < chunks; c += T, b ^= 1) {
          size_t off = c * chunk, len = std::min(chunk, n - off);
          size_t nx = c + T;
          if (nx < chunks) {
            size_t l2 = std::min(chunk, n - nx * chunk);
            CK(cudaMemcpyAsync(k.slot[b ^ 1], dev + nx * chunk, l2, cudaMemcpyDeviceToHost, k.s));
            CK(cudaEventRecord(k.done[b ^ 1], k.s));
          }
          CK(cudaEventSynchronize(k.done[b]));
          memcpy(host + off, k.slot[b], len);
        }
      }
      CK(cudaStreamSynchronize(k.s));
    });
  }
  for (auto& t : th) t.join();
}

// makeWorkers makes n workers, each with its own stream and two pinned slots of slot bytes
// whose events are already recorded (a first wait on them returns at once).
static std::vector<Worker> makeWorkers(int n, size_t slot = kSlot) {
  std::vector<Worker> ws(n);
  for (auto& k : ws) {
    CK(cudaStreamCreateWithFlags(&k.s, cudaStreamNonBlocking));
    for (int b = 0; b < 2; b++) {
      CK(cudaHostAlloc((void**)&k.slot[b], slot, 0));
      CK(cudaEventCreateWithFlags(&k.done[b], cudaEventDisableTiming));
      CK(cudaEventRecord(k.done[b], k.s));
    }
  }
  return ws;
}
