// Package initialize benchmarks LSP initialize on a large workspace: a
// generated tree of 115k files in 13k directories, where arming the file
// watchers takes most of a second. initialize must not wait for it.
//
//	go test -run '^$' -bench LSPInitialize -benchtime 5x ./bench/initialize/
//
// Figures and targets are in docs/benchmarks.md.
package initialize
