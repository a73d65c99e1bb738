#!/usr/bin/env bash
# Measures grep and find through tools/call on the real binary against raw
# ripgrep in the same run, on a generated 10k-file tree and on
# $(go env GOROOT)/src, and prints the ratio table of docs/benchmarks.md.
# Medians of COUNT interleaved runs (go test -count) tame a noisy machine.
#   bench/search.sh              # COUNT=5 BENCHTIME=5x
set -euo pipefail
cd "$(dirname "$0")/.."
COUNT=${COUNT:-5}
BENCHTIME=${BENCHTIME:-5x}
out=$(mktemp)
trap 'rm -f "$out"' EXIT
go test ./test/e2e -run '^$' -bench '^BenchmarkSearchTools$' -benchtime "$BENCHTIME" -count "$COUNT" | tee "$out" >&2
awk -v PREFIX=SearchTools -f bench/medians.awk -f - "$out" <<'AWK'
function r(a, b) { return (a > 0 && b > 0) ? sprintf("%.2f×", a / b) : "-" }
END {
	print "| tree / query | tools/call (rg) | Go fallback | raw rg | rg path ÷ raw rg (≤ 1.10) | fallback ÷ rg path (≤ 2.5) |"
	print "|---|---|---|---|---|---|"
	for (k in keys) if (k !~ /files$/) {
		c = median(k, "grep-call"); g = median(k, "grep-call-go"); raw = median(k, "raw-rg")
		printf "| %s | %.1f ms | %.1f ms | %.1f ms | %s | %s |\n", k, c / 1e6, g / 1e6, raw / 1e6, r(c, raw), r(g, c)
	}
	print ""
	print "| tree / query | CPU per call: tools/call (rg) | Go fallback | raw rg | rg path ÷ raw rg |"
	print "|---|---|---|---|---|"
	for (k in keys) if (k !~ /files$/) {
		c = median(k, "grep-call-cpu"); g = median(k, "grep-call-go-cpu"); raw = median(k, "raw-rg-cpu")
		printf "| %s | %.1f ms | %.1f ms | %.1f ms | %s |\n", k, c / 1e6, g / 1e6, raw / 1e6, r(c, raw)
	}
	print ""
	print "| tree | find *.go (tools/call) | rg --files -g *.go | find ÷ rg --files (≤ 1.5) |"
	print "|---|---|---|---|"
	for (k in keys) if (k ~ /files$/) {
		f = median(k, "find-call"); rf = median(k, "rg-files")
		printf "| %s | %.1f ms | %.1f ms | %s |\n", k, f / 1e6, rf / 1e6, r(f, rf)
	}
}
AWK
