#!/usr/bin/env bash
# Runs NVIDIA's simpleMultiGPU and this port side by side, on a machine with GPUs and nvcc
# (no network, no Go needed), and prints both outputs.
#
#   compare.sh NVIDIA_DIR GO_BINARY
#
# NVIDIA_DIR holds cuda-samples' Samples/0_Introduction/simpleMultiGPU/simpleMultiGPU.{cu,h}
# and the Common/ headers they include, directly or in a Common/ subfolder: helper_cuda.h,
# helper_string.h, helper_functions.h, exception.h, helper_image.h, helper_timer.h.
# GO_BINARY is this example built for the target (CGO_ENABLED=0 go build ./examples/simplemultigpu).
# RUNS (default 3) is how many times each program runs: the first run of each pays for cold
# caches, so compare the later ones.
#
# Both programs sum the same input (glibc's unseeded rand()) in the same order, so the sums
# should print identically; only the times differ. The C sample's timer also covers loading its
# kernel, which CUDA loads lazily on the first launch (CUDA_MODULE_LOADING=LAZY, the default
# since 12.2), while the port compiles and loads its kernel before timing: the C sample runs a
# second time with CUDA_MODULE_LOADING=EAGER, which moves that load out of its timer as well.
set -euo pipefail

if [[ $# -ne 2 ]]; then
  echo "usage: $0 NVIDIA_DIR GO_BINARY" >&2
  exit 2
fi
src=$(cd "$1" && pwd)
gobin=$2
runs=${RUNS:-3}

for f in simpleMultiGPU.cu simpleMultiGPU.h; do
  [[ -f $src/$f ]] || { echo "missing $src/$f" >&2; exit 2; }
done
for f in helper_cuda.h helper_string.h helper_functions.h exception.h helper_image.h helper_timer.h; do
  [[ -f $src/$f || -f $src/Common/$f ]] || { echo "missing $f in $src or $src/Common" >&2; exit 2; }
done
[[ -x $gobin ]] || { echo "not an executable: $gobin" >&2; exit 2; }

build=$(mktemp -d)
trap 'rm -rf "$build"' EXIT

echo "== machine"
nvidia-smi --query-gpu=index,name,driver_version,pci.bus_id --format=csv,noheader
nvcc --version | tail -n 2

echo "== building NVIDIA's simpleMultiGPU: nvcc -O3 -arch=native"
nvcc -O3 -arch=native -std=c++17 -I"$src" -I"$src/Common" -o "$build/simpleMultiGPU" "$src/simpleMultiGPU.cu"

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

run "NVIDIA simpleMultiGPU" "$build/simpleMultiGPU"
run "NVIDIA simpleMultiGPU, CUDA_MODULE_LOADING=EAGER" env CUDA_MODULE_LOADING=EAGER "$build/simpleMultiGPU"
run "gpuactor simplemultigpu" "$gobin" -backend cuda
