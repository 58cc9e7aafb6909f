#!/usr/bin/env bash
# Runs NVIDIA's streamOrderedAllocation and this port side by side, on a machine with a GPU and
# nvcc (no network, no Go needed), prints both outputs, and diffs them.
#
#   compare.sh NVIDIA_DIR GO_BINARY
#
# NVIDIA_DIR holds cuda-samples' Samples/2_Concepts_and_Techniques/streamOrderedAllocation/
# streamOrderedAllocation.cu and the Common/ headers it includes, directly or in a Common/
# subfolder: helper_cuda.h, helper_string.h, helper_functions.h, exception.h, helper_image.h,
# helper_timer.h. GO_BINARY is this example built for the target
# (CGO_ENABLED=0 go build ./examples/streamorderedallocation).
# RUNS (default 3) is how many times each program runs: compare the later runs.
#
# Both print the same lines; the port adds the line naming its device and backend and a final
# PASS, and only the "Total elapsed time" differs. That time is the GPU's clock between two
# events recorded around 20 iterations, each of which allocates three 4 MiB vectors from the
# pool, copies two from pageable host memory, adds, copies one back to pageable host memory,
# frees them and synchronizes the stream. The C sample's pageable copies go through the CUDA
# driver's staging; the port's (copies of Go slices) through gpuactor's staging pool, which
# splits a copy into chunks copied by several goroutines: the copies are the same, the paths
# are not. The port then runs once more with -compare_malloc, which adds the same loop with
# cudaMalloc/cudaFree (not in the C sample).
set -euo pipefail

if [[ $# -ne 2 ]]; then
  echo "usage: $0 NVIDIA_DIR GO_BINARY" >&2
  exit 2
fi
src=$(cd "$1" && pwd)
gobin=$2
runs=${RUNS:-3}

[[ -f $src/streamOrderedAllocation.cu ]] || { echo "missing $src/streamOrderedAllocation.cu" >&2; exit 2; }
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
echo "== building NVIDIA's streamOrderedAllocation: nvcc -O3 -rdc=true -lineinfo --extended-lambda -arch=native"
nvcc -O3 -rdc=true -lineinfo --extended-lambda -arch=native -std=c++17 -I"$src" -I"$src/Common" \
  -o "$build/streamOrderedAllocation" "$src/streamOrderedAllocation.cu"

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

run "NVIDIA streamOrderedAllocation" "$build/c.out" "$build/streamOrderedAllocation"
run "gpuactor streamorderedallocation" "$build/go.out" "$gobin" -backend cuda
run "gpuactor streamorderedallocation -compare_malloc" "$build/go-malloc.out" "$gobin" -backend cuda -compare_malloc

# The lines, times masked, without the port's own two (its device line and PASS).
echo
echo "== diff of the last runs' lines (times masked; the port's device line and PASS left out)"
mask() { sed -E 's/^Total elapsed time = [0-9.]+ ms/Total elapsed time = T ms/' "$1"; }
if diff <(mask "$build/c.out") <(mask "$build/go.out" | grep -v -E '^(device [0-9]+: .* backend\)|PASS)$'); then
  echo "same lines"
fi
