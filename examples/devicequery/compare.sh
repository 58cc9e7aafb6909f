#!/usr/bin/env bash
# Runs NVIDIA's deviceQuery and this port side by side, on a machine with GPUs and nvcc (no
# network, no Go needed), prints both outputs, and diffs them.
#
#   compare.sh NVIDIA_DIR GO_BINARY
#
# NVIDIA_DIR holds cuda-samples' Samples/1_Utilities/deviceQuery/deviceQuery.cpp and the
# Common/ headers it includes, directly or in a Common/ subfolder: helper_cuda.h and
# helper_string.h. GO_BINARY is this example built for the target
# (CGO_ENABLED=0 go build ./examples/devicequery).
#
# Both print the same lines, the first (the program's path) aside: every property of every
# device, the peer-access matrix on a machine of two or more GPUs, the summary line and
# "Result = PASS". The sample's CMakeLists.txt compiles deviceQuery.cpp with the host
# compiler and links it with the CUDA runtime: nvcc does both here.
set -euo pipefail

if [[ $# -ne 2 ]]; then
  echo "usage: $0 NVIDIA_DIR GO_BINARY" >&2
  exit 2
fi
src=$(cd "$1" && pwd)
gobin=$2

[[ -f $src/deviceQuery.cpp ]] || { echo "missing $src/deviceQuery.cpp" >&2; exit 2; }
for f in helper_cuda.h helper_string.h; do
  [[ -f $src/$f || -f $src/Common/$f ]] || { echo "missing $f in $src or $src/Common" >&2; exit 2; }
done
[[ -x $gobin ]] || { echo "not an executable: $gobin" >&2; exit 2; }

build=$(mktemp -d)
trap 'rm -rf "$build"' EXIT

echo "== machine"
nvidia-smi --query-gpu=index,name,driver_version,pci.bus_id --format=csv,noheader
nvcc --version | tail -n 2

echo "== building NVIDIA's deviceQuery: nvcc -O3 -std=c++17"
nvcc -O3 -std=c++17 -I"$src" -I"$src/Common" -o "$build/deviceQuery" "$src/deviceQuery.cpp"

echo
echo "== NVIDIA deviceQuery"
rc=0
"$build/deviceQuery" >"$build/c.out" 2>&1 || rc=$?
cat "$build/c.out"
echo "(exit status $rc)"

echo
echo "== gpuactor devicequery"
rc=0
"$gobin" -backend cuda >"$build/go.out" 2>&1 || rc=$?
cat "$build/go.out"
echo "(exit status $rc)"

echo
echo "== diff (the first line, the program's path, left out)"
if diff <(tail -n +2 "$build/c.out") <(tail -n +2 "$build/go.out"); then
  echo "same lines"
fi
