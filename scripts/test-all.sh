#!/usr/bin/env bash
# Runs every test of the project: static checks, Go unit and end-to-end
# tests, cross-compilation, the headless Neovim tests (Neovim 0.7.2 and
# 0.10), the MCP tests with the TypeScript SDK and behind mcp-hub, agentls
# inside real MCP hosts (Claude Code and Codex; AGENTLS_HOSTS=all adds
# opencode and Gemini CLI), and the VS Code extension in a real VS Code.
# AGENTLS_SKIP_VSCODE=1 skips the VS Code stage (it needs root to install
# its prerequisites on first use).
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== gofmt / go vet"
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
if [ -n "$unformatted" ]; then
  echo "gofmt would change:"; echo "$unformatted"; exit 1
fi
go vet ./...

# Every build of the binary is static (CGO_ENABLED=0): nothing in the tree
# needs cgo (`go list -deps ./cmd/agentls` shows only net and runtime/cgo,
# which have pure-Go fallbacks), and a static binary starts sooner
# (no dynamic loader, no libc start-up).
echo "== cross-compile (windows, darwin)"
CGO_ENABLED=0 GOOS=windows GOARCH=amd64 go build -o /dev/null ./cmd/agentls
CGO_ENABLED=0 GOOS=darwin GOARCH=arm64 go build -o /dev/null ./cmd/agentls

echo "== build"
bin_dir=$(mktemp -d)
trap 'rm -rf "$bin_dir"' EXIT
# -tags agentlstest compiles in the test-only tools (test_block, test_panic)
# that the e2e, Neovim and MCP tests call with AGENTLS_TEST_TOOLS=1; without
# that variable the binary behaves as the shipped one, built without the tag.
CGO_ENABLED=0 go build -tags agentlstest -o "$bin_dir/agentls" ./cmd/agentls
# The small sandbox launcher beside it, as an install has it (agentls uses
# it for sandboxed commands when it is there, itself when not).
CGO_ENABLED=0 go build -o "$bin_dir/agentls-sandbox" ./cmd/agentls-sandbox
export AGENTLS_BIN="$bin_dir/agentls"

echo "== go test"
# test/e2e alone runs for minutes on 2 cores; the timeout is a hang guard,
# not a speed target (docs/benchmarks.md has the suite's times).
go test -count=1 -parallel 4 -timeout 25m ./...

echo "== neovim (headless)"
bash test/nvim/run.sh

echo "== MCP (TypeScript SDK client, server-filesystem upstream)"
bash test/mcp/run.sh

echo "== mcp-hub (the hub of mcphub.nvim) starting agentls mcp"
bash test/mcphub/run.sh

echo "== MCP hosts (Claude Code, Codex; AGENTLS_HOSTS=all adds opencode, Gemini CLI; first run installs into /var/cache/agentls-ci/hosts)"
bash test/hosts/run.sh

if [ "${AGENTLS_SKIP_VSCODE:-}" = 1 ]; then
  echo "== VS Code: skipped (AGENTLS_SKIP_VSCODE=1)"
else
  echo "== VS Code (code-server + Chromium; first run installs into /var/cache/agentls-ci)"
  bash test/vscode/run.sh
fi
