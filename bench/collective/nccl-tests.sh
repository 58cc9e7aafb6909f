#!/usr/bin/env bash
# nccl-tests.sh: NVIDIA's all_reduce_perf and the C++ loop beside it (allreduce.cpp), in one
# run, over the same libnccl, on a GPU host. It builds nccl-tests from a source tree carried
# into the repository root as .nccl-tests/ (ignored by git: the GPU hosts cannot fetch it),
# and allreduce.cpp with g++.
#
#   bench/collective/nccl-tests.sh [GPUS]          GPUS defaults to every local GPU
#
# Environment: NCCL_TESTS_SRC (default <repo>/.nccl-tests), CUDA_HOME (/usr/local/cuda),
# NCCL_HOME (a directory with include/nccl.h and lib/libnccl.so*; else the system's, else
# the pip wheel's beside PyTorch), NVCC_GENCODE (sm_90), OUT (/tmp/gpuactor-nccl), MIN (1M),
# MAX (1G), WARMUP (5), ITERS (20).
#
# What it prints, in order: the library used; all_reduce_perf -g GPUS (one thread, grouped);
# allreduce.cpp the same way, then one thread per GPU; then two processes of one GPU each,
# all_reduce_perf's MPI build if MPI is here (mpirun), and allreduce.cpp's two-process mode.
set -euo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
src=${NCCL_TESTS_SRC:-$repo/.nccl-tests}
out=${OUT:-/tmp/gpuactor-nccl}
cuda=${CUDA_HOME:-/usr/local/cuda}
min=${MIN:-1M} max=${MAX:-1G} warmup=${WARMUP:-5} iters=${ITERS:-20}
mkdir -p "$out"

gpus=${1:-$(nvidia-smi -L | wc -l)}
echo "# $gpus GPU(s):"; { nvidia-smi -L | head -n "$gpus" | sed 's/^/#   /'; } || true
nvidia-smi topo -m 2>/dev/null | sed 's/^/#   /' || true

# NCCL: a home with include/nccl.h and lib/libnccl.so (nccl-tests links -lnccl).
home=$out/nccl-home
mkdir -p "$home/include" "$home/lib"
if [[ -n ${NCCL_HOME:-} ]]; then
  hdr=$NCCL_HOME/include/nccl.h
  lib=$(find "$NCCL_HOME/lib/" -maxdepth 1 -name 'libnccl.so*' | sort | head -n1)
elif [[ -f /usr/include/nccl.h && -e /usr/lib/x86_64-linux-gnu/libnccl.so.2 ]]; then
  hdr=/usr/include/nccl.h lib=/usr/lib/x86_64-linux-gnu/libnccl.so.2
else
  wheel=$(python3 -c 'import nvidia.nccl as m; print(list(m.__path__)[0])' 2>/dev/null || true)
  if [[ -z $wheel || ! -f $wheel/include/nccl.h ]]; then
    echo "no nccl.h: not under NCCL_HOME, /usr/include, or the nvidia-nccl wheel ($wheel)" >&2
    echo "system libnccl: $(ls /usr/lib/x86_64-linux-gnu/libnccl.so* 2>/dev/null | tr '\n' ' ')" >&2
    exit 1
  fi
  hdr=$wheel/include/nccl.h lib=$wheel/lib/libnccl.so.2
fi
ln -sf "$hdr" "$home/include/nccl.h"
ln -sf "$lib" "$home/lib/libnccl.so"
ln -sf "$lib" "$home/lib/libnccl.so.2"
echo "# libnccl: $lib (header $hdr)"
export LD_LIBRARY_PATH=$home/lib:$cuda/lib64:${LD_LIBRARY_PATH:-}

# The C++ loop.
g++ -O2 -std=c++17 -o "$out/allreduce" "$repo/bench/collective/allreduce.cpp" -ldl -lpthread
loop=("$out/allreduce" --nccl "$home/lib/libnccl.so.2" --min "$min" --max "$max" --warmup "$warmup" --iters "$iters")

# nccl-tests, out of tree.
if [[ ! -f $src/src/all_reduce.cu ]]; then
  echo "no nccl-tests source in $src: carry it as .nccl-tests/ (see bench/collective/README.md)" >&2
  exit 1
fi
gencode=${NVCC_GENCODE:--gencode=arch=compute_90,code=sm_90}
make -s -C "$src" -j"$(nproc)" BUILDDIR="$out/nccl-tests" CUDA_HOME="$cuda" NCCL_HOME="$home" \
  NVCC_GENCODE="$gencode" MPI=0 >&2
perf=$out/nccl-tests/all_reduce_perf
mpi=
if command -v mpirun >/dev/null && [[ -n ${MPI_HOME:-} ]]; then
  make -s -C "$src" -j"$(nproc)" BUILDDIR="$out/nccl-tests" CUDA_HOME="$cuda" NCCL_HOME="$home" \
    NVCC_GENCODE="$gencode" MPI=1 MPI_HOME="$MPI_HOME" NAME_SUFFIX=_mpi >&2 && mpi=$out/nccl-tests/all_reduce_perf_mpi
fi

echo; echo "## all_reduce_perf, one process, -g $gpus (one thread, grouped)"
"$perf" -b "$min" -e "$max" -f 2 -g "$gpus" -w "$warmup" -n "$iters" -c 1
echo; echo "## allreduce.cpp, one process, one thread, grouped"
"${loop[@]}" --gpus "$gpus"
echo; echo "## all_reduce_perf, one process, -t $gpus (one thread per GPU)"
"$perf" -b "$min" -e "$max" -f 2 -t "$gpus" -g 1 -w "$warmup" -n "$iters" -c 1
echo; echo "## allreduce.cpp, one process, one thread per GPU"
"${loop[@]}" --gpus "$gpus" --threads

if (( gpus >= 2 )); then
  if [[ -n $mpi ]]; then
    echo; echo "## all_reduce_perf, two processes (mpirun -np 2), one GPU each"
    mpirun --allow-run-as-root -np 2 -x LD_LIBRARY_PATH "$mpi" -b "$min" -e "$max" -f 2 -g 1 -w "$warmup" -n "$iters" -c 1
  else
    echo; echo "## all_reduce_perf, two processes: skipped (no mpirun with MPI_HOME set; nccl-tests needs MPI for processes)"
  fi
  echo; echo "## allreduce.cpp, two processes, one GPU each"
  idf=$out/nccl-id
  rm -f "$idf"
  "${loop[@]}" --nranks 2 --rank 1 --id-file "$idf" >/dev/null &
  peer=$!
  "${loop[@]}" --nranks 2 --rank 0 --id-file "$idf"
  wait "$peer"
fi
