// streamslot.cu: does a one-node graph replay cost the same on every stream of a process? The
// in-process bench runs C++ on one long-lived stream and gpuactor's rows on others (the graph
// rows' stream, and a fresh stream per binding row), so a cost that depends on the stream
// would show up as a ratio that is not the code's. Each round measures, in rotating order, a
// replay (11 timed rounds of 100 launches then a synchronize, after one untimed; the median
// µs a launch) on each of S long-lived streams, each with its own exec, and on a stream and
// exec made just for that measurement and destroyed after it. Prints, for each, the median
// over rounds and the median of its per-round ratio to long-lived stream 0.
// H100, session 12, three runs (one with CUDA_DEVICE_MAX_CONNECTIONS=32): the long-lived
// streams at 0.986–1.009× of stream 0, the fresh one at 0.996–1.027×.
// Build: nvcc -O2 -std=c++17 -arch=sm_90 -o streamslot streamslot.cu
// Run: ./streamslot [rounds=61] [streams=4]
#include "chain.h"

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 61;
  const int n = argc > 2 ? std::atoi(argv[2]) : 4;
  CK(cudaSetDevice(0));
  std::vector<cudaStream_t> ss(n);
  std::vector<cudaGraphExec_t> xs(n);
  for (int i = 0; i < n; i++) {
    CK(cudaStreamCreateWithFlags(&ss[i], cudaStreamNonBlocking));
    xs[i] = chain(1);
    replay(xs[i], ss[i]);
  }
  // column i < n: long-lived stream i; column n: a fresh stream and exec.
  std::vector<std::vector<double>> val(n + 1), ratio(n + 1);
  for (int r = 0; r < rounds; r++) {
    std::vector<double> t(n + 1);
    for (int k = 0; k <= n; k++) {
      const int c = (k + r) % (n + 1);
      if (c < n) {
        t[c] = replay(xs[c], ss[c]);
        continue;
      }
      cudaStream_t f;
      CK(cudaStreamCreateWithFlags(&f, cudaStreamNonBlocking));
      cudaGraphExec_t fx = chain(1);
      t[c] = replay(fx, f);
      CK(cudaGraphExecDestroy(fx));
      CK(cudaStreamDestroy(f));
    }
    for (int c = 0; c <= n; c++) {
      val[c].push_back(t[c]);
      ratio[c].push_back(t[c] / t[0]);
    }
  }
  for (int c = 0; c <= n; c++) {
    std::vector<double> q = ratio[c];
    std::sort(q.begin(), q.end());
    if (c < n)
      std::printf("stream %d (long-lived): %.3f us/launch, ratio to stream 0 %.3f (%.3f-%.3f)\n", c,
                  median(val[c]), median(ratio[c]), q.front(), q.back());
    else
      std::printf("fresh stream and exec: %.3f us/launch, ratio to stream 0 %.3f (%.3f-%.3f)\n",
                  median(val[c]), median(ratio[c]), q.front(), q.back());
  }
  return 0;
}
