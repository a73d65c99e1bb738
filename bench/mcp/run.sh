#!/usr/bin/env bash
# Benchmark `agentls mcp` against server-filesystem with the TS SDK client.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
if [ ! -d "$repo/test/mcp/node_modules/@modelcontextprotocol/sdk" ]; then
  (cd "$repo/test/mcp" && npm ci --no-audit --no-fund --loglevel=error)
fi
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
if [ -z "${AGENTLS_BIN:-}" ]; then
  (cd "$repo" && CGO_ENABLED=0 go build -o "$out/agentls" ./cmd/agentls)
  export AGENTLS_BIN="$out/agentls"
fi
# The floor: a Go MCP server that does nothing (bench/mcp/nullserver).
(cd "$repo" && CGO_ENABLED=0 go build -o "$out/nullserver" ./bench/mcp/nullserver)
export NULLSERVER_BIN="$out/nullserver"
# The library floor: the smallest server the go-sdk makes (bench/mcp/sdkserver).
(cd "$repo" && CGO_ENABLED=0 go build -o "$out/sdkserver" ./bench/mcp/sdkserver)
export SDKSERVER_BIN="$out/sdkserver"
node "$here/bench.mjs"
