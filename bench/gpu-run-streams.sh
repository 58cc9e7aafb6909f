#!/bin/bash
# A short GPU-host session for the streams work: the GPU-facing test binaries (device,
# internal/cudart, streams), the stream sample ports, and the suite's stream, staging and
# reference rows beside the C++ baseline. Pack first (../shared/tools/gpu-pack); to stay under
# the 64 MiB carry limit, .gpu may hold just those test binaries and bin/{bench,simplestreams,
# asyncapi,simplecallback}.
set -uo pipefail
out=${OUT:-/tmp/gpuactor-out}; mkdir -p "$out"
log="$out/log.txt"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$log"
# What noticing GPU progress costs, in C++ (trackcost.cu).
nvcc -O2 -o /tmp/trackcost bench/cbaseline/trackcost.cu -lcuda && /tmp/trackcost | tee "$out/trackcost.txt" | tee -a "$log"
bash .gpu/run.sh -test.v > /dev/null 2>&1; echo "tests rc=$?" | tee -a "$log"
grep -E "^(--- FAIL|FAIL|gpu-pack run)" "$out/gpu-tests.log" | tail -20
export GPUACTOR_BACKEND=cuda
for ex in simplestreams asyncapi simplecallback; do
  .gpu/bin/$ex >> "$log" 2>&1; echo "$ex rc=$?" | tee -a "$log"
done
.gpu/bin/bench -backend cuda -save -out "$out/results" -peers=false -repeat 7 -sizes 1M,16M,256M \
  -scenarios launch_enqueue,launch_pipelined_8,launch_roundtrip,h2d_async_64B,h2d_pinned,d2h_pinned,h2d_staged,d2h_staged,stream_launch,stream_launch_8,stream_h2d_async_64B \
  2>> "$log"
echo "suite rc=$?"
