// suite.cu: the C++ baseline for gpuactor's benchmark runner (go run ./bench).
//
// Every scenario here calls libcudart directly from one host thread, with nothing in between:
// it is the floor that gpuactor's figures are divided by. The staged rows are an exception:
// like gpuactor's, they copy host memory on several threads (stagedring.h); launch_threads_N
// is another, N threads launching at once (threads.h). The runner builds
// and runs it as
//
//   nvcc -O2 -std=c++17 -arch=sm_90 -o suite bench/cbaseline/suite.cu
//   ./suite [--scenarios a,b] [--sizes 4096,65536] [--repeat 21] [--device 0] [--staging-threads N]
//
// Output on stdout is JSON lines only (a header, then one "result" per scenario and size, plus
// "error" lines for failed checks); progress goes to stderr. README.md beside this file has the
// protocol. Exit status: 0 when every check passed, 1 when a check failed or a CUDA call errored.
//
// Built with -DSUITE_LIB -shared -Xcompiler -fPIC it is a library instead, which the runner
// loads into its own process (go run ./bench -inprocess): suite_run takes the same flags and
// returns the same JSON lines, so that each gpuactor row can run between two passes of its C++
// row moments apart, in one process on one context, rather than seconds apart in two.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "emptychain.h"

// A CUDA call that fails outside a measured check means the run is broken: stop at once.
#define CHECK(call)                                                                   \
  do {                                                                                \
    cudaError_t e_ = (call);                                                          \
    if (e_ != cudaSuccess) {                                                          \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #call,               \
                   cudaGetErrorString(e_));                                           \
      std::exit(1);                                                                   \
    }                                                                                 \
  } while (0)

// Inside timed loops whose call is itself what is measured (stream_query, event_record,
// malloc_free) a failure is recorded instead, so the scenario reports checked:false with the
// error text rather than killing the whole suite. The compare costs the same as CHECK's.
#define TALLY(call, first)                                                            \
  do {                                                                                \
    cudaError_t e_ = (call);                                                          \
    if (e_ != cudaSuccess && (first) == cudaSuccess) (first) = e_;                    \
  } while (0)

#include "stagedring.h"  // after CHECK, which it uses

__global__ void empty_arg(int) {}

using clk = std::chrono::steady_clock;

static double seconds_since(clk::time_point t0) {
  return std::chrono::duration<double>(clk::now() - t0).count();
}

// ---------------------------------------------------------------------------------------------
// Output

static const char* kImpl = "cpp";
static bool g_failed = false;  // any failed check: exit 1 at the end

#ifdef SUITE_LIB
static std::string g_out;  // the JSON lines of the current suite_run call
#endif

// emit_line writes one JSON line: to stdout, or in the library to what suite_run returns.
static void emit_line(const std::string& line) {
#ifdef SUITE_LIB
  g_out += line;
  g_out += '\n';
#else
  std::printf("%s\n", line.c_str());
  std::fflush(stdout);
#endif
}

// format is snprintf into a std::string.
template <class... A> static std::string format(const char* fmt, A... a) {
  int n = std::snprintf(nullptr, 0, fmt, a...);
  std::string out(static_cast<size_t>(n) + 1, '\0');
  std::snprintf(&out[0], out.size(), fmt, a...);
  out.resize(static_cast<size_t>(n));
  return out;
}

