#!/bin/bash
# One GPU-host session for the foundation: tests, examples, C++ baseline and Go benchmarks.
# Run on the GPU host from the repo root after ../shared/tools/gpu-pack, with .gpu carried.
set -uo pipefail
out=${OUT:-/tmp/gpuactor-out}; mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$out/gpu.txt"
bash .gpu/run.sh -test.v > "$out/tests.log" 2>&1; echo "tests rc=$?" | tee -a "$out/gpu.txt"
grep -E "^(--- FAIL|FAIL|ok|PASS|gpu-pack run)" "$out/tests.log" | tail -20
export GPUACTOR_BACKEND=cuda
{ .gpu/bin/devicequery; .gpu/bin/saxpy -goroutines 64 -n 1048576 -rounds 10; } > "$out/examples.txt" 2>&1
echo "examples rc=$?"; tail -4 "$out/examples.txt"
nvcc -O2 -arch=sm_90 -o /tmp/launch bench/cbaseline/launch.cu && /tmp/launch | tee "$out/cpp.txt"
(cd bench && ../.gpu/tests/bench.test -test.run '^$' -test.bench . -test.benchtime 1s -test.count 5) > "$out/bench.txt" 2>&1
(cd internal/cudart && ../../.gpu/tests/internal_cudart.test -test.run '^$' -test.bench . -test.count 3) >> "$out/bench.txt" 2>&1
/tmp/launch | tee -a "$out/cpp.txt"
(cd actor && ../.gpu/tests/actor.test -test.run "^$" -test.bench . -test.count 3) >> "$out/bench.txt" 2>&1
grep -E "cuda|Direct|Host|StreamQuery|^Benchmark(RoundTrip|Pipelined|Naive)-" "$out/bench.txt" | awk "{print \$1, \$3, \$4, \$5, \$6}" | head -90
