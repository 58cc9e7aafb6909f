// kernorigin.cu: does where a graph's kernel comes from change what launching the graph costs?
// A one-node graph of an empty kernel four ways: static (compiled into this program, added by
// function pointer, as suite.cu does); libfn (NVRTC cubin through cudaLibraryLoadData, added
// with cuGraphAddKernelNode and cuKernelGetFunction's CUfunction, as gpuactor does); libk (the
// same cudaKernel_t through cudaGraphAddKernelNode); mod (cuModuleLoadData and
// cuModuleGetFunction). One stream, the ways rotating round by round; prints the median
// µs/launch of 100 launches then a synchronize, and the median ratio to static.
// H100 (session 11, three runs on two machines): all four within 0.993–1.003×, so gpuactor's
// kernels from NVRTC cost its graph rows nothing against the C++ baseline's compiled-in one.
// Build: nvcc -O2 -std=c++17 -arch=sm_90 -o kernorigin kernorigin.cu -lnvrtc -lcuda
#include "chain.h"

#include <cuda.h>
#include <nvrtc.h>

#define CKD(x) do { int e_ = static_cast<int>(x); if (e_ != 0) { std::printf("%s: error %d\n", #x, e_); std::exit(1); } } while (0)

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 2000;
  CK(cudaSetDevice(0));
  CK(cudaFree(nullptr));
  const char* src = "extern \"C\" __global__ void empty_k() {}";
  nvrtcProgram prog;
  CKD(nvrtcCreateProgram(&prog, src, "empty_k.cu", 0, nullptr, nullptr));
  const char* opts[] = {"--gpu-architecture=sm_90"};
  CKD(nvrtcCompileProgram(prog, 1, opts));
  size_t size;
  CKD(nvrtcGetCUBINSize(prog, &size));
  std::vector<char> cubin(size);
  CKD(nvrtcGetCUBIN(prog, cubin.data()));
  cudaLibrary_t lib;
  CK(cudaLibraryLoadData(&lib, cubin.data(), nullptr, nullptr, 0, nullptr, nullptr, 0));
  cudaKernel_t k;
  CK(cudaLibraryGetKernel(&k, lib, "empty_k"));
  CUfunction libFn, modFn;
  CKD(cuKernelGetFunction(&libFn, reinterpret_cast<CUkernel>(k)));
  CUmodule mod;
  CKD(cuModuleLoadData(&mod, cubin.data()));
  CKD(cuModuleGetFunction(&modFn, mod, "empty_k"));
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));

  enum { kStatic, kLibFn, kLibKernel, kModule, kWays };
  const char* names[kWays] = {"static", "libfn", "libk", "mod"};
  cudaGraphExec_t x[kWays];
  x[kStatic] = chain(1);
  for (int w = kLibFn; w < kWays; w++) {
    cudaGraph_t g;
    CK(cudaGraphCreate(&g, 0));
    cudaGraphNode_t node;
    if (w == kLibKernel) {
      cudaKernelNodeParams p = {};
      p.func = reinterpret_cast<void*>(k);
      p.gridDim = dim3(1);
      p.blockDim = dim3(1);
      CK(cudaGraphAddKernelNode(&node, g, nullptr, 0, &p));
    } else {
      CUDA_KERNEL_NODE_PARAMS p = {};
      p.func = w == kLibFn ? libFn : modFn;
      p.gridDimX = p.gridDimY = p.gridDimZ = 1;
      p.blockDimX = p.blockDimY = p.blockDimZ = 1;
      CKD(cuGraphAddKernelNode(reinterpret_cast<CUgraphNode*>(&node), reinterpret_cast<CUgraph>(g), nullptr, 0, &p));
    }
    CK(cudaGraphInstantiateWithFlags(&x[w], g, 0));
    CK(cudaGraphDestroy(g));
  }
  for (auto xw : x) {
    CK(cudaGraphLaunch(xw, s));
    CK(cudaStreamSynchronize(s));
  }
  std::vector<double> all[kWays], ratio[kWays];
  for (int r = 0; r < rounds; r++) {
    double t[kWays];
    for (int j = 0; j < kWays; j++) {
      const int w = (r + j) % kWays;
      auto t0 = clk::now();
      for (int i = 0; i < 100; i++) CK(cudaGraphLaunch(x[w], s));
      CK(cudaStreamSynchronize(s));
      t[w] = micros(t0, clk::now()) / 100;
    }
    if (r > 0)
      for (int w = 0; w < kWays; w++) {
        all[w].push_back(t[w]);
        ratio[w].push_back(t[w] / t[kStatic]);
      }
  }
  std::printf("%d rounds, one stream\n", rounds);
  for (int w = 0; w < kWays; w++)
    std::printf("%-7s %.3f us/launch, x static %.3f\n", names[w], median(all[w]), median(ratio[w]));
  return 0;
}
