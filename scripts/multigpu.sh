#!/bin/bash
# The runs of a host of several GPUs, one step a call, each within ten minutes:
#
#   scripts/multigpu.sh suite     every packed test binary with GPUACTOR_REQUIRE_GPU=1
#   scripts/multigpu.sh bench     the fan-out, isolated and peer rows, -rounds 5, against C++
#   scripts/multigpu.sh compare   the multi-GPU sample ports beside NVIDIA's samples
#
# It runs from a checkout holding .gpu/ (the test binaries and main packages cross-built and
# packed: ../shared/tools/gpu-pack) and, for compare, .samples/ (cuda-samples' Common/ and the
# ported samples' folders, at the tag the ports follow). What it writes goes to $OUT (default
# /tmp/multigpu), at most a few files, the long ones compressed.
set -o pipefail
cd "$(dirname "$0")/.."
out=${OUT:-/tmp/multigpu}
mkdir -p "$out"
bash .gpu/unpack.sh >/dev/null

case "$1" in
suite)
  { nvidia-smi -L; nvidia-smi topo -m; } > "$out/gpus.txt" 2>&1
  start=$(date +%s)
  OUT="$out" timeout "${LIMIT:-560}" bash .gpu/run.sh -test.v > /dev/null 2>&1
  rc=$?
  log="$out/gpu-tests.log"
  {
    echo "suite rc=$rc in $(( $(date +%s) - start )) s on $(nvidia-smi -L | wc -l) GPUs"
    echo "top-level PASS $(grep -c -- '^--- PASS' "$log") FAIL $(grep -c -- '--- FAIL' "$log") SKIP $(grep -c -- '--- SKIP' "$log")"
    grep -E -- '--- FAIL|^(FAIL|ok)\b|panic:' "$log" | tail -60
    echo "--- skips"; grep -A2 -- '--- SKIP' "$log" | head -60
    echo "--- device pairs the pairwise tests ran on the GPUs (subtests cuda/I-J)"
    grep -oE -- '--- PASS: [A-Za-z]+/cuda/[0-9]+-[0-9]+' "$log" | sed 's/--- PASS: //; s|/cuda/.*||' | sort | uniq -c
  } > "$out/summary.txt"
  cat "$out/summary.txt"
  xz -9 -f "$log"
  ;;
bench)
  rows=launch_roundtrip,group_roundtrip,group_submit_roundtrip,group_jobs_1,group_jobs_2,group_jobs_4,group_jobs_8,group_jobs_all,group_tail,isolated_group_jobs_all,isolated_group_tail,peer_copy
  timeout "${LIMIT:-560}" .gpu/bin/bench -backend cuda -rounds "${ROUNDS:-5}" -repeat "${REPEAT:-21}" -peers=false -scenarios "$rows" \
    -save -out "$out/results" > "$out/bench-table.txt" 2> "$out/bench.err"
  echo "bench rc=$?"
  cat "$out/bench-table.txt"; tail -20 "$out/bench.err"
  xz -9 -f "$out/bench.err"
  ;;
compare)
  { nvidia-smi -L; nvidia-smi topo -m; } > "$out/gpus.txt" 2>&1
  timeout "${LIMIT:-560}" .gpu/bin/compare -samples .samples -bin .gpu/bin -runs "${RUNS:-5}" \
    -only "${PORTS:-p2pbandwidthlatency,simplep2p,simplemultigpu,simpleipc}" -keep "$out/compare" -out "$out/compare.md" 2> "$out/compare.err"
  echo "compare rc=$?"
  cat "$out/compare.md"; tail -5 "$out/compare.err"
  (cd "$out" && tar -cJf compare-runs.tar.xz compare compare.err && rm -rf compare compare.err)
  ;;
*)
  echo "usage: $0 suite|bench|compare" >&2
  exit 2
  ;;
esac
