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
  printf("launch %.0f ns\nevent_record %.0f ns\nwrite_value32 %.0f ns\nevent_query_done %.0f ns\nstream_query_idle %.0f ns\n", launch, record, write, query, squery);
  printf("launch+record %.0f ns\nlaunch+record+query %.0f ns\nlaunch+write %.0f ns\nlaunch+write/8 %.0f ns\n", launchRecord, launchRecordQuery, launchWrite, launchWrite8);
  return 0;
}
