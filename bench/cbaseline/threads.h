// threads.h: launch_threads_N, N host threads each launching the empty kernel on a stream of
// its own, all at once: the floor for gpuactor's stream_launch_N (N goroutines, a stream
// each). Included after CHECK, seconds_since, median and emit_result, which it uses.
#pragma once
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

// LaunchCrew is n threads that each own a non-blocking stream on the device; run() has every
// thread issue `per` empty launches on its stream and synchronize it, and returns once all
// have. The threads are started once, so that timing a batch does not time their start.
class LaunchCrew {
 public:
  LaunchCrew(int n, int device) : streams_(n) {
    for (int i = 0; i < n; ++i) threads_.emplace_back([this, i, device] { work(i, device); });
    std::unique_lock<std::mutex> l(mu_);
    cv_.wait(l, [&] { return ready_ == static_cast<int>(threads_.size()); });
  }
  ~LaunchCrew() {
    {
      std::lock_guard<std::mutex> l(mu_);
      stop_ = true;
      ++gen_;
    }
    cv_.notify_all();
    for (auto& t : threads_) t.join();
  }

  // run starts a batch of per launches on every thread and returns when every thread has
  // synchronized its stream; the first launch error any thread saw is kept (error()).
  void run(int per) {
    {
      std::lock_guard<std::mutex> l(mu_);
      per_ = per;
      done_ = 0;
      ++gen_;
    }
    cv_.notify_all();
    std::unique_lock<std::mutex> l(mu_);
    cv_.wait(l, [&] { return done_ == static_cast<int>(threads_.size()); });
  }

  cudaError_t error() const { return err_; }

 private:
  void work(int i, int device) {
    CHECK(cudaSetDevice(device));  // the current device is per thread
    CHECK(cudaStreamCreateWithFlags(&streams_[i], cudaStreamNonBlocking));
    cudaStream_t s = streams_[i];
    long seen = 0;
    {
      std::lock_guard<std::mutex> l(mu_);
      ++ready_;
    }
    cv_.notify_all();
    for (;;) {
      int per;
      {
        std::unique_lock<std::mutex> l(mu_);
        cv_.wait(l, [&] { return gen_ != seen; });
        seen = gen_;
        if (stop_) break;
        per = per_;
      }
      for (int k = 0; k < per; ++k) empty<<<1, 1, 0, s>>>();
      cudaError_t e = cudaGetLastError();  // per thread, as launch errors are
      CHECK(cudaStreamSynchronize(s));
      {
        std::lock_guard<std::mutex> l(mu_);
        if (e != cudaSuccess && err_ == cudaSuccess) err_ = e;
        ++done_;
      }
      cv_.notify_all();
    }
    CHECK(cudaStreamDestroy(s));
  }

  std::vector<cudaStream_t> streams_;
  std::vector<std::thread> threads_;
  std::mutex mu_;
  std::condition_variable cv_;
  long gen_ = 0;
  int ready_ = 0, done_ = 0, per_ = 0;
  bool stop_ = false;
  cudaError_t err_ = cudaSuccess;
};

// launch_threads: n threads, a stream each, launch 20000 / n empty kernels each per repeat, as
// gpuactor's stream_launch_N splits its launches over N goroutines; the figure is the batch's
// time over the launches made.
static void launch_threads(const Ctx& c, int n, const char* name) {
  const int kLaunches = 20000;
  const int per = kLaunches / n;
  LaunchCrew crew(n, c.device);
  crew.run(std::max(1000 / n, 1));  // module load, queues warm
  std::vector<double> us;
  for (int r = 0; r < c.repeats; ++r) {
    auto t0 = clk::now();
    crew.run(per);
    us.push_back(seconds_since(t0) / (static_cast<double>(per) * n) * 1e6);
  }
  bool ok = crew.error() == cudaSuccess;
  emit_result(name, -1, "us/launch", median(us), NAN, c.repeats, ok,
              ok ? "" : cudaGetErrorString(crew.error()));
}