static std::string json_escape(const char* s) {
  std::string out;
  for (; *s; ++s) {
    unsigned char c = static_cast<unsigned char>(*s);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

// JSON has no NaN or infinity: print those as null.
static std::string json_number(double v) {
  if (!std::isfinite(v)) return "null";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

// size < 0 means "no size" (printed as null); p99 NaN means null.
static void emit_result(const char* scenario, long long size, const char* unit, double value,
                        double p99, int repeats, bool checked, const std::string& why) {
  std::string sz = size < 0 ? std::string("null") : std::to_string(size);
  emit_line(format(
      "{\"kind\":\"result\",\"impl\":\"%s\",\"scenario\":\"%s\",\"size\":%s,\"unit\":\"%s\","
      "\"value\":%s,\"p99\":%s,\"repeats\":%d,\"checked\":%s}",
      kImpl, scenario, sz.c_str(), unit, json_number(value).c_str(), json_number(p99).c_str(),
      repeats, checked ? "true" : "false"));
  if (!checked) {
    std::string msg = why.empty() ? std::string("check failed") : why;
    if (size >= 0) msg += " (size " + std::to_string(size) + ")";
    emit_line(format("{\"kind\":\"error\",\"impl\":\"%s\",\"scenario\":\"%s\",\"message\":\"%s\"}",
                     kImpl, scenario, json_escape(msg.c_str()).c_str()));
    g_failed = true;
  }
  std::fprintf(stderr, "%-16s %12s  %s %s%s\n", scenario, size < 0 ? "-" : sz.c_str(),
               json_number(value).c_str(), unit, checked ? "" : "  CHECK FAILED");
}

// ---------------------------------------------------------------------------------------------
// Statistics

static double median(std::vector<double> v) {
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// Nearest-rank percentile: the smallest sample with at least q of the samples at or below it.
static double percentile(std::vector<double> v, double q) {
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  size_t rank = static_cast<size_t>(std::ceil(q * static_cast<double>(v.size())));
  if (rank < 1) rank = 1;
  return v[std::min(rank, v.size()) - 1];
}

// ---------------------------------------------------------------------------------------------
// Data

// Byte i of the input for a scenario: depends on the index (so a copy landing at the wrong offset
// or a short copy shows up), on `salt` (so data left over from an earlier scenario cannot pass),
// and is never zero (so an unwritten, zeroed destination cannot pass). The (i >> 8) term keeps
// the pattern from repeating every 256 bytes.
static inline uint8_t pattern_byte(size_t i, unsigned salt) {
  uint8_t v = static_cast<uint8_t>(i * 131u + 7u + salt * 29u + (i >> 8));
  return v ? v : 0x5a;
}

static void fill_pattern(uint8_t* p, size_t n, unsigned salt) {
  for (size_t i = 0; i < n; ++i) p[i] = pattern_byte(i, salt);
}

// Index of the first differing byte, or -1.
static long long first_mismatch(const uint8_t* a, const uint8_t* b, size_t n) {
  if (std::memcmp(a, b, n) == 0) return -1;
  for (size_t i = 0; i < n; ++i)
    if (a[i] != b[i]) return static_cast<long long>(i);
  return -1;
}

static std::string mismatch_msg(const char* what, long long at, const uint8_t* got,
                                const uint8_t* want) {
  char buf[160];
  std::snprintf(buf, sizeof buf, "%s: byte %lld is 0x%02x, want 0x%02x", what, at, got[at],
                want[at]);
  return buf;
}

// Copies per repeat for a sized transfer: about 256 MiB moved, at least 4 copies (so one slow
// copy does not decide a repeat), at most 1000 (so small sizes stay quick).
static int transfer_iters(size_t size) {
  size_t n = (256u << 20) / std::max<size_t>(size, 1);
  return static_cast<int>(std::min<size_t>(std::max<size_t>(n, 4), 1000));
}

// ---------------------------------------------------------------------------------------------
// Scenarios

struct Ctx {
  int device;
  int repeats;
  cudaStream_t s;  // non-blocking: never implicitly ordered after the legacy default stream
  std::vector<int> graph_sizes;  // the graph rows' chain lengths (--graph-sizes)
  int staging_up, staging_down;  // the staged rows' copying threads (--staging-threads)
};

static void launch_enqueue(const Ctx& c) {
  const int kLaunches = 20000;
  for (int i = 0; i < 1000; ++i) empty<<<1, 1, 0, c.s>>>();  // module load, queue warm
  CHECK(cudaGetLastError());
  CHECK(cudaStreamSynchronize(c.s));
  std::vector<double> per;
  bool ok = true;
  std::string why;
  for (int r = 0; r < c.repeats; ++r) {
    auto t0 = clk::now();
    for (int i = 0; i < kLaunches; ++i) empty<<<1, 1, 0, c.s>>>();
    CHECK(cudaStreamSynchronize(c.s));
    double dt = seconds_since(t0);
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess && ok) ok = false, why = cudaGetErrorString(e);
    per.push_back(dt / kLaunches * 1e6);
  }
  emit_result("launch_enqueue", -1, "us/launch", median(per), NAN, c.repeats, ok, why);
}

// launch_enqueue_8: launch_enqueue spread round-robin over 8 streams of their own, from one
// thread: the floor for gpuactor's stream_launch_8 (8 goroutines, a stream each, all through
// one device thread). Last in the canonical order: after work on several streams the GPU runs
// graphs slower (bench/results/FINDINGS.md).
static void launch_enqueue_8(const Ctx& c) {
  const int kLaunches = 20000, kStreams = 8;
  cudaStream_t ss[kStreams];
  for (auto& s : ss) CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  for (int i = 0; i < 1000; ++i) empty<<<1, 1, 0, ss[i % kStreams]>>>();
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  std::vector<double> per;
  bool ok = true;
  std::string why;
  for (int r = 0; r < c.repeats; ++r) {
    auto t0 = clk::now();
    for (int i = 0; i < kLaunches; ++i) empty<<<1, 1, 0, ss[i % kStreams]>>>();
    for (auto& s : ss) CHECK(cudaStreamSynchronize(s));
    double dt = seconds_since(t0);
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess && ok) ok = false, why = cudaGetErrorString(e);
    per.push_back(dt / kLaunches * 1e6);
  }
  for (auto& s : ss) CHECK(cudaStreamDestroy(s));
  emit_result("launch_enqueue_8", -1, "us/launch", median(per), NAN, c.repeats, ok, why);
}

static void launch_roundtrip(const Ctx& c) {
  const int kIters = 2000;
  for (int i = 0; i < 200; ++i) {
    empty<<<1, 1, 0, c.s>>>();
    CHECK(cudaStreamSynchronize(c.s));
  }
  CHECK(cudaGetLastError());
  // Each iteration is its own sample: the tail (p99) is the point of this figure.
  std::vector<double> all;
  all.reserve(static_cast<size_t>(kIters) * c.repeats);
  bool ok = true;
  std::string why;
  for (int r = 0; r < c.repeats; ++r) {
    for (int i = 0; i < kIters; ++i) {
      auto t0 = clk::now();
      empty<<<1, 1, 0, c.s>>>();
      CHECK(cudaStreamSynchronize(c.s));
      all.push_back(seconds_since(t0) * 1e6);
    }
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess && ok) ok = false, why = cudaGetErrorString(e);
  }
  emit_result("launch_roundtrip", -1, "us", median(all), percentile(all, 0.99), c.repeats, ok,
              why);
}

static void h2d_async_64B(const Ctx& c) {
  const int kCopies = 20000;
  const size_t kChunk = 64, kSlots = 1024;  // source: 1024 distinct 64-byte chunks
  uint8_t* src = nullptr;
  CHECK(cudaHostAlloc(reinterpret_cast<void**>(&src), kChunk * kSlots, cudaHostAllocDefault));
  fill_pattern(src, kChunk * kSlots, 1);
  void* dst = nullptr;
  CHECK(cudaMalloc(&dst, kChunk));
  uint8_t back[kChunk];

  for (int i = 0; i < 1000; ++i)
    CHECK(cudaMemcpyAsync(dst, src + (i % kSlots) * kChunk, kChunk, cudaMemcpyHostToDevice, c.s));
  CHECK(cudaStreamSynchronize(c.s));

  std::vector<double> per;
  bool ok = true;
  std::string why;
  for (int r = 0; r < c.repeats; ++r) {
    // Zero the destination first, so the check below sees this repeat's last copy.
    CHECK(cudaMemsetAsync(dst, 0, kChunk, c.s));
    CHECK(cudaStreamSynchronize(c.s));
    auto t0 = clk::now();
    // A different chunk each time: the device must end up with the last one, not just any.
    for (int i = 0; i < kCopies; ++i)
      CHECK(cudaMemcpyAsync(dst, src + (i % kSlots) * kChunk, kChunk, cudaMemcpyHostToDevice,
                            c.s));
    CHECK(cudaStreamSynchronize(c.s));
    per.push_back(seconds_since(t0) / kCopies * 1e6);

    const uint8_t* want = src + ((kCopies - 1) % kSlots) * kChunk;
    CHECK(cudaMemcpy(back, dst, kChunk, cudaMemcpyDeviceToHost));
    long long at = first_mismatch(back, want, kChunk);
    if (at >= 0 && ok) ok = false, why = mismatch_msg("device buffer", at, back, want);
  }
  emit_result("h2d_async_64B", static_cast<long long>(kChunk), "us/copy", median(per), NAN,
              c.repeats, ok, why);
  CHECK(cudaFree(dst));
  CHECK(cudaFreeHost(src));
}

// Host memory for the transfer scenarios: pinned (cudaHostAlloc) or pageable (malloc).
static uint8_t* host_alloc(size_t n, bool pinned) {
  void* p = nullptr;
  if (pinned) {
    CHECK(cudaHostAlloc(&p, n, cudaHostAllocDefault));
  } else {
    p = std::malloc(n);
    if (!p) {
      std::fprintf(stderr, "malloc(%zu) failed\n", n);
      std::exit(1);
    }
  }
  return static_cast<uint8_t*>(p);
}

static void host_free(uint8_t* p, bool pinned) {
  if (pinned) {
    CHECK(cudaFreeHost(p));
  } else {
    std::free(p);
  }
}

// How a transfer scenario's host memory is moved: pinned memory with back-to-back
// cudaMemcpyAsync on the stream; pageable memory with plain cudaMemcpy, which is what a program
// holding ordinary memory gets (the runtime stages it through its own pinned buffers); or
// pageable memory staged by hand through a StagedRing of 4 MiB pinned slots on the stream, 8
// beyond its threads as gpuactor's ring has, each copy waited for as gpuactor's staged rows
// wait for each copy's future.
enum class Way { pinned, pageable, staged };

// One sized host<->device transfer scenario.
static void transfer(const Ctx& c, const char* name, bool h2d, Way way, size_t size,
                     unsigned salt) {
  const int iters = transfer_iters(size);
  const cudaMemcpyKind kind = h2d ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost;
  const bool pinned = way == Way::pinned;

  // want: the bytes that must arrive. host: the host side of the timed copies.
  uint8_t* host = host_alloc(size, pinned);
  std::vector<uint8_t> want(size);
  fill_pattern(want.data(), size, salt);
  uint8_t* dev = nullptr;
  CHECK(cudaMalloc(reinterpret_cast<void**>(&dev), size));
  if (h2d) {
    std::memcpy(host, want.data(), size);  // also touches every pageable page before timing
    CHECK(cudaMemset(dev, 0, size));
  } else {
    CHECK(cudaMemcpy(dev, want.data(), size, cudaMemcpyHostToDevice));
    std::memset(host, 0, size);  // touches every page; an unwritten byte cannot pass (non-zero)
  }
  void* dst = h2d ? static_cast<void*>(dev) : static_cast<void*>(host);
  const void* src = h2d ? static_cast<const void*>(host) : static_cast<const void*>(dev);
  std::unique_ptr<StagedRing> ring;
  if (way == Way::staged) {
    const int threads = h2d ? c.staging_up : c.staging_down;
    ring.reset(new StagedRing(threads, threads + 8, size_t(4) << 20, c.device, c.s));
    std::fprintf(stderr, "%s: %d threads\n", name, threads);
  }

  auto batch = [&](int n) {
    switch (way) {
      case Way::pinned:
        for (int i = 0; i < n; ++i) CHECK(cudaMemcpyAsync(dst, src, size, kind, c.s));
        CHECK(cudaStreamSynchronize(c.s));
        break;
      case Way::pageable:
        for (int i = 0; i < n; ++i) CHECK(cudaMemcpy(dst, src, size, kind));
        // A pageable H2D cudaMemcpy may return once the data is staged, before the DMA lands.
        CHECK(cudaDeviceSynchronize());
        break;
      case Way::staged:
        for (int i = 0; i < n; ++i) {
          if (h2d) ring->upload(dev, host, size);
          else ring->download(host, dev, size);
        }
        break;
    }
  };
  batch(std::min(iters, 4));  // warm-up

  std::vector<double> per;
  for (int r = 0; r < c.repeats; ++r) {
    CHECK(cudaDeviceSynchronize());
    auto t0 = clk::now();
    batch(iters);
    double dt = seconds_since(t0);
    per.push_back(static_cast<double>(iters) * static_cast<double>(size) / dt / 1e9);
  }

  // Check: the destination holds exactly the source bytes. For H2D, read the device buffer back
  // into a separate host buffer; for D2H, the timed destination itself.
  bool ok = true;
  std::string why;
  std::vector<uint8_t> back;
  const uint8_t* got = host;
  if (h2d) {
    back.resize(size);
    CHECK(cudaMemcpy(back.data(), dev, size, cudaMemcpyDeviceToHost));
    got = back.data();
  }
  long long at = first_mismatch(got, want.data(), size);
  if (at >= 0) ok = false, why = mismatch_msg(h2d ? "device buffer" : "host buffer", at, got,
                                              want.data());
  emit_result(name, static_cast<long long>(size), "GB/s", median(per), NAN, c.repeats, ok, why);
  ring.reset();
  CHECK(cudaFree(dev));
  host_free(host, pinned);
}

static void d2d(const Ctx& c) {
  const size_t size = size_t(1) << 30;
  const int iters = 10;
  std::vector<uint8_t> want(size);
  fill_pattern(want.data(), size, 7);
  uint8_t *src = nullptr, *dst = nullptr;
  CHECK(cudaMalloc(reinterpret_cast<void**>(&src), size));
  CHECK(cudaMalloc(reinterpret_cast<void**>(&dst), size));
  CHECK(cudaMemcpy(src, want.data(), size, cudaMemcpyHostToDevice));
  CHECK(cudaMemset(dst, 0, size));

  CHECK(cudaMemcpyAsync(dst, src, size, cudaMemcpyDeviceToDevice, c.s));  // warm-up
  CHECK(cudaStreamSynchronize(c.s));
  std::vector<double> per;
  for (int r = 0; r < c.repeats; ++r) {
    auto t0 = clk::now();
    for (int i = 0; i < iters; ++i)
      CHECK(cudaMemcpyAsync(dst, src, size, cudaMemcpyDeviceToDevice, c.s));
    CHECK(cudaStreamSynchronize(c.s));
    // Bytes read plus bytes written: the figure device memory bandwidth is quoted in.
    per.push_back(2.0 * static_cast<double>(size) * iters / seconds_since(t0) / 1e9);
  }

  // Check all of it: one 1 GiB read-back costs well under a second.
  std::vector<uint8_t> back(size);
  CHECK(cudaMemcpy(back.data(), dst, size, cudaMemcpyDeviceToHost));
  long long at = first_mismatch(back.data(), want.data(), size);
  bool ok = at < 0;
  std::string why = ok ? "" : mismatch_msg("destination", at, back.data(), want.data());
  emit_result("d2d", static_cast<long long>(size), "GB/s", median(per), NAN, c.repeats, ok, why);
  CHECK(cudaFree(dst));
  CHECK(cudaFree(src));
}

// enable_peer lets the current device access peer's memory; already enabled (by gpuactor, in
// this process with -inprocess) is fine.
static void enable_peer(int peer) {
  cudaError_t e = cudaDeviceEnablePeerAccess(peer, 0);
  if (e == cudaErrorPeerAccessAlreadyEnabled) {
    (void)cudaGetLastError();
    return;
  }
  CHECK(e);
}

// peer_copy: 1 GiB copied from c.device to the first other device linked to it both ways, with
// peer access enabled both ways (and left so), 10 cudaMemcpyPeerAsync per repeat on the
// suite's stream; bytes moved one way. Without such a device it prints why on stderr and no
// result.
static void peer_copy(const Ctx& c) {
  const size_t size = size_t(1) << 30;
  const int iters = 10;
  int n = 0, peer = -1;
  CHECK(cudaGetDeviceCount(&n));
  for (int j = 0; j < n && peer < 0; ++j) {
    if (j == c.device) continue;
    int to = 0, from = 0;
    CHECK(cudaDeviceCanAccessPeer(&to, c.device, j));
    CHECK(cudaDeviceCanAccessPeer(&from, j, c.device));
    if (to && from) peer = j;
  }
  if (peer < 0) {
    std::fprintf(stderr, "suite: peer_copy skipped: needs two GPUs with peer access (%d GPU(s))\n", n);
    return;
  }
  enable_peer(peer);
  CHECK(cudaSetDevice(peer));
  enable_peer(c.device);
  uint8_t* dst = nullptr;
  CHECK(cudaMalloc(reinterpret_cast<void**>(&dst), size));
  CHECK(cudaMemset(dst, 0, size));
  CHECK(cudaDeviceSynchronize());
  CHECK(cudaSetDevice(c.device));

  std::vector<uint8_t> want(size);
  fill_pattern(want.data(), size, 10);
  uint8_t* src = nullptr;
  CHECK(cudaMalloc(reinterpret_cast<void**>(&src), size));
  CHECK(cudaMemcpy(src, want.data(), size, cudaMemcpyHostToDevice));

  CHECK(cudaMemcpyPeerAsync(dst, peer, src, c.device, size, c.s));  // warm-up
  CHECK(cudaStreamSynchronize(c.s));
  std::vector<double> per;
  for (int r = 0; r < c.repeats; ++r) {
    auto t0 = clk::now();
    for (int i = 0; i < iters; ++i) CHECK(cudaMemcpyPeerAsync(dst, peer, src, c.device, size, c.s));
    CHECK(cudaStreamSynchronize(c.s));
    per.push_back(static_cast<double>(size) * iters / seconds_since(t0) / 1e9);
  }

  std::vector<uint8_t> back(size);
  CHECK(cudaMemcpy(back.data(), dst, size, cudaMemcpyDeviceToHost));
  long long at = first_mismatch(back.data(), want.data(), size);
  bool ok = at < 0;
  std::string why = ok ? "" : mismatch_msg("peer destination", at, back.data(), want.data());
  emit_result("peer_copy", static_cast<long long>(size), "GB/s", median(per), NAN, c.repeats, ok, why);
  CHECK(cudaFree(src));
  CHECK(cudaSetDevice(peer));
  CHECK(cudaFree(dst));
  CHECK(cudaSetDevice(c.device));
}

// d2d_pitched: cudaMemcpy2DAsync of a whole 8192x8192 float array between two cudaMallocPitch
// allocations, in bytes read plus written per second, as d2d.
static void d2d_pitched(const Ctx& c) {
  const size_t side = 8192, row = side * sizeof(float), size = row * side;
  const int iters = 10;
  std::vector<uint8_t> want(size);
  fill_pattern(want.data(), size, 11);
  void *src = nullptr, *dst = nullptr;
  size_t spitch = 0, dpitch = 0;
  CHECK(cudaMallocPitch(&src, &spitch, row, side));
  CHECK(cudaMallocPitch(&dst, &dpitch, row, side));
  CHECK(cudaMemcpy2D(src, spitch, want.data(), row, row, side, cudaMemcpyHostToDevice));
  CHECK(cudaMemset2D(dst, dpitch, 0, row, side));

  CHECK(cudaMemcpy2DAsync(dst, dpitch, src, spitch, row, side, cudaMemcpyDeviceToDevice, c.s));  // warm-up
  CHECK(cudaStreamSynchronize(c.s));
  std::vector<double> per;
  for (int r = 0; r < c.repeats; ++r) {
    auto t0 = clk::now();
    for (int i = 0; i < iters; ++i)
      CHECK(cudaMemcpy2DAsync(dst, dpitch, src, spitch, row, side, cudaMemcpyDeviceToDevice, c.s));
    CHECK(cudaStreamSynchronize(c.s));
    per.push_back(2.0 * static_cast<double>(size) * iters / seconds_since(t0) / 1e9);
  }

  std::vector<uint8_t> back(size);
  CHECK(cudaMemcpy2D(back.data(), row, dst, dpitch, row, side, cudaMemcpyDeviceToHost));
  long long at = first_mismatch(back.data(), want.data(), size);
  bool ok = at < 0;
  std::string why = ok ? "" : mismatch_msg("destination", at, back.data(), want.data());
  emit_result("d2d_pitched", static_cast<long long>(size), "GB/s", median(per), NAN, c.repeats, ok, why);
  CHECK(cudaFree(dst));
  CHECK(cudaFree(src));
}

static void malloc_free(const Ctx& c) {
  const size_t size = size_t(1) << 20;
  const int kPairs = 200;
  cudaError_t first = cudaSuccess;
  bool null_ptr = false;
  auto batch = [&](int n) {
    for (int i = 0; i < n; ++i) {
      void* p = nullptr;
      TALLY(cudaMalloc(&p, size), first);
      if (!p) null_ptr = true;
      TALLY(cudaFree(p), first);
    }
  };
  batch(20);  // warm-up
  std::vector<double> per;
  for (int r = 0; r < c.repeats; ++r) {
    CHECK(cudaDeviceSynchronize());
    auto t0 = clk::now();
    batch(kPairs);
    CHECK(cudaDeviceSynchronize());  // cudaFree already syncs; this keeps the protocol uniform
    per.push_back(seconds_since(t0) / kPairs * 1e6);
  }
  bool ok = first == cudaSuccess && !null_ptr;
  std::string why = first != cudaSuccess ? cudaGetErrorString(first)
                                         : (null_ptr ? "cudaMalloc returned a null pointer" : "");
  emit_result("malloc_free", static_cast<long long>(size), "us/pair", median(per), NAN,
              c.repeats, ok, why);
}

// cudaFree alone of a 1 MiB buffer whose last use has completed: each buffer is allocated,
// memset on the stream and the stream synchronized, untimed; then the clock covers the
// cudaFree. The floor for gpuactor's free_after_done (a Close awaited after the same).
static void free_after_done(const Ctx& c) {
  const size_t size = size_t(1) << 20;
  const int kFrees = 50;
  cudaError_t first = cudaSuccess;
  bool null_ptr = false;
  auto batch = [&](int n) {
    double spent = 0;
    for (int i = 0; i < n; ++i) {
      void* p = nullptr;
      CHECK(cudaMalloc(&p, size));
      if (!p) null_ptr = true;
      CHECK(cudaMemsetAsync(p, 0, size, c.s));
      CHECK(cudaStreamSynchronize(c.s));
      auto t0 = clk::now();
      TALLY(cudaFree(p), first);
      spent += seconds_since(t0);
    }
    return spent;
  };
  batch(10);  // warm-up
  std::vector<double> per;
  for (int r = 0; r < c.repeats; ++r) per.push_back(batch(kFrees) / kFrees * 1e6);
  bool ok = first == cudaSuccess && !null_ptr;
  std::string why = first != cudaSuccess ? cudaGetErrorString(first)
                                         : (null_ptr ? "cudaMalloc returned a null pointer" : "");
  emit_result("free_after_done", static_cast<long long>(size), "us", median(per), NAN, c.repeats,
              ok, why);
}

// cudaMallocAsync + cudaFreeAsync pairs of 1 MiB from the default pool on one stream, queued
// back to back; the stream is synchronized once per batch.
static void mallocasync_free(const Ctx& c) {
  const size_t size = size_t(1) << 20;
  const int kPairs = 200;
  cudaError_t first = cudaSuccess;
  bool null_ptr = false;
  auto batch = [&](int n) {
    for (int i = 0; i < n; ++i) {
      void* p = nullptr;
      TALLY(cudaMallocAsync(&p, size, c.s), first);
      if (!p) null_ptr = true;
      TALLY(cudaFreeAsync(p, c.s), first);
    }
  };
  batch(20);  // warm-up
  CHECK(cudaStreamSynchronize(c.s));
  std::vector<double> per;
  for (int r = 0; r < c.repeats; ++r) {
    auto t0 = clk::now();
    batch(kPairs);
    CHECK(cudaStreamSynchronize(c.s));
    per.push_back(seconds_since(t0) / kPairs * 1e6);
  }
  bool ok = first == cudaSuccess && !null_ptr;
  std::string why = first != cudaSuccess ? cudaGetErrorString(first)
                                         : (null_ptr ? "cudaMallocAsync returned a null pointer" : "");
  emit_result("mallocasync_free", static_cast<long long>(size), "us/pair", median(per), NAN,
              c.repeats, ok, why);
}

static void stream_query(const Ctx& c) {
  const int kCalls = 100000;
  // A stream that has run work before: the idle-but-used case a completion poller sees.
  empty<<<1, 1, 0, c.s>>>();
  CHECK(cudaGetLastError());
  CHECK(cudaStreamSynchronize(c.s));
  cudaError_t first = cudaSuccess;
  for (int i = 0; i < 1000; ++i) TALLY(cudaStreamQuery(c.s), first);  // warm-up
  std::vector<double> per;
  for (int r = 0; r < c.repeats; ++r) {
    auto t0 = clk::now();
    for (int i = 0; i < kCalls; ++i) TALLY(cudaStreamQuery(c.s), first);
    CHECK(cudaStreamSynchronize(c.s));
    per.push_back(seconds_since(t0) / kCalls * 1e9);
  }
  bool ok = first == cudaSuccess;
  emit_result("stream_query", -1, "ns/call", median(per), NAN, c.repeats, ok,
              ok ? "" : std::string("cudaStreamQuery: ") + cudaGetErrorString(first));
}

static void event_record(const Ctx& c) {
  const int kCalls = 100000;
  cudaEvent_t e;
  // No timing: the cheap kind gpuactor uses for completion tracking.
  CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  cudaError_t first = cudaSuccess;
  for (int i = 0; i < 1000; ++i) TALLY(cudaEventRecord(e, c.s), first);  // warm-up
  CHECK(cudaStreamSynchronize(c.s));
  std::vector<double> per;
  for (int r = 0; r < c.repeats; ++r) {
    auto t0 = clk::now();
    for (int i = 0; i < kCalls; ++i) TALLY(cudaEventRecord(e, c.s), first);
    CHECK(cudaStreamSynchronize(c.s));
    per.push_back(seconds_since(t0) / kCalls * 1e9);
  }
  bool ok = first == cudaSuccess;
  emit_result("event_record", -1, "ns/call", median(per), NAN, c.repeats, ok,
              ok ? "" : std::string("cudaEventRecord: ") + cudaGetErrorString(first));
  CHECK(cudaEventDestroy(e));
}

// ---------------------------------------------------------------------------------------------
// Graphs: chains of N empty kernel nodes (size = N), as gpuactor's graph rows.

static const std::vector<int> kGraphSizes = {1, 10, 100, 1000};
static const int kGraphLaunches = 100;

static void graph_instantiate(const Ctx& c) {
  for (int n : c.graph_sizes) {
    cudaGraph_t g = empty_chain(n);
    std::vector<double> per;
    for (int r = -1; r < c.repeats; ++r) {
      cudaGraphExec_t x;
      auto t0 = clk::now();
      CHECK(cudaGraphInstantiateWithFlags(&x, g, 0));
      double dt = seconds_since(t0);
      CHECK(cudaGraphExecDestroy(x));
      if (r >= 0) per.push_back(dt * 1e6);
    }
    emit_result("graph_instantiate", n, "us", median(per), NAN, c.repeats, true, "");
    CHECK(cudaGraphDestroy(g));
  }
}

// graph_launch: the host cost of cudaGraphLaunch (the calls alone); graph_node: launches run
// back to back, per node.
static void graph_launches(const Ctx& c, bool per_node) {
  for (int n : c.graph_sizes) {
    cudaGraph_t g = empty_chain(n);
    cudaGraphExec_t x;
    CHECK(cudaGraphInstantiateWithFlags(&x, g, 0));
    CHECK(cudaGraphLaunch(x, c.s));  // upload, warm-up
    CHECK(cudaStreamSynchronize(c.s));
    std::vector<double> per;
    cudaError_t first = cudaSuccess;
    for (int r = -1; r < c.repeats; ++r) {
      auto t0 = clk::now();
      for (int i = 0; i < kGraphLaunches; ++i) TALLY(cudaGraphLaunch(x, c.s), first);
      double host = seconds_since(t0);
      CHECK(cudaStreamSynchronize(c.s));
      double all = seconds_since(t0);
      if (r >= 0)
        per.push_back(per_node ? all / (kGraphLaunches * static_cast<double>(n)) * 1e6
                               : host / kGraphLaunches * 1e6);
    }
    bool ok = first == cudaSuccess;
    emit_result(per_node ? "graph_node" : "graph_launch", n, per_node ? "us/node" : "us/launch",
                median(per), NAN, c.repeats, ok,
                ok ? "" : std::string("cudaGraphLaunch: ") + cudaGetErrorString(first));
    CHECK(cudaGraphExecDestroy(x));
    CHECK(cudaGraphDestroy(g));
  }
}

// graph_update_launch: set a kernel node's argument in the executable graph, launch; repeat.
static void graph_update_launch(const Ctx& c) {
  const int kIters = 2000;
  cudaGraph_t g;
  CHECK(cudaGraphCreate(&g, 0));
  int v = 0;
  void* args[] = {&v};
  cudaKernelNodeParams p = {};
  p.func = reinterpret_cast<void*>(empty_arg);
  p.gridDim = dim3(1);
  p.blockDim = dim3(1);
  p.kernelParams = args;
  cudaGraphNode_t node;
  CHECK(cudaGraphAddKernelNode(&node, g, nullptr, 0, &p));
  cudaGraphExec_t x;
  CHECK(cudaGraphInstantiateWithFlags(&x, g, 0));
  CHECK(cudaGraphLaunch(x, c.s));
  CHECK(cudaStreamSynchronize(c.s));
  std::vector<double> per;
  cudaError_t first = cudaSuccess;
  for (int r = -1; r < c.repeats; ++r) {
    auto t0 = clk::now();
    for (int i = 0; i < kIters; ++i) {
      v = i;
      TALLY(cudaGraphExecKernelNodeSetParams(x, node, &p), first);
      TALLY(cudaGraphLaunch(x, c.s), first);
    }
    CHECK(cudaStreamSynchronize(c.s));
    if (r >= 0) per.push_back(seconds_since(t0) / kIters * 1e6);
  }
  bool ok = first == cudaSuccess;
  emit_result("graph_update_launch", 1, "us/iter", median(per), NAN, c.repeats, ok,
              ok ? "" : std::string("update+launch: ") + cudaGetErrorString(first));
  CHECK(cudaGraphExecDestroy(x));
  CHECK(cudaGraphDestroy(g));
}

// ---------------------------------------------------------------------------------------------
// GPU-bound jobs: one launch of `busy`, which fills every SM for kBusyCycles clocks, is one job.
// The baseline of gpuactor's group rows: jobs per second of one GPU driven straight from one
// thread, and one job's round trip. gpuactor's side runs the same kernel with the same grid.

static const long long kBusyCycles = 300000;
static const int kBusyThreads = 256;

__global__ void busy(long long cycles) {
  long long start = clock64();
  while (clock64() - start < cycles) {
  }
}

// busy_grid: enough blocks of kBusyThreads to fill every SM once.
static int busy_grid(int device) {
  int sms = 0, per_sm = 0;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  CHECK(cudaDeviceGetAttribute(&per_sm, cudaDevAttrMaxThreadsPerMultiProcessor, device));
  return sms * std::max(1, per_sm / kBusyThreads);
}

static void busy_jobs(const Ctx& c) {
  const int kJobs = 2000;
  int grid = busy_grid(c.device);
  for (int i = 0; i < 20; ++i) busy<<<grid, kBusyThreads, 0, c.s>>>(kBusyCycles);
  CHECK(cudaStreamSynchronize(c.s));
  std::vector<double> rate;
  for (int r = 0; r < c.repeats; ++r) {
    auto t0 = clk::now();
    for (int i = 0; i < kJobs; ++i) busy<<<grid, kBusyThreads, 0, c.s>>>(kBusyCycles);
    CHECK(cudaStreamSynchronize(c.s));
    rate.push_back(kJobs / seconds_since(t0));
  }
  cudaError_t e = cudaGetLastError();
  emit_result("busy_jobs", -1, "jobs/s", median(rate), NAN, c.repeats, e == cudaSuccess,
              e == cudaSuccess ? "" : cudaGetErrorString(e));
}

static void busy_roundtrip(const Ctx& c) {
  const int kIters = 500;
  int grid = busy_grid(c.device);
  std::vector<double> all;
  for (int r = -1; r < c.repeats; ++r) {
    for (int i = 0; i < kIters; ++i) {
      auto t0 = clk::now();
      busy<<<grid, kBusyThreads, 0, c.s>>>(kBusyCycles);
      CHECK(cudaStreamSynchronize(c.s));
      if (r >= 0) all.push_back(seconds_since(t0) * 1e6);
    }
  }
  cudaError_t e = cudaGetLastError();
  emit_result("busy_roundtrip", -1, "us", median(all), percentile(all, 0.99), c.repeats,
              e == cudaSuccess, e == cudaSuccess ? "" : cudaGetErrorString(e));
}

#include "threads.h"  // after CHECK, Ctx and emit_result, which it uses
#include "detect.h"   // likewise

// ---------------------------------------------------------------------------------------------
// Command line and main

static std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    size_t comma = s.find(',', start);
    if (comma == std::string::npos) comma = s.size();
    if (comma > start) out.push_back(s.substr(start, comma - start));
    start = comma + 1;
  }
  return out;
}

