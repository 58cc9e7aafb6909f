// copyvariants: which host copy and which pipeline shape make a staged upload fastest on this
// host. Each figure is a 256 MiB upload of pageable memory through pinned slots, GB/s, the
// median of 5 runs, and its ratio to a pinned cudaMemcpyAsync measured just before it.
//
//   - copy: how a filler copies a chunk into its slot: glibc memcpy, rep movsb, AVX2 with
//     ordinary stores, AVX2 with non-temporal stores (then sfence);
//   - shape: "streams" (each of T threads has its own stream and two slots, as staging.h
//     does) or "ring" (T fillers share a ring of T+8 slots and one stream, as gpuactor's
//     staging does: a chunk's slot is free once the chunk S before it is done);
//   - slot: the chunk size; spare: the ring's slots beyond its T fillers (8 in the grid).
//
// It also prints each copy's host-only rate on T threads (no DMA beside it).
// Build: nvcc -O2 -std=c++17 -arch=sm_90 -Xcompiler -mavx2 -o copyvariants copyvariants.cu -lpthread
#include "staging.h"

#include <immintrin.h>
#include <mutex>

static void copyMovsb(char* d, const char* s, size_t n) {
  asm volatile("rep movsb" : "+D"(d), "+S"(s), "+c"(n) : : "memory");
}

template <bool nt> static void copyAVX(char* d, const char* s, size_t n) {
  size_t i = 0;
  for (; i < n && ((uintptr_t)(d + i) & 31); i++) d[i] = s[i];
  for (; i + 128 <= n; i += 128) {
    __m256i a = _mm256_loadu_si256((const __m256i*)(s + i));
    __m256i b = _mm256_loadu_si256((const __m256i*)(s + i + 32));
    __m256i c = _mm256_loadu_si256((const __m256i*)(s + i + 64));
    __m256i e = _mm256_loadu_si256((const __m256i*)(s + i + 96));
    if (nt) {
      _mm256_stream_si256((__m256i*)(d + i), a);
      _mm256_stream_si256((__m256i*)(d + i + 32), b);
      _mm256_stream_si256((__m256i*)(d + i + 64), c);
      _mm256_stream_si256((__m256i*)(d + i + 96), e);
    } else {
      _mm256_store_si256((__m256i*)(d + i), a);
      _mm256_store_si256((__m256i*)(d + i + 32), b);
      _mm256_store_si256((__m256i*)(d + i + 64), c);
      _mm256_store_si256((__m256i*)(d + i + 96), e);
    }
  }
  memcpy(d + i, s + i, n - i);
  if (nt) _mm_sfence();
}

struct Variant {
  const char* name;
  copyFn f;
};
static const Variant kCopies[] = {
    {"memcpy", copyMemcpy}, {"movsb", copyMovsb}, {"avx", copyAVX<false>}, {"avx-nt", copyAVX<true>}};

// The ring's pinned slots: up to 8 MiB, and enough for 16 fillers and 24 spare.
static const size_t kMaxSlot = 8 << 20;
static const int kMaxSlots = 40;

// The ring shape's slots, one stream and an event per slot.
struct Ring {
  cudaStream_t s;
  char* slot[kMaxSlots];
  cudaEvent_t done[kMaxSlots];
};

// stagedRing: T fillers claim chunks in order; chunk k uses slot k%S once chunk k-S is done
// with it, and every DMA goes to one stream.
static void stagedRing(Ring& r, char* host, char* dev, size_t n, int T, size_t slot, copyFn cp, int spare) {
  size_t chunks = (n + slot - 1) / slot;
  int S = std::min(T + spare, kMaxSlots);
  std::atomic<size_t> next{0};
  std::vector<std::atomic<int>> queued(chunks);
  for (auto& q : queued) q = 0;
  std::mutex mu;
  std::vector<std::thread> th;
  for (int w = 0; w < T; w++) {
    th.emplace_back([&] {
      for (;;) {
        size_t k = next++;
        if (k >= chunks) return;
        int i = k % S;
        if (k >= (size_t)S) {
          while (!queued[k - S].load(std::memory_order_acquire)) std::this_thread::yield();
          CK(cudaEventSynchronize(r.done[i]));
        }
        size_t off = k * slot, len = std::min(slot, n - off);
        cp(r.slot[i], host + off, len);
        {
          std::lock_guard<std::mutex> g(mu);
          CK(cudaMemcpyAsync(dev + off, r.slot[i], len, cudaMemcpyHostToDevice, r.s));
          CK(cudaEventRecord(r.done[i], r.s));
        }
        queued[k].store(1, std::memory_order_release);
      }
    });
  }
  for (auto& t : th) t.join();
  CK(cudaStreamSynchronize(r.s));
}

