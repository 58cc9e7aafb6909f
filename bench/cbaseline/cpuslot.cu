// cpuslot.cu: does a one-node graph replay cost the same from every CPU? Separate C++
// processes on one H100 host replay a one-node graph at 1.70 to 2.40 µs a launch, while the
// streams within one process agree to 1% (streamslot.cu), so something fixed per process or
// per thread decides it. Each round pins the launching thread to each CPU in turn (rotating
// order), and measures a replay there (11 timed rounds of 100 launches then a synchronize,
// after one untimed; the median µs a launch). Prints each CPU's median over rounds and the
// median of its per-round ratio to the round's mean over CPUs.
// H100 (16 vCPUs, one NUMA node as the VM shows it), session 12, three runs of 61 rounds: the
// fastest CPU at 1.69–1.85 µs a launch, the slowest at 2.24–2.39; per-CPU ratios 0.87–1.14×,
// with other CPUs slow in each run.
// Build: nvcc -O2 -std=c++17 -arch=sm_90 -o cpuslot cpuslot.cu
// Run: ./cpuslot [rounds=21]
#include "chain.h"

#include <sched.h>

static void pin(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  if (sched_setaffinity(0, sizeof set, &set) != 0) {
    std::perror("sched_setaffinity");
    std::exit(1);
  }
}

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 21;
  cpu_set_t all;
  CPU_ZERO(&all);
  if (sched_getaffinity(0, sizeof all, &all) != 0) return 1;
  std::vector<int> cpus;
  for (int c = 0; c < CPU_SETSIZE; c++)
    if (CPU_ISSET(c, &all)) cpus.push_back(c);
  const int n = static_cast<int>(cpus.size());
  CK(cudaSetDevice(0));
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaGraphExec_t x = chain(1);
  replay(x, s);
  std::vector<std::vector<double>> val(n), ratio(n);
  for (int r = 0; r < rounds; r++) {
    std::vector<double> t(n);
    double sum = 0;
    for (int k = 0; k < n; k++) {
      const int i = (k + r) % n;
      pin(cpus[i]);
      t[i] = replay(x, s);
      sum += t[i];
    }
    for (int i = 0; i < n; i++) {
      val[i].push_back(t[i]);
      ratio[i].push_back(t[i] / (sum / n));
    }
  }
  for (int i = 0; i < n; i++) {
    std::vector<double> q = ratio[i];
    std::sort(q.begin(), q.end());
    std::printf("cpu %2d: %.3f us/launch, ratio to the round's mean %.3f (%.3f-%.3f)\n", cpus[i],
                median(val[i]), median(ratio[i]), q.front(), q.back());
  }
  return 0;
}
