#!/usr/bin/env bash
# Runs every test/nvim/*_spec.lua in a fresh headless Neovim against the real
# agentls binary, once per Neovim version: the system's nvim (Debian 12:
# 0.7.2) and Neovim 0.10 from Debian 13 (installed beside it by nvim010.sh,
# cached in /var/cache/agentls-ci). Prints "N passed, N failed" per version
# and, last, summed over all of them; exits non-zero when anything failed.
#
# Environment: $AGENTLS_BIN names a built binary (else go builds one; the
# specs call the test-only tools, so it is built with -tags agentlstest);
# $AGENTLS_NVIM lists the nvim binaries to run (space separated) instead of
# both; $AGENTLS_NVIM_SPECS limits the run to spec files matching a glob
# (e.g. "core_spec.lua"); $AGENTLS_NVIM_TIMEOUT is the per-script limit.
set -u
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
tmp="$(mktemp -d "${TMPDIR:-/tmp}/agentls-nvim-test.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT

# Per-script time limit (seconds); a hung script counts as a failure.
timeout_s="${AGENTLS_NVIM_TIMEOUT:-60}"
specs_glob="${AGENTLS_NVIM_SPECS:-*_spec.lua}"

if [ -n "${AGENTLS_BIN:-}" ]; then
  bin="$AGENTLS_BIN"
else
  bin="$tmp/agentls"
  (cd "$repo" && CGO_ENABLED=0 go build -tags agentlstest -o "$bin" ./cmd/agentls) || { echo "build failed"; echo "0 passed, 1 failed"; exit 1; }
fi

# The Neovims to run: the system's, then 0.10 (installed when missing).
nvims=()
setup_failed=0
if [ -n "${AGENTLS_NVIM:-}" ]; then
  read -r -a nvims <<< "$AGENTLS_NVIM"
else
  if command -v nvim >/dev/null; then
    nvims+=("$(command -v nvim)")
  else
    echo "nvim not found"; setup_failed=$((setup_failed + 1))
  fi
  if nvim010="$(bash "$here/nvim010.sh" | tail -1)" && [ -x "$nvim010" ]; then
    nvims+=("$nvim010")
  else
    echo "could not install Neovim 0.10 (test/nvim/nvim010.sh)"; setup_failed=$((setup_failed + 1))
  fi
fi

export XDG_STATE_HOME="$tmp/state" XDG_CACHE_HOME="$tmp/cache" XDG_CONFIG_HOME="$tmp/config" XDG_DATA_HOME="$tmp/data"
mkdir -p "$XDG_STATE_HOME" "$XDG_CACHE_HOME" "$XDG_CONFIG_HOME" "$XDG_DATA_HOME"
export AGENTLS_BIN="$bin" AGENTLS_REPO="$repo"

# run_suite NVIM: runs every spec on NVIM; adds to passed/failed.
run_suite() {
  local nv="$1" runtime="" version
  # An unpacked Neovim (nvim010.sh) finds its runtime beside the binary.
  if [ -d "$(dirname "$nv")/../share/nvim/runtime" ] && [ "$nv" != "$(command -v nvim 2>/dev/null)" ]; then
    runtime="$(cd "$(dirname "$nv")/../share/nvim/runtime" && pwd)"
  fi
  version="$(VIMRUNTIME="${runtime:-${VIMRUNTIME:-}}" "$nv" --version 2>/dev/null | head -1)"
  [ -n "$runtime" ] || runtime="${VIMRUNTIME:-}"
  echo "=== $version ($nv)"
  # The specs load a copy of the plugin: setup() may write doc/tags into it.
  local plugin="$tmp/plugin-$suite_n"
  cp -R "$repo/editors/nvim" "$plugin"
  rm -f "$plugin/doc/tags"
  local p_sum=0 f_sum=0 ran=0 spec name ws results rc p f
  for spec in "$here"/$specs_glob; do
    [ -f "$spec" ] || continue
    ran=$((ran + 1))
    name="$(basename "$spec")"
    # A fresh workspace per script so scripts cannot see each other's edits.
    ws="$tmp/ws-$suite_n-${name%.lua}"
    mkdir -p "$ws/src"
    printf 'alpha\nbeta\ngamma\n' > "$ws/hello.txt"
    printf 'package main\n\nfunc main() {\n\tprintln("hi")\n}\n' > "$ws/src/main.go"
    printf 'one\ntwo\nthree\nfour\nfive\n' > "$ws/lines.txt"
    (cd "$ws" && git init -q . 2>/dev/null || true)
    results="$tmp/$suite_n-${name%.lua}.results"
    : > "$results"
    echo "== $name"
    (cd "$ws" && AGENTLS_PLUGIN="$plugin" AGENTLS_WS="$ws" AGENTLS_RESULTS="$results" \
      VIMRUNTIME="$runtime" timeout "$timeout_s" "$nv" --headless -u NONE -i NONE -n \
      -c "lua local ok, err = pcall(dofile, '$spec'); if not ok then io.stderr:write('ERROR loading $name: ' .. tostring(err) .. '\n'); vim.cmd('cquit 1') end" 2>&1)
    rc=$?
    p=$(grep -c '^pass' "$results")
    f=$(grep -c '^fail' "$results")
    if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
      # Died before reporting a failure (load error, crash, timeout=124).
      echo "   $name exited with status $rc"
      f=1
    fi
    p_sum=$((p_sum + p))
    f_sum=$((f_sum + f))
  done
  if [ "$ran" -eq 0 ]; then
    echo "   no spec file matches $specs_glob"
    f_sum=$((f_sum + 1))
  fi
  echo "$version: $p_sum passed, $f_sum failed"
  passed=$((passed + p_sum))
  failed=$((failed + f_sum))
}

passed=0
failed=$setup_failed
suite_n=0
for nv in "${nvims[@]}"; do
  suite_n=$((suite_n + 1))
  run_suite "$nv"
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
