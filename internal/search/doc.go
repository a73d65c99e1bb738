// Package search owns the grep engine behind the grep tool: it runs a
// regular-expression (or literal) search over a workspace folder and renders
// the model-facing text.
//
// Two backends feed one formatter, so their output is byte-for-byte the
// same: ripgrep (`rg --json`, run in parallel and made deterministic by
// collecting per file and truncating in path order) when rg is on PATH, and
// an in-process Go searcher (ignore.Matcher.Walk, parallel workers, Go
// regexp) otherwise. Both honour the ignore rules of internal/ignore, skip
// binary files (a NUL byte anywhere in the decoded text, which is what rg's
// binary detection amounts to for a whole file), decode UTF-8/UTF-16 BOMs,
// treat CRLF as a line ending and show invalid UTF-8 as U+FFFD.
//
// Known differences between the backends, all outside the tested contract:
// the regex dialects (Rust vs Go RE2: \d and \w are Unicode-aware in rg,
// ASCII in Go; a few syntax forms exist in only one), the wording of regex
// parse errors.
//
// rg either walks a directory itself (searchRgWalk: when Engine.Visible
// can name what it refuses, rg skips those names; every entry rg's own
// ignore rules, hidden check or globs skip is read from its --debug log
// and judged by the Matcher, a file agentls would search is searched
// after, a directory it would enter falls back; what rg reports beyond
// the Matcher's rules is dropped) or is handed the files of agentls's own
// walk in batches (searchRgOrdered). Either way the files searched are
// the Matcher's and Visible's.
//
// The Go backend reads each file up to bigFileSize (8 MiB) whole into a
// per-worker buffer; a larger file is searched chunkSize (4 MiB) of
// complete lines at a time, the partial last line carried over, up to ctx
// lines kept for leading context, and reading stops once the file's last
// showable match and its trailing context are found, so memory is bounded
// by the chunk and the longest line rather than the file (a NUL after that
// point then goes unseen, as in rg, which also stops at --max-count). It
// runs the regexp only on lines holding a literal every match must contain
// (found with bytes.Index) when the pattern has one. When Engine.FS is a
// RootOpener (an os.Root) it opens each directory once and its files with
// one openat each, instead of one openat per path component.
//
// This package reads the workspace only through Engine.FS and runs rg with
// its working directory in the directory searched, opened through
// Engine.FS (see runRg).
package search
