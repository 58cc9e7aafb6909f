#!/bin/bash
# One GPU-host session: the whole test suite, the examples, the benchmark suite side by side
# with the C++ baseline and the Python peers (results saved under $OUT/results), and the
# testing.B benchmarks of the actor and the binding. Run from the repo root after
# ../shared/tools/gpu-pack, with .gpu carried.
set -uo pipefail
out=${OUT:-/tmp/gpuactor-out}; mkdir -p "$out"
log="$out/log.txt"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$log"
bash .gpu/run.sh -test.v > /dev/null 2>&1; echo "tests rc=$?" | tee -a "$log"   # full log: $out/gpu-tests.log
grep -E "^(--- FAIL|FAIL|gpu-pack run)" "$out/gpu-tests.log" | tail -20
export GPUACTOR_BACKEND=cuda
{ .gpu/bin/devicequery; .gpu/bin/saxpy -goroutines 64 -n 1048576 -rounds 10; } >> "$log" 2>&1
echo "examples rc=$?"; tail -3 "$log"
nvcc -O2 -std=c++17 -arch=sm_90 -o /tmp/launchpaths bench/cbaseline/launchpaths.cu && /tmp/launchpaths >> "$log" 2>&1
.gpu/bin/bench -backend cuda -save -out "$out/results" ${SUITE_ARGS:-} 2>> "$log"
echo "suite rc=$?"
{ (cd bench && ../.gpu/tests/bench.test -test.run '^$' -test.bench 'Direct|RoundTrip|MemInfo|MallocFree|Host' -test.count 3)
  (cd internal/cudart && ../../.gpu/tests/internal_cudart.test -test.run '^$' -test.bench 'LaunchEmptyPaths|StreamQuery' -test.count 3)
  (cd actor && ../.gpu/tests/actor.test -test.run '^$' -test.bench 'RoundTrip$|Pipelined|Naive' -test.count 3)
} >> "$log" 2>&1
grep -E "^cpp launch path" "$log"
grep -E "^Benchmark" "$log" | awk '{print $1, $3, $4, $5, $6}'
