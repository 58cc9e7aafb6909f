// allreduce.cpp: the C++ baseline for gpuactor's NCCL all-reduce rows.
//
// An all-reduce bus-bandwidth loop over libnccl with nothing in between: float32 sum,
// out of place, sizes doubling from --min to --max, warmup then timed iterations, printed as
// NVIDIA's all_reduce_perf prints them (time per iteration, algbw = bytes / time, busbw =
// algbw * 2(n-1)/n). libcudart and libnccl are both dlopen'ed, and the few prototypes used
// are declared here, so it builds with g++ alone:
//
//   g++ -O2 -std=c++17 -o /tmp/allreduce bench/collective/allreduce.cpp -ldl -lpthread
//
// Modes:
//   allreduce [--gpus N]                 one process, every (or N) local GPU: one thread
//                                         drives all of them, each iteration one
//                                         ncclGroupStart/End around a call per GPU
//                                         (all_reduce_perf -g N, its default)
//   allreduce --threads [--gpus N]        one process, one thread per GPU, each its own rank
//                                         through ncclCommInitRank (all_reduce_perf -t N)
//   allreduce --nranks N --rank R --id-file F [--device D]
//                                         one rank per process: rank 0 writes the unique id
//                                         to F, the others wait for it; D defaults to R
// Flags: --min BYTES (1M) --max BYTES (1G) --warmup N (5) --iters N (20) --check 0|1 (1)
//        --nccl PATH (else $NCCL_LIBRARY, then the usual sonames) --cudart PATH
// Sizes take K, M, G suffixes (powers of 1024). Exit status 0, 1 on a wrong result or a
// failing call, 2 on bad flags.
#include <dlfcn.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

// ---- the CUDA runtime and NCCL, as far as this file uses them ----
typedef int cudaError_t;
typedef void* cudaStream_t;
enum { cudaMemcpyHostToDevice = 1, cudaMemcpyDeviceToHost = 2, cudaStreamNonBlocking = 1 };

typedef struct ncclComm* ncclComm_t;
typedef struct { char internal[128]; } ncclUniqueId;  // NCCL_UNIQUE_ID_BYTES
typedef int ncclResult_t;
enum { ncclFloat32 = 7, ncclSum = 0 };

struct Cuda {
  cudaError_t (*GetDeviceCount)(int*);
  cudaError_t (*SetDevice)(int);
  cudaError_t (*Malloc)(void**, size_t);
  cudaError_t (*Free)(void*);
  cudaError_t (*Memcpy)(void*, const void*, size_t, int);
  cudaError_t (*MemsetAsync)(void*, int, size_t, cudaStream_t);
  cudaError_t (*StreamCreateWithFlags)(cudaStream_t*, unsigned);
  cudaError_t (*StreamSynchronize)(cudaStream_t);
  cudaError_t (*DeviceGetPCIBusId)(char*, int, int);
  const char* (*GetErrorString)(cudaError_t);
} cu;

struct Nccl {
  ncclResult_t (*GetVersion)(int*);
  ncclResult_t (*GetUniqueId)(ncclUniqueId*);
  ncclResult_t (*CommInitAll)(ncclComm_t*, int, const int*);
  ncclResult_t (*CommInitRank)(ncclComm_t*, int, ncclUniqueId, int);
  ncclResult_t (*AllReduce)(const void*, void*, size_t, int, int, ncclComm_t, cudaStream_t);
  ncclResult_t (*GroupStart)();
  ncclResult_t (*GroupEnd)();
  ncclResult_t (*CommDestroy)(ncclComm_t);
  const char* (*GetErrorString)(ncclResult_t);
} nc;

#define CUDA(call)                                                                        \
  do {                                                                                    \
    cudaError_t e_ = (call);                                                              \
    if (e_ != 0) {                                                                        \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #call, cu.GetErrorString(e_)); \
      std::exit(1);                                                                       \
    }                                                                                     \
  } while (0)

#define NCCL(call)                                                                        \
  do {                                                                                    \
    ncclResult_t r_ = (call);                                                             \
    if (r_ != 0) {                                                                        \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #call, nc.GetErrorString(r_)); \
      std::exit(1);                                                                       \
    }                                                                                     \
  } while (0)

// loadLib loads the first library of paths that loads, or exits naming every path tried.
static void* loadLib(const std::vector<std::string>& paths, const char* what, std::string* loaded) {
  std::string tried;
  for (const auto& p : paths) {
    if (p.empty()) continue;
    if (void* h = dlopen(p.c_str(), RTLD_NOW | RTLD_GLOBAL)) {
      *loaded = p;
      return h;
    }
    tried += "\n  " + p + ": " + dlerror();
  }
  std::fprintf(stderr, "cannot load %s; tried:%s\n", what, tried.c_str());
  std::exit(1);
}

