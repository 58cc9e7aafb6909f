#!/bin/bash
# Builds the exporters of interop/testdata/exporter on the GPU host and runs the interop tests
# that import what they export (TestExternal*): memory from the CUDA driver API always, memory
# and a timeline semaphore from Vulkan where a Vulkan loader, its headers and the NVIDIA ICD are
# there. Needs cc, the CUDA headers and libcuda (the driver); no Go.
#
#   interop/testdata/run-exporters.sh [interop test binary] [extra test flags...]
#
# The test binary defaults to .gpu/tests/interop.test (the packed suite; run .gpu/unpack.sh
# first) and is run from interop/. Vulkan comes from the system, or from Debian packages
# libvulkan1 and libvulkan-dev unpacked (dpkg -x) into .gl/root, or as .deb files in .gl/.
# The exporters are written to $OUT/exporters (or a temporary directory).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
src=$root/interop/testdata/exporter
bin=${1:-$root/.gpu/tests/interop.test}
shift || true
[[ -x $bin ]] || bash "$root/.gpu/unpack.sh" 2>/dev/null || true
[[ -x $bin ]] || { echo "no test binary $bin" >&2; exit 2; }
dir=${OUT:-$(mktemp -d)}/exporters
mkdir -p "$dir"

cuda_home=${CUDA_HOME:-/usr/local/cuda}
cuinc=$cuda_home/include
culib=()
for d in "$cuda_home/lib64/stubs" "$cuda_home/targets/x86_64-linux/lib/stubs"; do [[ -d $d ]] && culib+=(-L"$d"); done

echo "== building cuda_exporter"
cc -O2 -Wall -I"$cuinc" "$src/cuda_exporter.c" -o "$dir/cuda_exporter" "${culib[@]}" -lcuda

tests='TestExternal(MemoryFromDriverAPIExporter|MipmappedArrayFromDriverAPIExporter|CUDARefusesPlainFile)'
echo "== building vk_exporter"
vkinc=() vklib=()
gl=$root/.gl
if [[ ! -f /usr/include/vulkan/vulkan.h && ! -d $gl/root && -n $(ls "$gl"/*.deb 2>/dev/null) ]]; then
  mkdir -p "$gl/root" && for d in "$gl"/*.deb; do dpkg -x "$d" "$gl/root"; done
fi
if [[ -f $gl/root/usr/include/vulkan/vulkan.h ]]; then
  vkinc=(-I"$gl/root/usr/include")
  vklib=(-L"$gl/root/usr/lib/x86_64-linux-gnu" -Wl,-rpath,"$gl/root/usr/lib/x86_64-linux-gnu")
  # An unpacked libvulkan-dev has the unversioned link but needs libvulkan1's file beside it.
fi
if cc -O2 -Wall -Wno-missing-field-initializers "${vkinc[@]}" -I"$cuinc" "$src/vk_exporter.c" -o "$dir/vk_exporter" \
     "${vklib[@]}" -lvulkan "${culib[@]}" -lcuda; then
  if "$dir/vk_exporter" --probe; then
    tests='TestExternal(MemoryFromDriverAPIExporter|MipmappedArrayFromDriverAPIExporter|CUDARefusesPlainFile|VulkanMemoryAndTimeline)'
  else
    echo "!! vk_exporter --probe failed (no Vulkan ICD for the NVIDIA GPU? look for nvidia_icd.json in"
    echo "!! /usr/share/vulkan/icd.d or /etc/vulkan/icd.d, or set VK_ICD_FILENAMES): Vulkan test not run"
    rm -f "$dir/vk_exporter"
  fi
else
  echo "!! vk_exporter did not build (no Vulkan headers or loader): Vulkan test not run"
fi

echo "== running $tests"
cd "$root/interop"
GPUACTOR_EXPORTER_DIR=$dir GPUACTOR_REQUIRE_EXTERNAL=1 GPUACTOR_REQUIRE_GPU=1 \
  "$bin" -test.count=1 -test.v -test.run "^${tests}\$" "$@"
