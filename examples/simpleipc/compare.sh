#!/usr/bin/env bash
# Runs NVIDIA's simpleIPC and this port side by side, on a machine with GPUs and nvcc, and
# prints both outputs.
#
#   compare.sh NVIDIA_DIR GO_BINARY
#
# NVIDIA_DIR holds cuda-samples' Samples/0_Introduction/simpleIPC/simpleIPC.cu and the Common/
# files it uses (helper_cuda.h, helper_string.h, helper_multiprocess.h, helper_multiprocess.cpp),
# directly or in a Common/ subfolder. GO_BINARY is this example built for the target
# (CGO_ENABLED=0 go build ./examples/simpleipc). RUNS (default 3) is how many times each runs.
set -euo pipefail

if [[ $# -ne 2 ]]; then
  echo "usage: $0 NVIDIA_DIR GO_BINARY" >&2
  exit 2
fi
src=$(cd "$1" && pwd)
gobin=$2
runs=${RUNS:-3}
[[ -f $src/simpleIPC.cu ]] || { echo "missing $src/simpleIPC.cu" >&2; exit 2; }
for f in helper_cuda.h helper_string.h helper_multiprocess.h helper_multiprocess.cpp; do
  [[ -f $src/$f || -f $src/Common/$f ]] || { echo "missing $f in $src or $src/Common" >&2; exit 2; }
done
[[ -x $gobin ]] || { echo "not an executable: $gobin" >&2; exit 2; }
mp=$src/helper_multiprocess.cpp
[[ -f $mp ]] || mp=$src/Common/helper_multiprocess.cpp

build=$(mktemp -d)
trap 'rm -rf "$build"' EXIT

echo "== machine"
nvidia-smi --query-gpu=index,name,driver_version,pci.bus_id --format=csv,noheader
nvcc --version | tail -n 2

echo "== building NVIDIA's simpleIPC: nvcc -O3 -arch=native"
nvcc -O3 -arch=native -std=c++17 -I"$src" -I"$src/Common" -o "$build/simpleIPC" "$src/simpleIPC.cu" "$mp" -lrt

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

run "NVIDIA simpleIPC" "$build/simpleIPC"
run "gpuactor simpleipc" "$gobin" -backend cuda
