#!/usr/bin/env bash
# The project's test command (the README's second command; .ci/run runs exactly this).
# Installs what the tests need (Debian's CUDA 11.8 runtime and NVRTC, so the binding's loader,
# versions, error mapping and NVRTC compiles run against a real libcudart even without a GPU,
# and staticcheck), then checks formatting, vet and staticcheck, and runs the tests twice: with
# the race detector (cgo on) and with CGO_ENABLED=0, the way users cross-compile. The library,
# the benchmark suite (bench/, a module of its own) and the consumer module (internal/consumer,
# which uses gpuactor as an outside module would) and the Prometheus collector (contrib/prometheus)
# are each checked.
set -euo pipefail
cd "$(dirname "$0")/.."

have_cuda_libs() { ldconfig -p | grep -q 'libcudart.so.11.0' && ldconfig -p | grep -q 'libnvrtc.so.11.2'; }

if ! have_cuda_libs; then
  if [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null; then
    echo "== installing libcudart11.0 and libnvrtc11.2 (bookworm contrib non-free)"
    src=/etc/apt/sources.list.d/debian.sources
    if [[ -f $src ]] && ! grep -q 'non-free' "$src"; then
      sed -i '0,/^Components: main$/s//Components: main contrib non-free/' "$src"
    elif [[ ! -f $src ]]; then
      echo 'deb http://deb.debian.org/debian bookworm main contrib non-free' > /etc/apt/sources.list.d/gpuactor-nonfree.list
    fi
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libcudart11.0 libnvrtc11.2 </dev/null >/dev/null
  else
    echo "== CUDA 11.8 runtime not installed and cannot install it (not root): binding tests will skip"
  fi
fi
if have_cuda_libs; then
  export GPUACTOR_REQUIRE_CUDART=1 # the binding's no-GPU tests must run, not skip
fi

modules=(. bench internal/consumer contrib/prometheus)

echo "== staticcheck (installing it when missing)"
staticcheck_version=v0.8.2
gobin=$(go env GOBIN)
[[ -n $gobin ]] || gobin=$(go env GOPATH)/bin
if ! "$gobin/staticcheck" -version 2>/dev/null | grep -q "${staticcheck_version#v}"; then
  go install "honnef.co/go/tools/cmd/staticcheck@$staticcheck_version"
fi

echo "== gofmt"
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
if [[ -n $unformatted ]]; then echo "gofmt would change: $unformatted"; exit 1; fi
for m in "${modules[@]}"; do
  echo "== go vet, staticcheck: $m"
  (cd "$m" && go vet ./... && "$gobin/staticcheck" ./...)
done
echo "== examples on the simulator"
CGO_ENABLED=0 go run ./examples/saxpy -backend sim -goroutines 8 -n 4096 -rounds 2
CGO_ENABLED=0 go run ./examples/devicequery -backend sim >/dev/null
CGO_ENABLED=0 go run ./examples/service -backend sim -load -clients 8 -duration 1s -cancel 0.1 -park >/dev/null
CGO_ENABLED=0 go run ./examples/fanout -sim 4 -jobs 300 -n 4096 -park >/dev/null
echo "== benchmark suite smoke on the simulator"
(cd bench && CGO_ENABLED=0 go run . -backend sim -repeat 2 -sizes 4K,64K >/dev/null)
for m in "${modules[@]}"; do
  echo "== go test -race (cgo): $m"
  (cd "$m" && CGO_ENABLED=1 go test -race -count=1 -timeout 20m ./...)
  echo "== go test (CGO_ENABLED=0): $m"
  (cd "$m" && CGO_ENABLED=0 go test -count=1 -timeout 20m ./...)
done
