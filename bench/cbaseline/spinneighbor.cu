// spinneighbor.cu: does a second thread spinning on an atomic, as a Go caller spins in Await
// beside the device actor during a LaunchN, slow a one-node graph's launches on the launching
// thread? Rounds of 100 launches then a synchronize alternate alone and with a spinner,
// started (outside the timing) before the round and stopped after it. Prints the median
// µs/launch of each, the enqueue part, and the median ratio.
// H100 (session 11, no SMT): 1.002–1.006× in three runs, so the caller's spin costs the
// actor's launches nothing measurable.
// Build: nvcc -O2 -std=c++17 -arch=sm_90 -o spinneighbor spinneighbor.cu
#include "chain.h"

#include <atomic>
#include <thread>

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 2000;
  CK(cudaSetDevice(0));
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaGraphExec_t x = chain(1);
  CK(cudaGraphLaunch(x, s));
  CK(cudaStreamSynchronize(s));
  std::vector<double> all[2], enq[2], ratio;
  for (int r = 0; r < rounds; r++) {
    double t[2];
    for (int j = 0; j < 2; j++) {
      const int w = (r + j) % 2;  // 1: with a spinner
      std::atomic<bool> stop{false}, up{false};
      std::thread spinner;
      if (w == 1) {
        spinner = std::thread([&] {
          up.store(true);
          while (!stop.load(std::memory_order_relaxed)) {}
        });
        while (!up.load()) {}
      }
      auto t0 = clk::now();
      for (int i = 0; i < 100; i++) CK(cudaGraphLaunch(x, s));
      auto t1 = clk::now();
      CK(cudaStreamSynchronize(s));
      auto t2 = clk::now();
      if (w == 1) {
        stop.store(true);
        spinner.join();
      }
      t[w] = micros(t0, t2) / 100;
      if (r > 0) {
        all[w].push_back(t[w]);
        enq[w].push_back(micros(t0, t1) / 100);
      }
    }
    if (r > 0) ratio.push_back(t[1] / t[0]);
  }
  std::printf("%d rounds: alone %.3f us/launch (enqueue %.3f); beside a spinning thread %.3f (enqueue %.3f); x alone %.3f\n",
              rounds, median(all[0]), median(enq[0]), median(all[1]), median(enq[1]), median(ratio));
  return 0;
}
