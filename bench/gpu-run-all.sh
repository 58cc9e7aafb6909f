#!/bin/bash
# A GPU-host session for streams, alloc and graphs: the packed test binaries, the sample ports
# of alloc and graphs, and the suite's stream, staging, allocation and graph rows beside the C++
# baseline. Pack first (../shared/tools/gpu-pack); to stay under the 64 MiB carry limit, .gpu
# may hold just the test binaries of alloc, device, graphs, internal/cudart and streams, and
# bin/{bench,streamorderedallocation,simplecudagraphs,graphmemorynodes}.
set -uo pipefail
out=${OUT:-/tmp/gpuactor-out}; mkdir -p "$out"
log="$out/log.txt"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$log"
bash .gpu/run.sh -test.v > /dev/null 2>&1; echo "tests rc=$?" | tee -a "$log"
grep -E "^(--- FAIL|FAIL|panic|gpu-pack run)" "$out/gpu-tests.log" | head -40 | tee -a "$log"
export GPUACTOR_BACKEND=cuda
for ex in streamorderedallocation simplecudagraphs graphmemorynodes; do
  [[ -x .gpu/bin/$ex ]] || continue
  timeout 120 .gpu/bin/$ex >> "$out/examples.txt" 2>&1; echo "$ex rc=$?" | tee -a "$log"
done
timeout 400 .gpu/bin/bench -backend cuda -save -out "$out/results" -peers=false -repeat 5 -rounds ${ROUNDS:-1} -sizes 1M,16M,256M \
  -scenarios ${SCENARIOS:-launch_enqueue,launch_roundtrip,h2d_async_64B,h2d_pinned,d2h_pinned,h2d_staged,d2h_staged,stream_launch,stream_launch_8,stream_h2d_async_64B,malloc_free,malloc_free_pair,mallocasync_free_pair,mallocasync_free_pair_8,graph_instantiate,graph_launch,graph_node,graph_update_launch,binding_launch_enqueue,binding_h2d_async_64B,binding_graph_node,binding_mallocasync_free_pair} \
  2>> "$log"
echo "suite rc=$?" | tee -a "$log"
