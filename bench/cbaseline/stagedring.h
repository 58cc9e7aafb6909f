// stagedring.h: copies of pageable host memory staged by hand through a ring of pinned slots,
// the C++ pass of suite.cu's h2d_staged and d2h_staged rows. It does what gpuactor's streams/
// staging does, with nothing in between: T threads copy chunks between the pageable buffer and
// the slots, and every chunk's DMA goes to one stream (the suite's), so that the only difference
// left between the two rows is the library. A pinned copy's bandwidth bounds both; on a host
// whose memory cannot feed the link three times over (the slice read, the slot written, the
// slot read by the DMA) this pass shows how near staging gets there.
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

// CHECK (suite.cu's) ends the process on a failed CUDA call; include this after it.
#ifndef CHECK
#error "stagedring.h needs CHECK: include it after suite.cu defines it"
#endif

// The staged rows' thread counts follow gpuactor's rule (streams/staging.go): uploads take
// enough threads to fill slots at 64 GB/s at one thread's memcpy rate, since more copies than
// that beside the DMA's reads of host memory slow the link, and fewer leave it waiting on a
// host with slow memory (an H100 host whose one thread copied 7.8 GB/s staged 32-39 GB/s with
// 8 threads and 37-43 with 10); downloads take every core but two. Both within [2, 16].
static int clamp_threads(int n, int cores) { return std::max(2, std::min({n, 16, cores - 2})); }

// memcpy_rate is one thread's memcpy rate in bytes a second, measured once per process as
// gpuactor measures it: 64 MiB it has not read before, copied 4 MiB at a time into one buffer.
static double memcpy_rate() {
  static const double rate = [] {
    const size_t n = size_t(64) << 20, piece = size_t(4) << 20;
    // A byte a page faults the pages in without bringing the rest into cache.
    uint8_t* src = static_cast<uint8_t*>(std::malloc(n));
    uint8_t* dst = static_cast<uint8_t*>(std::malloc(piece));
    if (!src || !dst) std::exit(1);
    for (size_t i = 0; i < n; i += 4096) src[i] = 1;
    for (size_t i = 0; i < piece; i += 4096) dst[i] = 1;
    auto t0 = std::chrono::steady_clock::now();
    for (size_t off = 0; off < n; off += piece) {
      std::memcpy(dst, src + off, piece);
      // dst is freed unread: without this the compiler may drop the copies.
      asm volatile("" : : "r"(dst) : "memory");
    }
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::free(src);
    std::free(dst);
    return static_cast<double>(n) / std::max(s, 1e-9);
  }();
  return rate;
}

static int staging_upload_threads(int cores) {
  return clamp_threads(static_cast<int>(std::ceil(64e9 / memcpy_rate())), cores);
}
static int staging_download_threads(int cores) { return clamp_threads(16, cores); }

// ThreadPool runs one function on each of its threads at once and waits for all of them, so
// that a copy's threads are started once per pass, not once per copy.
class ThreadPool {
 public:
  ThreadPool(int n, int device) {
    for (int w = 0; w < n; ++w)
      threads_.emplace_back([this, w, device] {
        CHECK(cudaSetDevice(device));  // the current device is per thread
        unsigned seen = 0;
        for (;;) {
          std::function<void(int)> f;
          {
            std::unique_lock<std::mutex> l(mu_);
            cv_.wait(l, [&] { return quit_ || gen_ != seen; });
            if (quit_) return;
            seen = gen_;
            f = job_;
          }
          f(w);
          std::lock_guard<std::mutex> l(mu_);
          if (--running_ == 0) done_.notify_all();
        }
      });
  }
  ~ThreadPool() {
    {
      std::lock_guard<std::mutex> l(mu_);
      quit_ = true;
    }
    cv_.notify_all();
    for (auto& t : threads_) t.join();
  }
  int size() const { return static_cast<int>(threads_.size()); }
  // run calls f(w) on thread w of each, and returns when every call has.
  void run(std::function<void(int)> f) {
    std::unique_lock<std::mutex> l(mu_);
    job_ = std::move(f);
    running_ = size();
    ++gen_;
    cv_.notify_all();
    done_.wait(l, [&] { return running_ == 0; });
  }

 private:
  std::vector<std::thread> threads_;
  std::mutex mu_;
  std::condition_variable cv_, done_;
  std::function<void(int)> job_;
  unsigned gen_ = 0;
  int running_ = 0;
  bool quit_ = false;
};

