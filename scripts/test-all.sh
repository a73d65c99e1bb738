#!/usr/bin/env bash
# Runs every test of the project: static checks, Go unit and end-to-end
# tests, cross-compilation, and the headless Neovim tests.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== gofmt / go vet"
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
if [ -n "$unformatted" ]; then
  echo "gofmt would change:"; echo "$unformatted"; exit 1
fi
go vet ./...

echo "== cross-compile (windows, darwin)"
GOOS=windows GOARCH=amd64 go build -o /dev/null ./cmd/agentls
GOOS=darwin GOARCH=arm64 go build -o /dev/null ./cmd/agentls

echo "== build"
bin_dir=$(mktemp -d)
trap 'rm -rf "$bin_dir"' EXIT
go build -o "$bin_dir/agentls" ./cmd/agentls
export AGENTLS_BIN="$bin_dir/agentls"

echo "== go test"
go test -count=1 -timeout 10m ./...

if [ -f test/nvim/run.sh ]; then
  echo "== neovim (headless)"
  bash test/nvim/run.sh
fi
