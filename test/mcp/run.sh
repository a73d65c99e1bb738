#!/usr/bin/env bash
# End-to-end tests of `agentls mcp` with the official TypeScript MCP SDK
# client. Uses $AGENTLS_BIN, or builds agentls with -tags agentlstest (the
# tests call the test-only tools test_block and test_panic).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
cd "$here"
if [ ! -d node_modules/@modelcontextprotocol/sdk ] || [ ! -d node_modules/@modelcontextprotocol/server-filesystem ]; then
  npm ci --no-audit --no-fund --loglevel=error
fi
if [ -z "${AGENTLS_BIN:-}" ]; then
  out="$(mktemp -d)"
  (cd "$repo" && CGO_ENABLED=0 go build -tags agentlstest -o "$out/agentls" ./cmd/agentls)
  export AGENTLS_BIN="$out/agentls"
fi
exec node --test --test-concurrency=1 --test-reporter=spec ./*.test.mjs
