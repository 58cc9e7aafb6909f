#!/bin/bash
# Downloads the glvnd loaders headless OpenGL through EGL needs (libEGL.so.1, libGLdispatch,
# libOpenGL, libGLESv2, libGL) as Debian packages into .gl/, for the GPU host, which has
# NVIDIA's vendor libraries (libEGL_nvidia.so.0) but no loader and no network. Run it here,
# where apt works; carry .gl/ to the GPU host with .gpu/. interop/testdata/run-gl.sh unpacks
# them there (dpkg -x into .gl/root, nothing installed system-wide) and runs the tests.
#
#   scripts/gl-loaders.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$root/.gl"
# amd64 whatever this machine is: the GPU host is x86-64.
lists=$(mktemp -d)
trap 'rm -rf "$lists"' EXIT
mkdir -p "$lists/partial"
o=(-oAPT::Architecture=amd64 -oAPT::Architectures=amd64 -oDir::State::Lists="$lists")
apt-get "${o[@]}" update -qq
cd "$root/.gl"
apt-get "${o[@]}" download libegl1 libglvnd0 libopengl0 libgles2 libgl1 libglx0
ls -l "$root/.gl"/*.deb
