#!/usr/bin/env bash
# Runs NVIDIA's simpleCudaGraphs and this port side by side, on a machine with a GPU and nvcc
# (no network, no Go needed), prints both outputs, and diffs them.
#
#   compare.sh NVIDIA_DIR GO_BINARY
#
# NVIDIA_DIR holds cuda-samples' Samples/3_CUDA_Features/simpleCudaGraphs/simpleCudaGraphs.cu
# and the Common/ headers it includes, directly or in a Common/ subfolder: helper_cuda.h,
# helper_string.h, helper_functions.h, exception.h, helper_image.h, helper_timer.h
# (cooperative_groups.h comes with the CUDA toolkit). GO_BINARY is this example built for the
# target (CGO_ENABLED=0 go build ./examples/simplecudagraphs).
# RUNS (default 2) is how many times each program runs.
#
# The sample times nothing. Both sum the same input (glibc's unseeded rand()) with the same
# additions in the same order, so they print the same node counts and the same sums
# (0.996214); the port adds the line naming its device and backend and a final PASS.
set -euo pipefail

if [[ $# -ne 2 ]]; then
  echo "usage: $0 NVIDIA_DIR GO_BINARY" >&2
  exit 2
fi
src=$(cd "$1" && pwd)
gobin=$2
runs=${RUNS:-2}

[[ -f $src/simpleCudaGraphs.cu ]] || { echo "missing $src/simpleCudaGraphs.cu" >&2; exit 2; }
for f in helper_cuda.h helper_string.h helper_functions.h exception.h helper_image.h helper_timer.h; do
  [[ -f $src/$f || -f $src/Common/$f ]] || { echo "missing $f in $src or $src/Common" >&2; exit 2; }
done
[[ -x $gobin ]] || { echo "not an executable: $gobin" >&2; exit 2; }

build=$(mktemp -d)
trap 'rm -rf "$build"' EXIT

echo "== machine"
nvidia-smi --query-gpu=index,name,driver_version,pci.bus_id --format=csv,noheader
nvcc --version | tail -n 2

# The flags of the sample's CMakeLists.txt (separable compilation, -lineinfo, extended
# lambdas, C++17), for this GPU.
echo "== building NVIDIA's simpleCudaGraphs: nvcc -O3 -rdc=true -lineinfo --extended-lambda -arch=native"
nvcc -O3 -rdc=true -lineinfo --extended-lambda -arch=native -std=c++17 -I"$src" -I"$src/Common" \
  -o "$build/simpleCudaGraphs" "$src/simpleCudaGraphs.cu"

# run NAME OUTFILE CMD...: runs CMD RUNS times, printing its output and exit status each time;
# OUTFILE keeps the last run's output.
run() {
  local name=$1 out=$2
  shift 2
  for i in $(seq "$runs"); do
    echo
    echo "== $name, run $i of $runs"
    local rc=0
    "$@" >"$out" 2>&1 || rc=$?
    cat "$out"
    echo "(exit status $rc)"
  done
}

run "NVIDIA simpleCudaGraphs" "$build/c.out" "$build/simpleCudaGraphs"
run "gpuactor simplecudagraphs" "$build/go.out" "$gobin" -backend cuda

echo
echo "== diff of the last runs' lines (the port's device line and PASS left out)"
if diff "$build/c.out" <(grep -v -E '^(device [0-9]+: .* backend\)|PASS)$' "$build/go.out"); then
  echo "same lines"
fi
