#!/usr/bin/env bash
# The project's test command (the README's second command; .ci/run runs exactly this).
#
# Installs what the tests need when it is missing: Debian's CUDA 11.8 runtime and NVRTC
# (libcudart11.0, libnvrtc11.2, about 17 MB, when run as root with apt), so the binding's loader,
# versions, error mapping and NVRTC compiles run against a real libcudart even without a GPU;
# and staticcheck (go install). Then, for the library and its five nested modules (bench/,
# contrib/prometheus, contrib/jetstream, internal/consumer, examples/service): gofmt, go vet and staticcheck; the core cross-built and
# vetted for windows/amd64 and darwin/arm64; go test -race (cgo) of every package; the binding
# and a device round trip again with CGO_ENABLED=0, as users build; four examples and a
# benchmark smoke on the simulator.
#
# Quiet on success: one line a step with its time, then go test's closing lines. A failing
# step prints its output (go test's ok lines left out) and the command exits non-zero; every
# step's full output stays in the log folder it names. GPUACTOR_TEST_VERBOSE=1 prints it all.
set -euo pipefail
cd "$(dirname "$0")/.."

logs=$(mktemp -d "${TMPDIR:-/tmp}/gpuactor-test.XXXXXX")
start=$SECONDS

# step NAME CMD...: runs CMD with its output in $logs/NAME.log, then prints NAME and the time it
# took, or, when it fails, its output, and exits.
step() {
  local name=$1; shift
  local log=$logs/$name.log t0=$SECONDS rc
  # A subshell outside any condition, so that set -e holds inside the step's functions.
  set +e
  if [[ ${GPUACTOR_TEST_VERBOSE:-} == 1 ]]; then
    (set -e; "$@") 2>&1 | tee "$log"
    rc=${PIPESTATUS[0]}
  else
    (set -e; "$@") >"$log" 2>&1
    rc=$?
  fi
  set -e
  [[ $rc == 0 ]] || fail "$name" "$log" $((SECONDS - t0))
  printf '== %-44s %4ds\n' "$name" $((SECONDS - t0))
}

# fail NAME LOG SECONDS: prints a failed step's output and exits.
fail() {
  echo "== $1 FAILED after $3s; its output (all steps' logs: $logs):"
  grep -v -E '^ok  |^\?   .*no test files' "$2" || true
  exit 1
}

# parallel NAME... : runs the functions NAME concurrently, each as a step, and waits for all;
# when one fails, the others are stopped (each runs in a process group of its own).
parallel() {
  local pids=() n left=$#
  set -m
  for n in "$@"; do
    (step "$n" "$n") &
    pids+=($!)
  done
  set +m
  while ((left > 0)); do
    if ! wait -n; then
      for n in "${pids[@]}"; do kill -- -"$n" 2>/dev/null || true; done
      wait || true
      exit 1
    fi
    left=$((left - 1))
  done
}

have_cuda_libs() { ldconfig -p | grep -q 'libcudart.so.11.0' && ldconfig -p | grep -q 'libnvrtc.so.11.2'; }

install_cuda_libs() {
  local src=/etc/apt/sources.list.d/debian.sources
  if [[ -f $src ]] && ! grep -q 'non-free' "$src"; then
    sed -i '0,/^Components: main$/s//Components: main contrib non-free/' "$src"
  elif [[ ! -f $src ]]; then
    echo 'deb http://deb.debian.org/debian bookworm main contrib non-free' > /etc/apt/sources.list.d/gpuactor-nonfree.list
  fi
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libcudart11.0 libnvrtc11.2 </dev/null
}

