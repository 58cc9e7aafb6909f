// regpipe: can pinning a pageable buffer in place, a chunk at a time on several threads, with
// each chunk's DMA issued as soon as it is pinned, move a large pageable buffer faster than
// staging it through pinned slots? stagecost.cu measured cudaHostRegister of a whole buffer on
// one thread (16-33 GB/s with the unregister, 13-21 with the copy): too slow in one piece. Here
// the pinning is split and overlapped with the DMA.
//
//   - pinned: cudaMemcpyAsync from/to cudaHostAlloc memory (the link's speed);
//   - staged T: staging.h's copies through two 4 MiB pinned slots on each of T threads;
//   - regonly C T: cudaHostRegister + cudaHostUnregister of C-byte chunks on T threads, no DMA;
//   - regpipe C T: T threads; each pins its chunks (c = w, w+T, ...), issues the chunk's DMA on
//     its own stream, then waits for its previous chunk's DMA and unpins it.
//
// Each on a buffer advised MADV_HUGEPAGE and on one advised MADV_NOHUGEPAGE (the Go heap gets
// huge pages only where the system's THP setting is "always").
// Prints one line per figure: GB/s, the median of 5 runs.
// Build: nvcc -O2 -std=c++17 -o regpipe regpipe.cu -lpthread; run: regpipe [MiB, default 256]
//
// What it showed on an H100 host (2026-11-21, session 7 probes/regpipe-256-h100-a.txt):
// register + unregister ran at 11-16 GB/s with 4k pages and 11-24 with huge pages, no faster
// on 4 or 8 threads than on one, so the pipelined copies reached
// 0.14-0.36x of pinned bandwidth in both directions, against 0.82x for staging on 8 threads.
#include <sys/mman.h>

#include "staging.h"

static const int kMaxT = 16;

static void regonly(char* host, size_t n, size_t C, int T) {
  size_t chunks = (n + C - 1) / C;
  std::vector<std::thread> th;
  for (int w = 0; w < T; w++) {
    th.emplace_back([&, w] {
      for (size_t c = w; c < chunks; c += T) {
        size_t off = c * C, len = std::min(C, n - off);
        CK(cudaHostRegister(host + off, len, cudaHostRegisterDefault));
        CK(cudaHostUnregister(host + off));
      }
    });
  }
  for (auto& t : th) t.join();
}

static void regpipe(bool up, char* host, char* dev, size_t n, std::vector<Worker>& ws, size_t C, int T) {
  size_t chunks = (n + C - 1) / C;
  std::vector<std::thread> th;
  for (int w = 0; w < T; w++) {
    th.emplace_back([&, w] {
      Worker& k = ws[w];
      int b = 0;
      char* prev = nullptr;
      for (size_t c = w; c < chunks; c += T, b ^= 1) {
        size_t off = c * C, len = std::min(C, n - off);
        CK(cudaHostRegister(host + off, len, cudaHostRegisterDefault));
        if (up) CK(cudaMemcpyAsync(dev + off, host + off, len, cudaMemcpyHostToDevice, k.s));
        else CK(cudaMemcpyAsync(host + off, dev + off, len, cudaMemcpyDeviceToHost, k.s));
        CK(cudaEventRecord(k.done[b], k.s));
        if (prev) {
          CK(cudaEventSynchronize(k.done[b ^ 1]));
          CK(cudaHostUnregister(prev));
        }
        prev = host + off;
      }
      CK(cudaStreamSynchronize(k.s));
      if (prev) CK(cudaHostUnregister(prev));
    });
  }
  for (auto& t : th) t.join();
}

static char* hostBuffer(size_t n, bool huge) {
  size_t align = 2 << 20;
  char* raw = (char*)mmap(nullptr, n + align, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) { perror("mmap"); exit(1); }
  char* p = (char*)(((uintptr_t)raw + align - 1) & ~(uintptr_t)(align - 1));
  madvise(p, n, huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
  memset(p, 1, n);
  return p;
}

int main(int argc, char** argv) {
  size_t n = (argc > 1 ? atol(argv[1]) : 256) << 20;
  CK(cudaSetDevice(0));
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  char *dev, *pinned;
  CK(cudaMalloc(&dev, n));
  CK(cudaHostAlloc((void**)&pinned, n, 0));
  memset(pinned, 1, n);
  std::vector<Worker> ws = makeWorkers(kMaxT);
  size_t mb = n >> 20;
  for (int up = 1; up >= 0; up--) {
    const char* dir = up ? "h2d" : "d2h";
    double p = medianGBs(n, [&] { copyOnce(up, pinned, dev, n, s); });
    printf("%s %zuM pinned %.1f GB/s\n", dir, mb, p);
    for (bool huge : {false, true}) {
      const char* pg = huge ? "thp" : "4k";
      char* host = hostBuffer(n, huge);
      for (int T : {6, 8}) {
        double g = medianGBs(n, [&] { staged(up, host, dev, n, ws, T); });
        printf("%s %zuM %s staged T=%d %.1f GB/s (%.2fx pinned)\n", dir, mb, pg, T, g, g / p);
      }
      if (up) {
        for (size_t C : {(size_t)4 << 20, (size_t)16 << 20, (size_t)64 << 20})
          for (int T : {1, 4, 8}) {
            double g = medianGBs(n, [&] { regonly(host, n, C, T); });
            printf("%s %zuM %s regonly C=%zuM T=%d %.1f GB/s\n", dir, mb, pg, C >> 20, T, g);
          }
      }
      for (size_t C : {(size_t)4 << 20, (size_t)8 << 20, (size_t)16 << 20, (size_t)32 << 20})
        for (int T : {2, 4, 8}) {
          double g = medianGBs(n, [&] { regpipe(up, host, dev, n, ws, C, T); });
          printf("%s %zuM %s regpipe C=%zuM T=%d %.1f GB/s (%.2fx pinned)\n", dir, mb, pg, C >> 20, T, g, g / p);
        }
      // The copy must have moved the bytes: a pinned chunk is read in place.
      if (up) {
        CK(cudaMemset(dev, 0, n));
        for (size_t i = 0; i < n; i += 4096) host[i] = (char)(i >> 12);
        regpipe(true, host, dev, n, ws, 16 << 20, 4);
        std::vector<char> back(n);
        CK(cudaMemcpy(back.data(), dev, n, cudaMemcpyDeviceToHost));
        if (memcmp(back.data(), host, n) != 0) printf("%s %s regpipe: MISMATCH\n", dir, pg);
      }
    }
  }
  return 0;
}