// StagedRing is the slots (slot bytes each, one event each) and the threads of staged copies
// on one stream. Chunk k of a copy takes slot k % slots once chunk k - slots is done with it.
class StagedRing {
 public:
  StagedRing(int threads, int slots, size_t slot, int device, cudaStream_t s)
      : pool_(threads, device), s_(s), slot_(slot), mem_(slots), done_(slots) {
    for (int i = 0; i < slots; ++i) {
      CHECK(cudaHostAlloc(reinterpret_cast<void**>(&mem_[i]), slot, cudaHostAllocDefault));
      std::memset(mem_[i], 0, slot);  // fault the pages in before any timing
      CHECK(cudaEventCreateWithFlags(&done_[i], cudaEventDisableTiming));
    }
  }
  ~StagedRing() {
    for (size_t i = 0; i < mem_.size(); ++i) {
      CHECK(cudaEventDestroy(done_[i]));
      CHECK(cudaFreeHost(mem_[i]));
    }
  }
  int threads() const { return pool_.size(); }

  // chunk is the chunk size of an n-byte copy, as gpuactor's stagingChunk picks it: about n/8,
  // within [1 MiB, slot], evened over the chunks and rounded up to 4 KiB.
  size_t chunk(size_t n) const {
    size_t target = std::min(std::max<size_t>(n / 8, size_t(1) << 20), slot_);
    if (n <= target) return n;
    size_t chunks = (n + target - 1) / target;
    size_t c = (n + chunks - 1) / chunks;
    return std::min((c + 4095) & ~size_t(4095), slot_);
  }

  // upload copies host[0, n) to dev and returns once the stream has finished it: the threads
  // take chunks in order, copy each into its slot once the slot's previous chunk has left it,
  // and queue its DMA.
  void upload(uint8_t* dev, const uint8_t* host, size_t n) {
    const size_t c = chunk(n), chunks = (n + c - 1) / c, S = mem_.size();
    std::atomic<size_t> next{0};
    std::vector<std::atomic<int>> queued(chunks);
    for (auto& q : queued) q.store(0);
    pool_.run([&](int) {
      for (size_t k; (k = next++) < chunks;) {
        size_t i = k % S, off = k * c, len = std::min(c, n - off);
        if (k >= S) {
          while (!queued[k - S].load(std::memory_order_acquire)) std::this_thread::yield();
          CHECK(cudaEventSynchronize(done_[i]));
        }
        std::memcpy(mem_[i], host + off, len);
        {
          std::lock_guard<std::mutex> g(enq_);
          CHECK(cudaMemcpyAsync(dev + off, mem_[i], len, cudaMemcpyHostToDevice, s_));
          CHECK(cudaEventRecord(done_[i], s_));
        }
        queued[k].store(1, std::memory_order_release);
      }
    });
    CHECK(cudaStreamSynchronize(s_));
  }

  // download copies dev[0, n) into host: the first chunks are queued one a slot, then the
  // threads take chunks in order, wait for each to land in its slot, copy it out and at once
  // queue the chunk that takes the slot next.
  void download(uint8_t* host, const uint8_t* dev, size_t n) {
    const size_t c = chunk(n), chunks = (n + c - 1) / c, S = mem_.size();
    std::vector<std::atomic<int>> queued(chunks);
    for (auto& q : queued) q.store(0);
    auto enqueue = [&](size_t k) {
      size_t i = k % S, off = k * c, len = std::min(c, n - off);
      std::lock_guard<std::mutex> g(enq_);
      CHECK(cudaMemcpyAsync(mem_[i], dev + off, len, cudaMemcpyDeviceToHost, s_));
      CHECK(cudaEventRecord(done_[i], s_));
      queued[k].store(1, std::memory_order_release);
    };
    for (size_t k = 0; k < std::min(chunks, S); ++k) enqueue(k);
    std::atomic<size_t> next{0};
    pool_.run([&](int) {
      for (size_t k; (k = next++) < chunks;) {
        size_t i = k % S, off = k * c, len = std::min(c, n - off);
        while (!queued[k].load(std::memory_order_acquire)) std::this_thread::yield();
        CHECK(cudaEventSynchronize(done_[i]));
        std::memcpy(host + off, mem_[i], len);
        if (k + S < chunks) enqueue(k + S);
      }
    });
  }

 private:
  ThreadPool pool_;
  cudaStream_t s_;
  size_t slot_;
  std::vector<uint8_t*> mem_;
  std::vector<cudaEvent_t> done_;
  std::mutex enq_;
};
