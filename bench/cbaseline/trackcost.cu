// trackcost: what each way of noticing GPU progress costs the host thread that issues work,
// on one non-blocking stream. Prints one line per figure (ns per call, median of 7 runs).
// Build: nvcc -O2 -o trackcost trackcost.cu -lcuda
#include <cuda.h>
#include <cuda_runtime.h>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

__global__ void empty() {}

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e_)); return 1; } } while (0)
#define CU(x) do { CUresult r_ = (x); if (r_ != CUDA_SUCCESS) { printf("%s: %d\n", #x, (int)r_); return 1; } } while (0)

template <class F> double perCall(int n, F f) {
  std::vector<double> runs;
  for (int r = 0; r < 7; r++) {
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < n; i++) f(i);
    auto t1 = std::chrono::steady_clock::now();
    runs.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count() / n);
  }
  std::sort(runs.begin(), runs.end());
  return runs[3];
}

int main() {
  CK(cudaSetDevice(0));
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaEvent_t ev;
  CK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
  unsigned *word;
  CK(cudaHostAlloc((void **)&word, 4096, cudaHostAllocMapped | cudaHostAllocPortable));
  const int n = 20000;
  double launch = perCall(n, [&](int) { empty<<<1, 1, 0, s>>>(); });
  CK(cudaStreamSynchronize(s));
  double record = perCall(n, [&](int) { cudaEventRecord(ev, s); });
  CK(cudaStreamSynchronize(s));
  double write = perCall(n, [&](int i) { cuStreamWriteValue32((CUstream)s, (CUdeviceptr)word, i, 0); });
  CK(cudaStreamSynchronize(s));
  double query = perCall(n, [&](int) { cudaEventQuery(ev); });
  double squery = perCall(n, [&](int) { cudaStreamQuery(s); });
  double launchRecord = perCall(n, [&](int) { empty<<<1, 1, 0, s>>>(); cudaEventRecord(ev, s); });
  CK(cudaStreamSynchronize(s));
  double launchRecordQuery = perCall(n, [&](int) { empty<<<1, 1, 0, s>>>(); cudaEventRecord(ev, s); cudaEventQuery(ev); });
  CK(cudaStreamSynchronize(s));
  double launchWrite = perCall(n, [&](int i) { empty<<<1, 1, 0, s>>>(); cuStreamWriteValue32((CUstream)s, (CUdeviceptr)word, i, 0); });
  CK(cudaStreamSynchronize(s));
  double launchWrite8 = perCall(n, [&](int i) { empty<<<1, 1, 0, s>>>(); if (i % 8 == 0) cuStreamWriteValue32((CUstream)s, (CUdeviceptr)word, i, 0); });
  CK(cudaStreamSynchronize(s));
  // Throughput with the GPU's time included (a sync ends each run): plain launches, launches
  // with an event record every k, and the pattern of gpuactor's stream futures: at most 64
  // launches in flight, an event every k, the issuing thread waiting (cudaEventQuery spin) for
  // the event covering the launch 64 back before issuing the next.
  auto synced = [&](int k) {
    return perCall(n, [&](int i) {
      empty<<<1, 1, 0, s>>>();
      if (k > 0 && i % k == k - 1) cudaEventRecord(ev, s);
      if (i == n - 1) cudaStreamSynchronize(s);
    });
  };
  std::vector<cudaEvent_t> ring(64);
  for (auto& e : ring) CK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  auto windowed = [&](int k) {
    return perCall(n, [&](int i) {
      if (i >= 64 && (i - 64) % k == 0) {
        cudaEvent_t e = ring[((i - 64) / k) % 64];
        while (cudaEventQuery(e) == cudaErrorNotReady) {}
      }
      empty<<<1, 1, 0, s>>>();
      if (i % k == k - 1 || k == 1) cudaEventRecord(ring[(i / k) % 64], s);
      if (i == n - 1) cudaStreamSynchronize(s);
    });
  };
  printf("synced_launch %.0f ns\nsynced_launch+record/4 %.0f ns\nsynced_launch+record/1 %.0f ns\n", synced(0), synced(4), synced(1));
  printf("windowed64_record/1 %.0f ns\nwindowed64_record/4 %.0f ns\nwindowed64_record/16 %.0f ns\n", windowed(1), windowed(4), windowed(16));
  printf("launch %.0f ns\nevent_record %.0f ns\nwrite_value32 %.0f ns\nevent_query_done %.0f ns\nstream_query_idle %.0f ns\n", launch, record, write, query, squery);
  printf("launch+record %.0f ns\nlaunch+record+query %.0f ns\nlaunch+write %.0f ns\nlaunch+write/8 %.0f ns\n", launchRecord, launchRecordQuery, launchWrite, launchWrite8);
  return 0;
}
