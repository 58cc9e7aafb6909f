#!/usr/bin/env bash
# Runs NVIDIA's simpleCallback and this port side by side, on a machine with GPUs and nvcc
# (no network, no Go needed), and prints both outputs.
#
#   compare.sh NVIDIA_DIR GO_BINARY
#
# NVIDIA_DIR holds cuda-samples' Samples/0_Introduction/simpleCallback/simpleCallback.cu,
# multithreading.h and multithreading.cpp, and the Common/ headers they include, directly or
# in a Common/ subfolder: helper_cuda.h, helper_string.h, helper_functions.h, exception.h,
# helper_image.h, helper_timer.h.
# GO_BINARY is this example built for the target (CGO_ENABLED=0 go build ./examples/simplecallback).
# RUNS (default 3) is how many times each program runs.
#
# The sample times nothing: both should print the same lines (the port adds one line per GPU
# naming its backend) and end with Success.
set -euo pipefail

if [[ $# -ne 2 ]]; then
  echo "usage: $0 NVIDIA_DIR GO_BINARY" >&2
  exit 2
fi
src=$(cd "$1" && pwd)
gobin=$2
runs=${RUNS:-3}

for f in simpleCallback.cu multithreading.h multithreading.cpp; do
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

# The flags of the sample's CMakeLists.txt (separable compilation, -lineinfo), for this GPU.
echo "== building NVIDIA's simpleCallback: nvcc -O3 -rdc=true -lineinfo -arch=native"
nvcc -O3 -rdc=true -lineinfo -arch=native -std=c++17 -I"$src" -I"$src/Common" -o "$build/simpleCallback" \
  "$src/simpleCallback.cu" "$src/multithreading.cpp" -lpthread

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

run "NVIDIA simpleCallback" "$build/simpleCallback"
run "gpuactor simplecallback" "$gobin" -backend cuda
