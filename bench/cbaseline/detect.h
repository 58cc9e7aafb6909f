// detect.h: how soon a finished launch is noticed, by the ways gpuactor could notice it:
// probes beside launch_roundtrip (one empty launch awaited at a time on the suite's stream;
// p50 and p99 over every iteration), differing only in the wait:
//
//   roundtrip_query_loop: an event recorded after the launch, then cudaEventQuery in a loop
//     on the launching thread until it is done: gpuactor's tracker without the actor;
//   roundtrip_event_sync: the same event waited for with cudaEventSynchronize on the
//     launching thread;
//   roundtrip_event_sync_other: the launch and the record on this thread, the wait in
//     cudaEventSynchronize on a second thread, which then releases this one through a flag
//     it spins on: a waiter that waits on its own thread while another thread owns the
//     stream (docs/design/roundtrip.md).
//
// Included after CHECK, clk, seconds_since, median, percentile and emit_result, which it uses.
#pragma once
#include <atomic>
#include <thread>
#include <vector>

// detect_row times once() per iteration, after a warm-up, and emits name's p50 and p99.
template <class F>
static void detect_row(const Ctx& c, const char* name, F once) {
  const int kIters = 2000;
  for (int i = 0; i < 200; ++i) once();
  std::vector<double> all;
  all.reserve(static_cast<size_t>(kIters) * c.repeats);
  for (int r = 0; r < c.repeats; ++r) {
    for (int i = 0; i < kIters; ++i) {
      auto t0 = clk::now();
      once();
      all.push_back(seconds_since(t0) * 1e6);
    }
  }
  cudaError_t e = cudaGetLastError();
  emit_result(name, -1, "us", median(all), percentile(all, 0.99), c.repeats, e == cudaSuccess,
              e == cudaSuccess ? "" : cudaGetErrorString(e));
}

static void roundtrip_query_loop(const Ctx& c) {
  cudaEvent_t ev;
  CHECK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
  long long queries = 0, trips = 0;
  detect_row(c, "roundtrip_query_loop", [&] {
    empty<<<1, 1, 0, c.s>>>();
    CHECK(cudaEventRecord(ev, c.s));
    cudaError_t e;
    while ((e = cudaEventQuery(ev)) == cudaErrorNotReady) ++queries;
    CHECK(e);
    ++trips;
  });
  std::fprintf(stderr, "roundtrip_query_loop: %.1f queries not ready per round trip\n",
               static_cast<double>(queries) / static_cast<double>(trips));
  CHECK(cudaEventDestroy(ev));
}

static void roundtrip_event_sync(const Ctx& c) {
  cudaEvent_t ev;
  CHECK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
  detect_row(c, "roundtrip_event_sync", [&] {
    empty<<<1, 1, 0, c.s>>>();
    CHECK(cudaEventRecord(ev, c.s));
    CHECK(cudaEventSynchronize(ev));
  });
  CHECK(cudaEventDestroy(ev));
}

static void roundtrip_event_sync_other(const Ctx& c) {
  cudaEvent_t ev;
  CHECK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
  std::atomic<long> go{0}, done{0};
  std::atomic<bool> stop{false};
  std::thread waiter([&] {
    CHECK(cudaSetDevice(c.device));  // the current device is per thread
    long seen = 0;
    for (;;) {
      long g;
      while ((g = go.load(std::memory_order_acquire)) == seen) {
        if (stop.load(std::memory_order_relaxed)) return;
      }
      seen = g;
      CHECK(cudaEventSynchronize(ev));  // ev is not recorded again until done says so
      done.store(g, std::memory_order_release);
    }
  });
  long n = 0;
  detect_row(c, "roundtrip_event_sync_other", [&] {
    empty<<<1, 1, 0, c.s>>>();
    CHECK(cudaEventRecord(ev, c.s));
    go.store(++n, std::memory_order_release);
    while (done.load(std::memory_order_acquire) != n) {
    }
  });
  stop.store(true, std::memory_order_relaxed);
  waiter.join();
  CHECK(cudaEventDestroy(ev));
}
