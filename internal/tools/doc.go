// Package tools owns the tool registry and the executor: the one path every
// call takes — lookup → normalize → validate → permission → handler →
// governance — and one file per built-in tool (read.go, grep.go, …).
//
// Tools never touch the file system or processes directly: they receive an
// [Env] whose ops.FS is the operations layer. Tool failures are results with
// IsError set, never Go errors that reach the protocol.
package tools
