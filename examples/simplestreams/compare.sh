#!/usr/bin/env bash
# Runs NVIDIA's simpleStreams and this port side by side, on a machine with a GPU and nvcc
# (no network, no Go needed), and prints both outputs.
#
#   compare.sh NVIDIA_DIR GO_BINARY
#
# NVIDIA_DIR holds cuda-samples' Samples/0_Introduction/simpleStreams/simpleStreams.cu and the
# Common/ headers it includes, directly or in a Common/ subfolder: helper_cuda.h,
# helper_string.h, helper_functions.h, exception.h, helper_image.h, helper_timer.h.
# GO_BINARY is this example built for the target (CGO_ENABLED=0 go build ./examples/simplestreams).
# RUNS (default 3) is how many times each program runs: compare the later runs.
#
# Both print the same lines; only the times differ. Each runs with its default host memory
# (the C sample: mmap + cudaHostRegister(Mapped); the port: cudaHostAlloc(Mapped)), then with
# cudaMallocHost's memory (-use_cuda_malloc_host), which both then allocate alike. The C
# sample's "kernel:" time covers loading its kernel, which CUDA loads lazily on the first
# launch (CUDA_MODULE_LOADING=LAZY, the default since 12.2): it runs once more with
# CUDA_MODULE_LOADING=EAGER, and so does the port, whose module may be loaded lazily as well.
set -euo pipefail

if [[ $# -ne 2 ]]; then
  echo "usage: $0 NVIDIA_DIR GO_BINARY" >&2
  exit 2
fi
src=$(cd "$1" && pwd)
gobin=$2
runs=${RUNS:-3}

[[ -f $src/simpleStreams.cu ]] || { echo "missing $src/simpleStreams.cu" >&2; exit 2; }
for f in helper_cuda.h helper_string.h helper_functions.h exception.h helper_image.h helper_timer.h; do
  [[ -f $src/$f || -f $src/Common/$f ]] || { echo "missing $f in $src or $src/Common" >&2; exit 2; }
done
[[ -x $gobin ]] || { echo "not an executable: $gobin" >&2; exit 2; }

build=$(mktemp -d)
trap 'rm -rf "$build"' EXIT

echo "== machine"
nvidia-smi --query-gpu=index,name,driver_version,pci.bus_id --format=csv,noheader
nvcc --version | tail -n 2

# The flags of the sample's CMakeLists.txt (separable compilation, -lineinfo), for this GPU.
echo "== building NVIDIA's simpleStreams: nvcc -O3 -rdc=true -lineinfo -arch=native"
nvcc -O3 -rdc=true -lineinfo -arch=native -std=c++17 -I"$src" -I"$src/Common" -o "$build/simpleStreams" "$src/simpleStreams.cu"

# run NAME CMD...: runs CMD RUNS times, printing its output and exit status each time.
run() {
  local name=$1
  shift
  for i in $(seq "$runs"); do
    echo
    echo "== $name, run $i of $runs"
    local rc=0
    "$@" || rc=$?
    echo "(exit status $rc)"
  done
}

run "NVIDIA simpleStreams" "$build/simpleStreams"
run "gpuactor simplestreams" "$gobin" -backend cuda
run "NVIDIA simpleStreams --use_cuda_malloc_host" "$build/simpleStreams" --use_cuda_malloc_host
run "gpuactor simplestreams -use_cuda_malloc_host" "$gobin" -backend cuda -use_cuda_malloc_host
run "NVIDIA simpleStreams, CUDA_MODULE_LOADING=EAGER" env CUDA_MODULE_LOADING=EAGER "$build/simpleStreams"
run "gpuactor simplestreams, CUDA_MODULE_LOADING=EAGER" env CUDA_MODULE_LOADING=EAGER "$gobin" -backend cuda