if ! have_cuda_libs; then
  if [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null; then
    step install-cuda-11.8-runtime install_cuda_libs
  else
    echo "== CUDA 11.8 runtime not installed and cannot install it (not root): binding tests will skip"
  fi
fi
if have_cuda_libs; then
  export GPUACTOR_REQUIRE_CUDART=1 # the binding's no-GPU tests must run, not skip
fi

modules=(. bench internal/consumer contrib/prometheus contrib/jetstream examples/service)
staticcheck_version=v0.8.2
gobin=$(go env GOBIN)
[[ -n $gobin ]] || gobin=$(go env GOPATH)/bin

install_staticcheck() {
  "$gobin/staticcheck" -version 2>/dev/null | grep -q "${staticcheck_version#v}" ||
    go install "honnef.co/go/tools/cmd/staticcheck@$staticcheck_version"
}
step install-staticcheck install_staticcheck

gofmt_check() {
  local unformatted
  unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
  [[ -z $unformatted ]] || { echo "gofmt would change: $unformatted"; return 1; }
}
step gofmt gofmt_check

vet_staticcheck() {
  local m
  for m in "${modules[@]}"; do
    echo "--- $m"
    (cd "$m" && go vet ./... && "$gobin/staticcheck" ./...)
  done
}
# The core (examples included) and the Prometheus collector for the platforms users build on but
# this machine cannot run: Windows is only cross-compiled and vetted here.
cross() {
  local goos=$1 goarch=$2 m
  for m in . contrib/prometheus; do
    echo "--- $m"
    (cd "$m" && GOOS=$goos GOARCH=$goarch CGO_ENABLED=0 go build ./... &&
      GOOS=$goos GOARCH=$goarch CGO_ENABLED=0 go vet ./...)
  done
}
cross_windows_amd64() { cross windows amd64; }
cross_darwin_arm64() { cross darwin arm64; }
parallel vet_staticcheck cross_windows_amd64 cross_darwin_arm64

# Every package of every module with the race detector: the behaviour tests.
race_tests() {
  local m
  for m in "${modules[@]}"; do
    (cd "$m" && CGO_ENABLED=1 go test -race -count=1 -timeout 20m ./...)
  done
}
step race_tests race_tests

# What CGO_ENABLED=0 changes is purego's path into C (no runtime/cgo) and the linking: the
# binding's tests against the real libcudart, and a device's copies, launches and bad input,
# are run again that way; the rest of the behaviour is the same code the race run covered.
nocgo_tests() {
  CGO_ENABLED=0 go test -count=1 -timeout 10m ./internal/cudart
  CGO_ENABLED=0 go test -count=1 -timeout 10m -run '^(TestTypedRoundTrips|TestSaxpyKernel|TestBadInput|TestStickyFaultOnSim)$' ./device
}
examples() {
  local bin=$logs/bin
  CGO_ENABLED=0 go build -o "$bin/" ./examples/saxpy ./examples/devicequery ./examples/fanout
  (cd examples/service && CGO_ENABLED=0 go build -o "$bin/" .)
  "$bin/saxpy" -backend sim -goroutines 8 -n 4096 -rounds 2
  "$bin/devicequery" -backend sim
  # The service over two isolated simulated devices, one of them poisoned under load.
  "$bin/service" -sim 2 -load -clients 8 -duration 1s -cancel 0.1 -park -fault poison -fault-after 300ms
  "$bin/fanout" -sim 4 -jobs 300 -n 4096 -park
}
bench_smoke() { (cd bench && CGO_ENABLED=0 go run . -backend sim -repeat 2 -sizes 4K,64K); }
parallel nocgo_tests examples bench_smoke

# go test's closing lines, which CI reads to see that the tests ran.
ok=$(grep -c -E '^ok  ' "$logs/race_tests.log" || true)
none=$(grep -c -E '^\?   .*no test files' "$logs/race_tests.log" || true)
slowest=$(grep -E '^ok  ' "$logs/race_tests.log" | awk '{print $3, $2}' | sort -rn | head -3 |
  awk '{sub(".*/gpuactor/", "", $2); printf "%s%s %s", (NR > 1 ? ", " : ""), $2, $1}')
echo "== all passed in $((SECONDS - start))s: go test -race passed $ok packages ($none without tests); slowest: $slowest"
grep -E '^ok  ' "$logs/nocgo_tests.log"
rm -rf "$logs"
