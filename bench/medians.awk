# Shared by the bench scripts: collects `go test -bench` lines named
# Benchmark<Prefix>/<tree>/<query>/<kind> into medians per (tree/query, kind).
# Set PREFIX with -v; median(key, kind) returns ns/op, median(key, kind
# "-cpu") the cpu-ns/op metric where a benchmark reports one.
$1 ~ "^Benchmark" PREFIX "/" {
	name = $1; sub("^Benchmark" PREFIX "/", "", name); sub(/-[0-9]+$/, "", name)
	n = split(name, p, "/"); key = p[1] "/" p[2]; kind = p[3]
	v[key, kind, ++cnt[key, kind]] = $3; keys[key] = 1
	for (i = 4; i < NF; i++) if ($(i + 1) == "cpu-ns/op") v[key, kind "-cpu", ++cnt[key, kind "-cpu"]] = $i
}
function median(key, kind,    n, i, j, t, a) {
	n = cnt[key, kind]; if (n == 0) return 0
	for (i = 1; i <= n; i++) a[i] = v[key, kind, i]
	for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
	return (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
