// markcost.cu: does an event watermark, as device.Tracker records on a stream, change what a
// one-node graph's replay costs? Five ways, rotating round by round, each a round of 100
// cudaGraphLaunch calls then a wait: plain (cudaStreamSynchronize); rec (an event record after
// the launches, then synchronize); recq (the record, then spin on cudaEventQuery, as the
// tracker polls); rec32 (a record every 32 launches, LaunchN's chunk, and after the last, then
// spin on the last); q (spin on cudaStreamQuery). Each way has a stream of its own, or with
// "shared" all use one. Prints the median µs/launch of each, the enqueue part, and against
// plain.
// H100 (session 11, five runs on two machines): every way within 0.98–1.04× of plain (rec32, the
// most records, at 1.002–1.040 in the three runs with a stream per way; within 1.003 on one
// shared stream), so the watermarks are a small part of what a LaunchN round pays over C++.
// Which streams are in use matters far more: with a stream per way every way enqueued at
// 2.16–2.28 µs/launch; on one shared stream at 1.33–2.06, once below the GPU's own 1.8 µs a
// graph.
// Build: nvcc -O2 -std=c++17 -arch=sm_90 -o markcost markcost.cu
#include "chain.h"

#include <string>

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 2000;
  const bool shared = argc > 2 && std::string(argv[2]) == "shared";
  CK(cudaSetDevice(0));
  enum { kPlain, kRec, kRecQuery, kRec32, kQuery, kWays };
  const char* names[kWays] = {"plain", "rec", "recq", "rec32", "q"};
  cudaStream_t s[kWays];
  cudaGraphExec_t x[kWays];
  cudaEvent_t ev[kWays][4];
  for (int w = 0; w < kWays; w++) {
    if (w == 0 || !shared) CK(cudaStreamCreateWithFlags(&s[w], cudaStreamNonBlocking));
    else s[w] = s[0];
    x[w] = chain(1);
    for (auto& e : ev[w]) CK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    CK(cudaGraphLaunch(x[w], s[w]));
    CK(cudaStreamSynchronize(s[w]));
  }
  std::vector<double> all[kWays], enq[kWays];
  for (int r = 0; r < rounds; r++) {
    for (int j = 0; j < kWays; j++) {
      const int w = (r + j) % kWays;
      auto t0 = clk::now();
      for (int i = 0; i < 100; i++) {
        CK(cudaGraphLaunch(x[w], s[w]));
        if (w == kRec32 && i % 32 == 31) CK(cudaEventRecord(ev[w][i / 32], s[w]));
      }
      if (w == kRec || w == kRecQuery || w == kRec32) CK(cudaEventRecord(ev[w][3], s[w]));
      auto t1 = clk::now();
      cudaError_t e = cudaSuccess;
      if (w == kPlain || w == kRec) e = cudaStreamSynchronize(s[w]);
      else if (w == kQuery) while ((e = cudaStreamQuery(s[w])) == cudaErrorNotReady) {}
      else while ((e = cudaEventQuery(ev[w][3])) == cudaErrorNotReady) {}
      CK(e);
      auto t2 = clk::now();
      if (r > 0) {
        all[w].push_back(micros(t0, t2) / 100);
        enq[w].push_back(micros(t0, t1) / 100);
      }
    }
  }
  std::printf("%s, %d rounds\n", shared ? "one shared stream" : "a stream per way", rounds);
  for (int w = 0; w < kWays; w++)
    std::printf("%-6s %.3f us/launch (enqueue %.3f), x plain %.3f\n", names[w], median(all[w]), median(enq[w]),
                median(all[w]) / median(all[0]));
  return 0;
}
