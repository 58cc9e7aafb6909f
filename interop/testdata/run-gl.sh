#!/bin/bash
# Runs the graphics interoperability GPU tests (interop TestGPU{GL,EGL,Event,Graphics}*, and
# internal/egl's own) on the GPU host with headless OpenGL through EGL. The host has NVIDIA's
# vendor library (libEGL_nvidia.so.0) but maybe no glvnd loader: the loaders come as Debian
# packages in .gl/ (scripts/gl-loaders.sh downloads them where apt works), unpacked here with
# dpkg -x into .gl/root, nothing installed system-wide, nothing fetched. internal/egl finds
# .gl/root by itself (from the working directory up), so after this script has run once
# .gpu/run.sh finds the loaders too.
#
#   interop/testdata/run-gl.sh [extra test flags...]
#
# Test binaries: .gpu/tests/interop.test and .gpu/tests/internal_egl.test (the packed suite;
# .gpu/unpack.sh is run first), each from its package directory. The example
# (.gpu/bin/glinterop, where packed) runs last.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
bash "$root/.gpu/unpack.sh" 2>/dev/null || true
gl=$root/.gl
lib=$gl/root/usr/lib/x86_64-linux-gnu

if [[ ! -f $lib/libEGL.so.1 ]]; then
  if ls "$gl"/*.deb >/dev/null 2>&1; then
    mkdir -p "$gl/root" && for d in "$gl"/*.deb; do dpkg -x "$d" "$gl/root"; done
  fi
fi
if [[ -f $lib/libEGL.so.1 ]]; then
  export GPUACTOR_GL_ROOT=$lib LD_LIBRARY_PATH=$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  echo "== glvnd loaders from $lib"
elif ldconfig -p | grep -q 'libEGL.so.1 '; then
  echo "== glvnd loaders from the system"
else
  echo "!! no libEGL.so.1: run scripts/gl-loaders.sh where apt works and carry .gl/ here" >&2
fi

# glvnd finds NVIDIA's EGL through a vendor file; name one where its usual directories have
# none.
if [[ -z ${__EGL_VENDOR_LIBRARY_FILENAMES:-} ]]; then
  vendor=
  for f in /usr/share/glvnd/egl_vendor.d/10_nvidia.json /etc/glvnd/egl_vendor.d/10_nvidia.json \
           /usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json; do
    [[ -f $f ]] && { vendor=$f; break; }
  done
  if [[ -z $vendor ]]; then
    vendor=$gl/10_nvidia.json
    printf '{\n  "file_format_version" : "1.0.0",\n  "ICD" : { "library_path" : "libEGL_nvidia.so.0" }\n}\n' > "$vendor"
  fi
  export __EGL_VENDOR_LIBRARY_FILENAMES=$vendor
  echo "== EGL vendor file $vendor"
fi

export GPUACTOR_REQUIRE_GPU=1
fail=0
run() { # run <package dir> <binary> <test regexp>
  local dir=$1 bin=$2 re=$3
  if [[ ! -x $bin ]]; then echo "!! no test binary $bin" >&2; fail=1; return; fi
  echo "== $dir: $re"
  (cd "$root/$dir" && "$bin" -test.count=1 -test.v -test.run "$re" "${@:4}") || fail=1
}
run internal/egl "$root/.gpu/tests/internal_egl.test" '^Test(GLRoundTrips|EGLImageAndSync|StreamState)$' "$@"
run interop "$root/.gpu/tests/interop.test" '^TestGPU(GL|EGL|EventFromEGLSync|GraphicsMistakes)' "$@"
if [[ -x $root/.gpu/bin/glinterop ]]; then
  echo "== examples/glinterop"
  "$root/.gpu/bin/glinterop" -require || fail=1
fi
echo "run-gl: $([[ $fail == 0 ]] && echo PASS || echo FAIL)"
exit $fail
