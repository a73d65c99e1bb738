#!/usr/bin/env bash
# Benchmarks the grep engine (internal/search) and prints, per tree and
# pattern, the ratios that matter: rg engine / raw `rg --json` (target
# <= 1.10) and Go fallback / rg engine (target <= 2.5). Uses medians of
# COUNT runs, interleaved by go test's -count, to tame noisy machines.
#   bench/grep.sh            # COUNT=5 BENCHTIME=5x by default
set -euo pipefail
cd "$(dirname "$0")/.."
COUNT=${COUNT:-5}
BENCHTIME=${BENCHTIME:-5x}
out=$(mktemp)
trap 'rm -f "$out"' EXIT
go test ./internal/search -run '^$' -bench '^BenchmarkGrep$' -benchtime "$BENCHTIME" -count "$COUNT" | tee "$out" >&2
awk -v PREFIX=Grep -f bench/medians.awk -f - "$out" <<'AWK' | sort
END {
	printf "%-28s %10s %10s %10s %10s %10s\n", "tree/pattern", "raw-rg ms", "rg-eng ms", "go-eng ms", "rg/raw", "go/rg"
	for (k in keys) {
		raw = median(k, "raw-rg"); rg = median(k, "rg-engine"); go = median(k, "go-engine")
		printf "%-28s %10.1f %10.1f %10.1f %10s %10s\n", k, raw / 1e6, rg / 1e6, go / 1e6,
			(raw > 0 ? sprintf("%.2f", rg / raw) : "-"), (rg > 0 ? sprintf("%.2f", go / rg) : "-")
	}
}
AWK