template <typename F>
static void sym(void* lib, const char* name, F* fn) {
  *fn = reinterpret_cast<F>(dlsym(lib, name));
  if (!*fn) {
    std::fprintf(stderr, "symbol %s missing\n", name);
    std::exit(1);
  }
}

static std::string envOr(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

static void load(const std::string& cudartPath, const std::string& ncclPath, std::string* ncclLoaded) {
  std::string cudartLoaded;
  void* c = loadLib({cudartPath, envOr("CUDART_LIBRARY"), "libcudart.so", "libcudart.so.13", "libcudart.so.12",
                  "/usr/local/cuda/lib64/libcudart.so"},
                 "libcudart", &cudartLoaded);
  sym(c, "cudaGetDeviceCount", &cu.GetDeviceCount);
  sym(c, "cudaSetDevice", &cu.SetDevice);
  sym(c, "cudaMalloc", &cu.Malloc);
  sym(c, "cudaFree", &cu.Free);
  sym(c, "cudaMemcpy", &cu.Memcpy);
  sym(c, "cudaMemsetAsync", &cu.MemsetAsync);
  sym(c, "cudaStreamCreateWithFlags", &cu.StreamCreateWithFlags);
  sym(c, "cudaStreamSynchronize", &cu.StreamSynchronize);
  sym(c, "cudaDeviceGetPCIBusId", &cu.DeviceGetPCIBusId);
  sym(c, "cudaGetErrorString", &cu.GetErrorString);
  void* n = loadLib({ncclPath, envOr("NCCL_LIBRARY"), "libnccl.so.2", "libnccl.so", "/usr/lib/x86_64-linux-gnu/libnccl.so.2"},
                 "libnccl", ncclLoaded);
  sym(n, "ncclGetVersion", &nc.GetVersion);
  sym(n, "ncclGetUniqueId", &nc.GetUniqueId);
  sym(n, "ncclCommInitAll", &nc.CommInitAll);
  sym(n, "ncclCommInitRank", &nc.CommInitRank);
  sym(n, "ncclAllReduce", &nc.AllReduce);
  sym(n, "ncclGroupStart", &nc.GroupStart);
  sym(n, "ncclGroupEnd", &nc.GroupEnd);
  sym(n, "ncclCommDestroy", &nc.CommDestroy);
  sym(n, "ncclGetErrorString", &nc.GetErrorString);
}

// ---- data: small integers, so that any summation order gives the exact sum ----
static float value(size_t i, int rank) { return float(int((i * 131 + size_t(rank) * 29) % 61) - 30); }

static float expected(size_t i, int nranks) {
  float s = 0;
  for (int r = 0; r < nranks; r++) s += value(i, r);
  return s;
}

// One GPU's part: its rank, buffers and stream.
struct Part {
  int dev = 0, rank = 0;
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;
  float *send = nullptr, *recv = nullptr;
};

static void setup(Part& p, size_t maxBytes) {
  CUDA(cu.SetDevice(p.dev));
  CUDA(cu.StreamCreateWithFlags(&p.stream, cudaStreamNonBlocking));
  CUDA(cu.Malloc(reinterpret_cast<void**>(&p.send), maxBytes));
  CUDA(cu.Malloc(reinterpret_cast<void**>(&p.recv), maxBytes));
  std::vector<float> host(maxBytes / sizeof(float));
  for (size_t i = 0; i < host.size(); i++) host[i] = value(i, p.rank);
  CUDA(cu.Memcpy(p.send, host.data(), maxBytes, cudaMemcpyHostToDevice));
}

// check compares p's result for count elements with the exact sum; it returns the number of
// wrong elements, and clears the receive buffer for the next size.
static size_t check(Part& p, size_t count, int nranks) {
  CUDA(cu.SetDevice(p.dev));
  std::vector<float> host(count);
  CUDA(cu.Memcpy(host.data(), p.recv, count * sizeof(float), cudaMemcpyDeviceToHost));
  size_t wrong = 0;
  for (size_t i = 0; i < count; i++) {
    if (host[i] != expected(i, nranks)) {
      if (wrong == 0)
        std::fprintf(stderr, "rank %d element %zu is %g, want %g\n", p.rank, i, host[i], expected(i, nranks));
      wrong++;
    }
  }
  CUDA(cu.MemsetAsync(p.recv, 0, count * sizeof(float), p.stream));  // on the stream: ordered before the next size
  CUDA(cu.StreamSynchronize(p.stream));
  return wrong;
}

// launch issues one all-reduce of count floats on every part given (ncclGroupStart/End
// around them when there are several, as one thread driving several GPUs must).
static void launch(std::vector<Part*>& parts, size_t count) {
  if (parts.size() > 1) NCCL(nc.GroupStart());
  for (Part* p : parts) NCCL(nc.AllReduce(p->send, p->recv, count, ncclFloat32, ncclSum, p->comm, p->stream));
  if (parts.size() > 1) NCCL(nc.GroupEnd());
}

static void sync(std::vector<Part*>& parts) {
  for (Part* p : parts) {
    CUDA(cu.SetDevice(p->dev));
    CUDA(cu.StreamSynchronize(p->stream));
  }
}

// A reusable barrier for the threads mode (C++17 has none).
class Barrier {
 public:
  explicit Barrier(int n) : n_(n) {}
  void wait() {
    std::unique_lock<std::mutex> l(mu_);
    int gen = gen_;
    if (++waiting_ == n_) {
      waiting_ = 0;
      gen_++;
      cv_.notify_all();
      return;
    }
    cv_.wait(l, [&] { return gen != gen_; });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int n_, waiting_ = 0, gen_ = 0;
};

struct Options {
  size_t minBytes = 1 << 20, maxBytes = size_t(1) << 30;
  int warmup = 5, iters = 20, gpus = 0, nranks = 0, rank = -1, device = -1;
  bool threads = false, check = true;
  std::string idFile, ncclPath, cudartPath;
};

// measure runs the size sweep on the parts this thread drives; ranks is the communicator's
// size. With a barrier (threads mode) every thread calls it, and only reporter prints.
static int measure(const Options& o, std::vector<Part*> parts, int ranks, Barrier* bar, bool reporter) {
  using clk = std::chrono::steady_clock;
  int status = 0;
  double busSum = 0;
  int rows = 0;
  if (reporter) {
    std::printf("#\n#%12s %14s %9s %7s %7s %10s %8s %8s %7s\n", "size", "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong");
    std::printf("#%12s %14s %9s %7s %7s %10s %8s %8s %7s\n", "(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "");
  }
  for (size_t bytes = o.minBytes; bytes <= o.maxBytes; bytes *= 2) {
    size_t count = bytes / sizeof(float);
    for (int i = 0; i < o.warmup; i++) launch(parts, count);
    sync(parts);
    if (bar) bar->wait();
    auto t0 = clk::now();
    for (int i = 0; i < o.iters; i++) launch(parts, count);
    sync(parts);
    if (bar) bar->wait();
    double sec = std::chrono::duration<double>(clk::now() - t0).count() / o.iters;
    size_t wrong = 0;
    if (o.check)
      for (Part* p : parts) wrong += check(*p, count, ranks);
    if (wrong) status = 1;
    if (bar) bar->wait();  // no thread's next warmup overwrites a buffer another still checks
    double algbw = double(bytes) / 1e9 / sec;
    double busbw = algbw * 2.0 * (ranks - 1) / ranks;
    busSum += busbw;
    rows++;
    if (reporter) {
      std::printf(" %12zu %14zu %9s %7s %7d %10.2f %8.2f %8.2f %7s\n", bytes, count, "float", "sum", -1, sec * 1e6, algbw,
                  busbw, o.check ? std::to_string(wrong).c_str() : "N/A");
      std::fflush(stdout);
    }
  }
  if (reporter) std::printf("# Avg bus bandwidth    : %g\n#\n", rows ? busSum / rows : 0.0);
  return status;
}

static size_t parseSize(const char* s) {
  char* end = nullptr;
  double v = std::strtod(s, &end);
  switch (*end) {
    case 'K': case 'k': v *= 1024; break;
    case 'M': case 'm': v *= 1024 * 1024; break;
    case 'G': case 'g': v *= 1024.0 * 1024 * 1024; break;
    case '\0': break;
    default: std::fprintf(stderr, "bad size %s\n", s); std::exit(2);
  }
  return size_t(v);
}

static Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; i++) {
    std::string a = argv[i];
    auto next = [&]() -> const char* {
      if (i + 1 >= argc) { std::fprintf(stderr, "%s needs a value\n", a.c_str()); std::exit(2); }
      return argv[++i];
    };
    if (a == "--min") o.minBytes = parseSize(next());
    else if (a == "--max") o.maxBytes = parseSize(next());
    else if (a == "--warmup") o.warmup = std::atoi(next());
    else if (a == "--iters") o.iters = std::atoi(next());
    else if (a == "--gpus") o.gpus = std::atoi(next());
    else if (a == "--threads") o.threads = true;
    else if (a == "--nranks") o.nranks = std::atoi(next());
    else if (a == "--rank") o.rank = std::atoi(next());
    else if (a == "--device") o.device = std::atoi(next());
    else if (a == "--id-file") o.idFile = next();
    else if (a == "--check") o.check = std::atoi(next()) != 0;
    else if (a == "--nccl") o.ncclPath = next();
    else if (a == "--cudart") o.cudartPath = next();
    else { std::fprintf(stderr, "unknown flag %s (see the comment at the top of allreduce.cpp)\n", a.c_str()); std::exit(2); }
  }
  if (o.minBytes < sizeof(float) || o.maxBytes < o.minBytes || o.iters < 1 || o.warmup < 0) {
    std::fprintf(stderr, "bad sizes or counts\n");
    std::exit(2);
  }
  if (o.nranks > 0 && (o.rank < 0 || o.rank >= o.nranks || o.idFile.empty())) {
    std::fprintf(stderr, "--nranks needs --rank in [0, nranks) and --id-file\n");
    std::exit(2);
  }
  return o;
}

// exchangeId: rank 0 makes the id and writes it to path (through a rename, so no reader sees
// half of it); the others wait up to two minutes for the file.
static ncclUniqueId exchangeId(const Options& o) {
  ncclUniqueId id;
  if (o.rank == 0) {
    NCCL(nc.GetUniqueId(&id));
    std::string tmp = o.idFile + ".tmp";
    std::ofstream(tmp, std::ios::binary).write(id.internal, sizeof id.internal);
    if (std::rename(tmp.c_str(), o.idFile.c_str()) != 0) {
      std::perror("rename id file");
      std::exit(1);
    }
    return id;
  }
  for (int i = 0; i < 1200; i++) {
    std::ifstream f(o.idFile, std::ios::binary);
    if (f && f.read(id.internal, sizeof id.internal)) return id;
    usleep(100000);
  }
  std::fprintf(stderr, "no id in %s after two minutes\n", o.idFile.c_str());
  std::exit(1);
}

int main(int argc, char** argv) {
  Options o = parse(argc, argv);
  std::string ncclLoaded;
  load(o.cudartPath, o.ncclPath, &ncclLoaded);
  int version = 0, ndev = 0;
  NCCL(nc.GetVersion(&version));
  CUDA(cu.GetDeviceCount(&ndev));

  if (o.nranks > 0) {  // one rank per process
    Part p;
    p.rank = o.rank;
    p.dev = o.device >= 0 ? o.device : o.rank;
    char bus[32] = "";
    CUDA(cu.DeviceGetPCIBusId(bus, sizeof bus, p.dev));
    if (o.rank == 0)
      std::printf("# allreduce.cpp: processes, %d ranks; nccl %d from %s\n", o.nranks, version, ncclLoaded.c_str());
    std::fprintf(stderr, "# rank %d on device %d (%s)\n", o.rank, p.dev, bus);
    setup(p, o.maxBytes);
    ncclUniqueId id = exchangeId(o);
    NCCL(nc.CommInitRank(&p.comm, o.nranks, id, o.rank));
    int status = measure(o, {&p}, o.nranks, nullptr, o.rank == 0);
    NCCL(nc.CommDestroy(p.comm));
    if (o.rank == 0) std::remove(o.idFile.c_str());
    return status;
  }

  int n = o.gpus > 0 ? o.gpus : ndev;
  if (n < 1 || n > ndev) {
    std::fprintf(stderr, "--gpus %d: this host has %d\n", n, ndev);
    return 2;
  }
  std::printf("# allreduce.cpp: %s, %d GPUs; nccl %d from %s\n", o.threads ? "one thread per GPU" : "one thread, grouped",
              n, version, ncclLoaded.c_str());
  for (int d = 0; d < n; d++) {
    char bus[32] = "";
    CUDA(cu.DeviceGetPCIBusId(bus, sizeof bus, d));
    std::printf("#  rank %d device %d %s\n", d, d, bus);
  }
  std::vector<Part> parts(n);
  for (int d = 0; d < n; d++) {
    parts[d].dev = d;
    parts[d].rank = d;
    setup(parts[d], o.maxBytes);
  }
  int status = 0;
  if (!o.threads) {
    std::vector<ncclComm_t> comms(n);
    std::vector<int> devs(n);
    for (int d = 0; d < n; d++) devs[d] = d;
    NCCL(nc.CommInitAll(comms.data(), n, devs.data()));
    std::vector<Part*> all;
    for (int d = 0; d < n; d++) {
      parts[d].comm = comms[d];
      all.push_back(&parts[d]);
    }
    status = measure(o, all, n, nullptr, true);
  } else {
    ncclUniqueId id;
    NCCL(nc.GetUniqueId(&id));
    Barrier bar(n);
    std::vector<int> st(n);
    std::vector<std::thread> ts;
    for (int d = 0; d < n; d++) {
      ts.emplace_back([&, d] {
        CUDA(cu.SetDevice(d));
        NCCL(nc.CommInitRank(&parts[d].comm, n, id, d));
        st[d] = measure(o, {&parts[d]}, n, &bar, d == 0);
      });
    }
    for (auto& t : ts) t.join();
    for (int s : st) status |= s;
  }
  for (auto& p : parts) NCCL(nc.CommDestroy(p.comm));
  return status;
}
