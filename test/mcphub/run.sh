#!/usr/bin/env bash
# agentls behind the real mcp-hub (npm, pinned in package.json): the hub
# mcphub.nvim runs. Uses $AGENTLS_BIN, or builds agentls. The hub listens on
# 127.0.0.1 only (a free port) and needs no network once installed.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
cd "$here"
if [ ! -f node_modules/mcp-hub/dist/cli.js ]; then
  npm ci --no-audit --no-fund --loglevel=error
fi
if [ -z "${AGENTLS_BIN:-}" ]; then
  out="$(mktemp -d)"
  trap 'rm -rf "$out"' EXIT
  (cd "$repo" && CGO_ENABLED=0 go build -o "$out/agentls" ./cmd/agentls)
  export AGENTLS_BIN="$out/agentls"
fi
run=(node --test --test-concurrency=1 --test-reporter=spec ./*.test.mjs)
# Where it can (root, unshare and ip), it runs in a network namespace with
# only loopback up, so the hub provably needs nothing beyond 127.0.0.1.
if command -v unshare >/dev/null && command -v ip >/dev/null && unshare -n true 2>/dev/null; then
  echo "mcp-hub: in a network namespace with loopback only"
  unshare -n sh -c 'ip link set lo up && exec "$@"' sh "${run[@]}"
else
  echo "mcp-hub: with the machine's network (no unshare -n here)"
  "${run[@]}"
fi