[[noreturn]] static void usage(const char* msg) {
  std::fprintf(stderr,
               "%s\nusage: suite [--scenarios a,b,...] [--sizes 4096,65536,...] "
               "[--graph-sizes 1,10,...] [--repeat N] [--device N] [--staging-threads N]\n",
               msg);
  std::exit(2);
}

static long long parse_int(const std::string& s, const char* flag) {
  char* end = nullptr;
  long long v = std::strtoll(s.c_str(), &end, 10);
  if (s.empty() || *end != '\0' || v < 0) usage((std::string("bad value for ") + flag).c_str());
  return v;
}

// suite_main runs the scenarios argv asks for. The library keeps its stream from one call to
// the next: a stream per call would leave the process with work on many streams, which slows
// graphs for the gpuactor rows beside it as much as for these.
static int suite_main(int argc, char** argv) {
  g_failed = false;
  std::vector<std::string> wanted;  // empty: all
  std::vector<size_t> sizes = {4096, 65536, 1048576, 16777216, 268435456};
  std::vector<int> graph_sizes = kGraphSizes;
  int repeats = 21, device = 0;
  // The staged rows' threads, chosen as gpuactor's staging chooses its goroutines
  // (stagedring.h): the same parallelism, so that the rows compare the code.
  int cores = static_cast<int>(std::thread::hardware_concurrency());
  int staging_up = staging_upload_threads(cores);
  int staging_down = staging_download_threads(cores);
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i], v;
    size_t eq = a.find('=');
    if (eq != std::string::npos) {  // accept --flag=value too
      v = a.substr(eq + 1);
      a = a.substr(0, eq);
    } else if (a == "--scenarios" || a == "--sizes" || a == "--graph-sizes" || a == "--repeat" ||
               a == "--device" || a == "--staging-threads") {
      if (i + 1 >= argc) usage(("missing value for " + a).c_str());
      v = argv[++i];
    }
    if (a == "--scenarios") {
      wanted = split(v);
    } else if (a == "--sizes") {
      sizes.clear();
      for (auto& s : split(v)) sizes.push_back(static_cast<size_t>(parse_int(s, "--sizes")));
      for (size_t s : sizes)
        if (s == 0) usage("sizes must be positive");
    } else if (a == "--graph-sizes") {
      graph_sizes.clear();
      for (auto& s : split(v)) graph_sizes.push_back(static_cast<int>(parse_int(s, "--graph-sizes")));
      for (int n : graph_sizes)
        if (n == 0) usage("graph sizes must be positive");
    } else if (a == "--repeat") {
      repeats = static_cast<int>(parse_int(v, "--repeat"));
      if (repeats < 1) usage("--repeat must be at least 1");
    } else if (a == "--device") {
      device = static_cast<int>(parse_int(v, "--device"));
    } else if (a == "--staging-threads") {
      staging_up = staging_down = static_cast<int>(parse_int(v, "--staging-threads"));
      if (staging_up < 1) usage("--staging-threads must be at least 1");
    } else {
      usage(("unknown argument " + a).c_str());
    }
  }

  CHECK(cudaSetDevice(device));
  cudaDeviceProp p;
  CHECK(cudaGetDeviceProperties(&p, device));
  int rt = 0, drv = 0;
  CHECK(cudaRuntimeGetVersion(&rt));
  CHECK(cudaDriverGetVersion(&drv));
  emit_line(format(
      "{\"kind\":\"header\",\"impl\":\"%s\",\"device\":\"%s\",\"driver\":%d,\"runtime\":%d,"
      "\"cc\":\"%d.%d\"}",
      kImpl, json_escape(p.name).c_str(), drv, rt, p.major, p.minor));

