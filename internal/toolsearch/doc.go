// Package toolsearch ranks tool descriptions against a free-text query for
// the tool_search tool. It is pure: no I/O, no state between calls.
//
// Ranking is BM25F over three fields — the tool name (split at "_", "-",
// "__", "." and camelCase humps), the description, and the parameter texts —
// with the name weighted highest. Tokens are lowercased and lightly stemmed
// (plural s, -ing, -ed, -ion, trailing e), so "migration", "migrations",
// "migrate" and "migrating" meet. Ties break by name, so results are
// deterministic.
package toolsearch
