#!/usr/bin/env bash
# Measures the sandbox's per-command overhead (docs/benchmarks.md,
# "Sandboxed bash") through agentls and agentls-sandbox built as shipped:
# TestSandboxOverhead (commands through proc.Run, plain and each launcher
# interleaved, p50 wall and CPU) and BenchmarkLaunchParts (/bin/true bare,
# in new namespaces, and launched by each launcher; interleaved p50s).
#   bench/sandbox.sh             # N=200 iterations of the parts
set -euo pipefail
cd "$(dirname "$0")/.."
N=${N:-200}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o "$dir/agentls" ./cmd/agentls
CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o "$dir/agentls-sandbox" ./cmd/agentls-sandbox
export AGENTLS_BIN="$dir/agentls"
go test -count=1 -run '^TestSandboxOverhead$' -v ./internal/sandbox/ | grep -E 'p50|launchers|^(ok|FAIL)'
go test -count=1 -run '^$' -bench '^BenchmarkLaunchParts$' -benchtime "${N}x" ./internal/sandbox/ |
	grep '^BenchmarkLaunchParts' | tr '\t' '\n' | grep -- '-p50-ms' | awk '{printf "%-40s %s ms\n", $2, $1}' | sed 's/-p50-ms//'
