#!/usr/bin/env bash
# Runs NVIDIA's graphMemoryNodes and this port side by side, on a machine with a GPU and nvcc
# (no network, no Go needed), and prints both outputs.
#
#   compare.sh NVIDIA_DIR GO_BINARY
#
# NVIDIA_DIR holds cuda-samples' Samples/3_CUDA_Features/graphMemoryNodes/graphMemoryNodes.cu
# and the Common/ headers it includes, directly or in a Common/ subfolder: helper_cuda.h,
# helper_string.h, helper_functions.h, exception.h, helper_image.h, helper_timer.h.
# GO_BINARY is this example built for the target (CGO_ENABLED=0 go build ./examples/graphmemorynodes).
# RUNS (default 1) is how many times each program runs.
#
# Nothing is timed. Both print the same lines, the port one more (the device it runs on) and
# PASS at the end; on a GPU both should print "Check verified that d_negSquare and d_input
# share a virtual address." in the explicit-graph variants. The C sample exits 0 even when a
# check prints "Validation FAILURE!"; the port exits 1.
set -euo pipefail

if [[ $# -ne 2 ]]; then
  echo "usage: $0 NVIDIA_DIR GO_BINARY" >&2
  exit 2
fi
src=$(cd "$1" && pwd)
gobin=$2
runs=${RUNS:-1}

[[ -f $src/graphMemoryNodes.cu ]] || { echo "missing $src/graphMemoryNodes.cu" >&2; exit 2; }
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
echo "== building NVIDIA's graphMemoryNodes: nvcc -O3 -rdc=true -lineinfo -arch=native"
nvcc -O3 -rdc=true -lineinfo -arch=native -std=c++17 -I"$src" -I"$src/Common" -o "$build/graphMemoryNodes" "$src/graphMemoryNodes.cu"

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

run "NVIDIA graphMemoryNodes" "$build/graphMemoryNodes"
run "gpuactor graphmemorynodes" "$gobin" -backend cuda
