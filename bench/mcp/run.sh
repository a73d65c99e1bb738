#!/usr/bin/env bash
# Benchmark `agentls mcp` against server-filesystem with the TS SDK client.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
if [ ! -d "$repo/test/mcp/node_modules/@modelcontextprotocol/sdk" ]; then
  (cd "$repo/test/mcp" && npm ci --no-audit --no-fund --loglevel=error)
fi
if [ -z "${AGENTLS_BIN:-}" ]; then
  out="$(mktemp -d)"
  (cd "$repo" && CGO_ENABLED=0 go build -o "$out/agentls" ./cmd/agentls)
  export AGENTLS_BIN="$out/agentls"
fi
exec node "$here/bench.mjs"
