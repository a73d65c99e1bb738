#!/usr/bin/env bash
# Installs Neovim 0.10 from Debian 13 ("trixie") beside the system's Neovim,
# without changing the system: the packages are fetched with apt-get using a
# source list and state kept in a temp dir, unpacked with dpkg -x, and the
# binary is patched (patchelf) to use the unpacked loader and libraries.
# Cached: a second run prints the path without downloading. Not pinned to
# one Debian revision (a point release replaces it on the mirror): any
# 0.10.x is accepted, anything else fails the run.
#
# Usage: nvim010.sh [DIR]   (default: /var/cache/agentls-ci/nvim-0.10)
# Prints the nvim binary's path last. Run it with VIMRUNTIME set to
# DIR/usr/share/nvim/runtime (run.sh does that).
# Needs apt-get, dpkg and patchelf (.ci/run installs patchelf).
set -euo pipefail
dest="${1:-${AGENTLS_NVIM010_DIR:-/var/cache/agentls-ci/nvim-0.10}}"
want="v0.10."
bin="$dest/usr/bin/nvim"
runtime="$dest/usr/share/nvim/runtime"

if [ -x "$bin" ] && VIMRUNTIME="$runtime" "$bin" --version 2>/dev/null | head -1 | grep -q "$want"; then
  echo "$bin"
  exit 0
fi

for tool in apt-get dpkg patchelf; do
  command -v "$tool" >/dev/null || { echo "nvim010.sh: $tool not found" >&2; exit 1; }
done

work="$(mktemp -d "${TMPDIR:-/tmp}/agentls-nvim010.XXXXXX")"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/lists/partial" "$work/cache/archives/partial" "$work/debs"
echo "deb http://deb.debian.org/debian trixie main" > "$work/sources.list"
apt_opts=(-o "Dir::Etc::sourcelist=$work/sources.list" -o "Dir::Etc::sourceparts=-"
  -o "Dir::State::Lists=$work/lists" -o "Dir::Cache=$work/cache" -o "APT::Get::List-Cleanup=0"
  -o "Debug::NoLocking=1" -o "APT::Sandbox::User=root")
apt-get "${apt_opts[@]}" update -qq >&2
# Neovim and the libraries it loads, from trixie (the system's may be older).
pkgs=(gcc-14-base libc6 libgcc-s1 libluajit-5.1-2 libluajit-5.1-common libmsgpack-c2
  libtree-sitter0.22 libunibilium4 libuv1t64 libvterm0 lua-lpeg lua-luv neovim neovim-runtime)
(cd "$work/debs" && apt-get "${apt_opts[@]}" download -qq "${pkgs[@]}" >&2)

# Unpack into a fresh dir and move it into place whole, so a failed run
# never leaves a half-installed cache behind.
stage="$dest.new.$$"
rm -rf "$stage"
mkdir -p "$stage"
for deb in "$work"/debs/*.deb; do
  dpkg -x "$deb" "$stage"
done
lib="$dest/usr/lib/x86_64-linux-gnu"
patchelf --set-interpreter "$lib/ld-linux-x86-64.so.2" --set-rpath "$lib" "$stage/usr/bin/nvim"
if [ -x "$bin" ] && VIMRUNTIME="$runtime" "$bin" --version 2>/dev/null | head -1 | grep -q "$want"; then
  rm -rf "$stage" # another run installed it meanwhile
else
  rm -rf "$dest"
  mv "$stage" "$dest"
fi

VIMRUNTIME="$runtime" "$bin" --version | head -1 | grep -q "$want" || {
  echo "nvim010.sh: $bin is not Neovim $want*" >&2
  exit 1
}
echo "$bin"
