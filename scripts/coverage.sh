#!/usr/bin/env bash
# Measures the statements of internal/... the tests cover: each package's
# own tests with the txtar scripts of cmd/agentls ("unit"), test/e2e (its
# servers in the test process, and a coverage build of the binary where a
# test spawns one), and both together (a statement counts when either
# covers it). docs/benchmarks.md,
# "Coverage", holds the figures; a consolidation of tests must not drop
# the last one by more than a point.
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
mkdir -p "$out/unit" "$out/e2e"

go test -count=1 -cover ./internal/... -args -test.gocoverdir="$out/unit" > /dev/null
# The scripts run `agentls call` as the re-executed test binary, which
# writes its coverage to GOCOVERDIR; run directly, as below, for the same
# reason as the e2e binary.
go test -c -cover -coverpkg=./internal/...,./cmd/... -o "$out/cmd.test" ./cmd/agentls
(cd cmd/agentls && GOCOVERDIR="$out/unit" "$out/cmd.test" -test.count=1 -test.gocoverdir="$out/unit" > "$out/cmd.log" 2>&1) || failed=1
# cmd/... is in -coverpkg because a binary writes no coverage data without
# its main package; only internal/... is counted below.
CGO_ENABLED=0 go build -tags agentlstest -cover -coverpkg=./internal/...,./cmd/... -o "$out/agentls" ./cmd/agentls
# The e2e test binary is run directly: `go test -cover` would point the
# GOCOVERDIR of the binaries the tests spawn at its own temp directory.
go test -c -cover -coverpkg=./internal/...,./cmd/... -o "$out/e2e.test" ./test/e2e/
# A failing test still leaves its coverage: the figures are printed, and
# the script fails at the end, naming the failures.
failed=0
(cd test/e2e && GOCOVERDIR="$out/e2e" AGENTLS_BIN="$out/agentls" "$out/e2e.test" \
  -test.count=1 -test.parallel=4 -test.timeout=25m -test.gocoverdir="$out/e2e" > "$out/e2e.log" 2>&1) || failed=1

# covered prints the covered share of internal/...'s statements in the
# profile $1: a block counts once, covered when any run covered it.
covered() {
  awk 'NR > 1 && $1 ~ /\/internal\// { n[$1] = $2; if ($3 > 0) c[$1] = 1 }
       END { for (k in n) { all += n[k]; if (k in c) hit += n[k] }
             printf "%.1f %% of %d statements\n", 100 * hit / all, all }' "$1"
}
for set in unit e2e unit,e2e; do
  go tool covdata textfmt -i="$(echo "$set" | sed "s#[^,]*#$out/&#g")" -o "$out/profile.txt"
  echo "$set: $(covered "$out/profile.txt")"
done
if [ "$failed" = 1 ]; then
  echo "some tests failed; their coverage is counted:" >&2
  grep -h -- '^--- FAIL' "$out"/*.log >&2 || true
  exit 1
fi