int main() {
  CK(cudaSetDevice(0));
  const size_t n = 256 << 20;
  char *dev, *pinned;
  CK(cudaMalloc(&dev, n));
  CK(cudaHostAlloc((void**)&pinned, n, 0));
  char* host = (char*)aligned_alloc(4096, n);
  for (size_t i = 0; i < n; i++) host[i] = (char)(i * 131 + 7);
  memset(pinned, 1, n);
  Ring r;
  CK(cudaStreamCreateWithFlags(&r.s, cudaStreamNonBlocking));
  for (int i = 0; i < kMaxSlots; i++) {
    CK(cudaHostAlloc((void**)&r.slot[i], kMaxSlot, 0));
    memset(r.slot[i], 0, kMaxSlot);
    CK(cudaEventCreateWithFlags(&r.done[i], cudaEventDisableTiming));
  }
  // The streams shape's workers: 16, each with two slots of the largest size.
  std::vector<Worker> ws = makeWorkers(16, kMaxSlot);
  auto pinnedGBs = [&] { return medianGBs(n, [&] { copyOnce(true, pinned, dev, n, r.s); }); };
  // Host-only rates: T threads copying 4 MiB chunks of host into slots, no DMA.
  for (const Variant& v : kCopies) {
    for (int T : {1, 8}) {
      double g = medianGBs(n, [&] {
        std::atomic<size_t> next{0};
        std::vector<std::thread> th;
        for (int w = 0; w < T; w++)
          th.emplace_back([&, w] {
            for (size_t k; (k = next++) < n / (4 << 20);) v.f(r.slot[w], host + k * (4 << 20), 4 << 20);
          });
        for (auto& t : th) t.join();
      });
      printf("host %s threads=%d %.1f GB/s\n", v.name, T, g);
    }
  }
  for (size_t slot : {(size_t)2 << 20, (size_t)4 << 20, (size_t)8 << 20}) {
    for (int T : {6, 8, 12}) {
      for (const Variant& v : kCopies) {
        for (int ring = 0; ring < 2; ring++) {
          double p = pinnedGBs();
          double g = medianGBs(n, [&] {
            if (ring) stagedRing(r, host, dev, n, T, slot, v.f, 8);
            else staged(true, host, dev, n, ws, T, slot, v.f);
          });
          printf("h2d slot=%zuM threads=%d copy=%s shape=%s %.1f GB/s (%.2fx pinned %.1f)\n", slot >> 20, T,
                 v.name, ring ? "ring" : "streams", g, g / p, p);
        }
      }
    }
  }
  // The ring's spare slots beyond its fillers: how many chunks may wait for the link.
  for (size_t slot : {(size_t)1 << 20, (size_t)2 << 20}) {
    for (int spare : {2, 8, 24}) {
      double p = pinnedGBs();
      double g = medianGBs(n, [&] { stagedRing(r, host, dev, n, 8, slot, copyMemcpy, spare); });
      printf("h2d slot=%zuM threads=8 copy=memcpy shape=ring spare=%d %.1f GB/s (%.2fx pinned %.1f)\n", slot >> 20, spare,
             g, g / p, p);
    }
  }
  // The last upload's bytes, checked, so that no variant copies wrongly unseen.
  std::vector<char> back(n);
  CK(cudaMemcpy(back.data(), dev, n, cudaMemcpyDeviceToHost));
  if (memcmp(back.data(), host, n) != 0) {
    printf("FAIL: the device holds other bytes than the source\n");
    return 1;
  }
  printf("check ok\n");
  return 0;
}
