#!/usr/bin/env bash
# Runs NVIDIA's simpleP2P and this port side by side, on a machine with GPUs and nvcc (no
# network, no Go needed), and prints both outputs.
#
#   compare.sh NVIDIA_DIR GO_BINARY
#
# NVIDIA_DIR holds cuda-samples' Samples/0_Introduction/simpleP2P/simpleP2P.cu and the Common/
# headers it includes, directly or in a Common/ subfolder: helper_cuda.h, helper_string.h,
# helper_functions.h, exception.h, helper_image.h, helper_timer.h.
# GO_BINARY is this example built for the target (CGO_ENABLED=0 go build ./examples/simplep2p).
# RUNS (default 3) is how many times each program runs: the first run of each pays for cold
# caches, so compare the later ones.
#
# Both programs print the same lines; only the bandwidth differs. On a machine with fewer than
# two GPUs, or none with peer access, both print the waiver lines and exit with status 2.
set -euo pipefail

if [[ $# -ne 2 ]]; then
  echo "usage: $0 NVIDIA_DIR GO_BINARY" >&2
  exit 2
fi
src=$(cd "$1" && pwd)
gobin=$2
runs=${RUNS:-3}

[[ -f $src/simpleP2P.cu ]] || { echo "missing $src/simpleP2P.cu" >&2; exit 2; }
for f in helper_cuda.h helper_string.h helper_functions.h exception.h helper_image.h helper_timer.h; do
  [[ -f $src/$f || -f $src/Common/$f ]] || { echo "missing $f in $src or $src/Common" >&2; exit 2; }
done
[[ -x $gobin ]] || { echo "not an executable: $gobin" >&2; exit 2; }

build=$(mktemp -d)
trap 'rm -rf "$build"' EXIT

echo "== machine"
nvidia-smi --query-gpu=index,name,driver_version,pci.bus_id --format=csv,noheader
nvidia-smi topo -m || true
nvcc --version | tail -n 2

echo "== building NVIDIA's simpleP2P: nvcc -O3 -arch=native"
nvcc -O3 -arch=native -std=c++17 -I"$src" -I"$src/Common" -o "$build/simpleP2P" "$src/simpleP2P.cu"

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

run "NVIDIA simpleP2P" "$build/simpleP2P"
run "gpuactor simplep2p" "$gobin" -backend cuda