#ifdef SUITE_LIB
  static cudaStream_t kept = nullptr;
  static int kept_device = -1;
  if (kept_device != device) {
    if (kept) CHECK(cudaStreamDestroy(kept));
    CHECK(cudaStreamCreateWithFlags(&kept, cudaStreamNonBlocking));
    kept_device = device;
  }
  Ctx c{device, repeats, kept, graph_sizes, staging_up, staging_down};
#else
  Ctx c{device, repeats, nullptr, graph_sizes, staging_up, staging_down};
  CHECK(cudaStreamCreateWithFlags(&c.s, cudaStreamNonBlocking));
#endif

  // Canonical order; unsized scenarios take no size, sized ones run once per --sizes entry.
  struct Scenario {
    const char* name;
    std::function<void()> run;
  };
  auto sized = [&](const char* name, bool h2d, Way way, unsigned salt) {
    return [&c, &sizes, name, h2d, way, salt] {
      for (size_t sz : sizes) transfer(c, name, h2d, way, sz, salt);
    };
  };
  std::vector<Scenario> all = {
      {"launch_enqueue", [&] { launch_enqueue(c); }},
      {"launch_roundtrip", [&] { launch_roundtrip(c); }},
      {"roundtrip_query_loop", [&] { roundtrip_query_loop(c); }},
      {"roundtrip_event_sync", [&] { roundtrip_event_sync(c); }},
      {"roundtrip_event_sync_other", [&] { roundtrip_event_sync_other(c); }},
      {"h2d_async_64B", [&] { h2d_async_64B(c); }},
      {"h2d_pinned", sized("h2d_pinned", true, Way::pinned, 2)},
      {"d2h_pinned", sized("d2h_pinned", false, Way::pinned, 3)},
      {"h2d_pageable", sized("h2d_pageable", true, Way::pageable, 4)},
      {"d2h_pageable", sized("d2h_pageable", false, Way::pageable, 5)},
      {"h2d_staged", sized("h2d_staged", true, Way::staged, 8)},
      {"d2h_staged", sized("d2h_staged", false, Way::staged, 9)},
      {"d2d", [&] { d2d(c); }},
      {"d2d_pitched", [&] { d2d_pitched(c); }},
      {"malloc_free", [&] { malloc_free(c); }},
      {"mallocasync_free", [&] { mallocasync_free(c); }},
      {"free_after_done", [&] { free_after_done(c); }},
      {"stream_query", [&] { stream_query(c); }},
      {"event_record", [&] { event_record(c); }},
      {"graph_instantiate", [&] { graph_instantiate(c); }},
      {"graph_launch", [&] { graph_launches(c, false); }},
      {"graph_node", [&] { graph_launches(c, true); }},
      {"graph_update_launch", [&] { graph_update_launch(c); }},
      {"busy_jobs", [&] { busy_jobs(c); }},
      {"busy_roundtrip", [&] { busy_roundtrip(c); }},
      {"peer_copy", [&] { peer_copy(c); }},  // two devices
      {"launch_enqueue_8", [&] { launch_enqueue_8(c); }},  // several streams: last
      {"launch_threads_8", [&] { launch_threads(c, 8, "launch_threads_8"); }},
      {"launch_threads_64", [&] { launch_threads(c, 64, "launch_threads_64"); }},
  };
  for (auto& w : wanted) {
    bool known = false;
    for (auto& s : all) known = known || w == s.name;
    // Not an error: the runner may ask for scenarios only gpuactor implements.
    if (!known) std::fprintf(stderr, "suite: no scenario %s here, skipped\n", w.c_str());
  }
  for (auto& s : all) {
    if (!wanted.empty() && std::find(wanted.begin(), wanted.end(), s.name) == wanted.end())
      continue;
    std::fprintf(stderr, "suite: %s ...\n", s.name);
    s.run();
  }

#ifndef SUITE_LIB
  CHECK(cudaStreamDestroy(c.s));
#endif
  return g_failed ? 1 : 0;
}

#ifdef SUITE_LIB
// suite_run runs the suite in the calling process with main's flags (argv[0] is the first
// flag, not a program name) and returns its JSON lines, valid until the next call; *status is
// what main would have exited with. One call at a time. A CUDA call that fails outside a check
// still ends the process, as it ends the program: the run is broken either way.
extern "C" const char* suite_run(int argc, char** argv, int* status) {
  g_out.clear();
  std::vector<char*> args;
  args.push_back(const_cast<char*>("suite"));
  for (int i = 0; i < argc; ++i) args.push_back(argv[i]);
  *status = suite_main(static_cast<int>(args.size()), args.data());
  return g_out.c_str();
}
#else
int main(int argc, char** argv) { return suite_main(argc, argv); }
#endif
