// stagecost: how fast pageable host memory can reach the device and come back when the host
// copies are done by hand, and what the alternatives cost. It is the ceiling for gpuactor's
// staged Go-slice copies on this host, measured without Go.
//
//   - pinned: cudaMemcpyAsync from/to cudaHostAlloc memory (the link's speed);
//   - pageable: cudaMemcpyAsync from/to malloc memory (the runtime's own staging);
//   - staged T: T threads, each with its own stream and two 4 MiB pinned slots, memcpy each
//     chunk of the pageable buffer through a slot (upload: memcpy then DMA; download: DMA then
//     memcpy), double-buffered;
//   - register: cudaHostRegister + cudaHostUnregister of a touched malloc buffer, and a copy
//     through it (register, DMA, unregister).
//
// Prints one line per figure: GB/s, the median of 5 runs.
// Build: nvcc -O2 -std=c++17 -o stagecost stagecost.cu -lpthread
#include "staging.h"

int main() {
  CK(cudaSetDevice(0));
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  const size_t sizes[] = {1 << 20, 16 << 20, 256 << 20};
  const size_t maxN = 256 << 20;
  char *dev, *pinned;
  CK(cudaMalloc(&dev, maxN));
  CK(cudaHostAlloc((void**)&pinned, maxN, 0));
  char* host = (char*)aligned_alloc(4096, maxN);
  memset(host, 1, maxN);
  memset(pinned, 1, maxN);
  const int kMaxT = 16;
  std::vector<Worker> ws = makeWorkers(kMaxT);
  // memcpy rate of one thread and of T threads, host to host (the staging's other half).
  {
    char* dst = (char*)aligned_alloc(4096, maxN);
    memset(dst, 2, maxN);
    for (int T : {1, 4, 8, 12, 14, 16}) {
      double g = medianGBs(maxN, [&] {
        std::vector<std::thread> th;
        size_t per = maxN / T;
        for (int w = 0; w < T; w++) th.emplace_back([&, w] { memcpy(dst + w * per, host + w * per, per); });
        for (auto& t : th) t.join();
      });
      printf("memcpy host->host 256M threads=%d %.1f GB/s\n", T, g);
    }
    free(dst);
  }
  for (size_t n : sizes) {
    const char* sz = n == (1 << 20) ? "1M" : n == (16 << 20) ? "16M" : "256M";
    for (int up = 1; up >= 0; up--) {
      const char* dir = up ? "h2d" : "d2h";
      double p = medianGBs(n, [&] { copyOnce(up, pinned, dev, n, s); });
      double pg = medianGBs(n, [&] { copyOnce(up, host, dev, n, s); });
      printf("%s %s pinned %.1f GB/s\n", dir, sz, p);
      printf("%s %s pageable %.1f GB/s\n", dir, sz, pg);
      for (int T : {1, 2, 4, 8, 12, 14, 16}) {
        double g = medianGBs(n, [&] { staged(up, host, dev, n, ws, T); });
        printf("%s %s staged threads=%d %.1f GB/s (%.2fx pinned)\n", dir, sz, T, g, g / p);
      }
      double reg = medianGBs(n, [&] {
        CK(cudaHostRegister(host, n, cudaHostRegisterDefault));
        CK(cudaHostUnregister(host));
      });
      double regCopy = medianGBs(n, [&] {
        CK(cudaHostRegister(host, n, cudaHostRegisterDefault));
        copyOnce(up, host, dev, n, s);
        CK(cudaHostUnregister(host));
      });
      printf("%s %s register+unregister %.1f GB/s; register+copy+unregister %.1f GB/s\n", dir, sz, reg, regCopy);
    }
  }
  return 0;
}
