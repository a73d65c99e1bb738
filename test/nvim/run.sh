#!/usr/bin/env bash
# Runs every test/nvim/*_spec.lua in a fresh headless Neovim against the real
# agentls binary. Prints "N passed, N failed" (summed over scripts) last and
# exits non-zero when anything failed. Needs nvim (0.7+) and go (unless
# $AGENTLS_BIN names a built binary).
set -u
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
tmp="$(mktemp -d "${TMPDIR:-/tmp}/agentls-nvim-test.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT

# Per-script time limit (seconds); a hung script counts as a failure.
timeout_s="${AGENTLS_NVIM_TIMEOUT:-60}"

if [ -n "${AGENTLS_BIN:-}" ]; then
  bin="$AGENTLS_BIN"
else
  bin="$tmp/agentls"
  (cd "$repo" && CGO_ENABLED=0 go build -o "$bin" ./cmd/agentls) || { echo "build failed"; echo "0 passed, 1 failed"; exit 1; }
fi
command -v nvim >/dev/null || { echo "nvim not found"; echo "0 passed, 1 failed"; exit 1; }

# The specs load a copy of the plugin: setup() may write doc/tags into it.
plugin="$tmp/plugin"
cp -R "$repo/editors/nvim" "$plugin"
rm -f "$plugin/doc/tags"

export XDG_STATE_HOME="$tmp/state" XDG_CACHE_HOME="$tmp/cache" XDG_CONFIG_HOME="$tmp/config" XDG_DATA_HOME="$tmp/data"
mkdir -p "$XDG_STATE_HOME" "$XDG_CACHE_HOME" "$XDG_CONFIG_HOME" "$XDG_DATA_HOME"
export AGENTLS_BIN="$bin" AGENTLS_REPO="$repo" AGENTLS_PLUGIN="$plugin"

passed=0
failed=0
for spec in "$here"/*_spec.lua; do
  name="$(basename "$spec")"
  # A fresh workspace per script so scripts cannot see each other's edits.
  ws="$tmp/ws-${name%.lua}"
  mkdir -p "$ws/src"
  printf 'alpha\nbeta\ngamma\n' > "$ws/hello.txt"
  printf 'package main\n\nfunc main() {\n\tprintln("hi")\n}\n' > "$ws/src/main.go"
  printf 'one\ntwo\nthree\nfour\nfive\n' > "$ws/lines.txt"
  (cd "$ws" && git init -q . 2>/dev/null || true)
  results="$tmp/${name%.lua}.results"
  : > "$results"
  echo "== $name"
  (cd "$ws" && AGENTLS_WS="$ws" AGENTLS_RESULTS="$results" timeout "$timeout_s" nvim --headless -u NONE -i NONE -n \
    -c "lua local ok, err = pcall(dofile, '$spec'); if not ok then io.stderr:write('ERROR loading $name: ' .. tostring(err) .. '\n'); vim.cmd('cquit 1') end" 2>&1)
  rc=$?
  p=$(grep -c '^pass' "$results")
  f=$(grep -c '^fail' "$results")
  if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
    # Died before reporting a failure (load error, crash, timeout=124).
    echo "   $name exited with status $rc"
    f=1
  fi
  passed=$((passed + p))
  failed=$((failed + f))
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
