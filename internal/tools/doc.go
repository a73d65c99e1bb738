// Package tools is the tool framework: the registry, the one path every
// call takes — lookup → normalize → validate → permission → handler →
// governance — the executor, Limits, the tool-list formats and the
// diagnostics plumbing. The built-in tools are in package builtin, which
// imports this one.
//
// Tools never touch the file system or processes directly: they receive an
// [Env] whose ops.FS is the operations layer. Tool failures are results with
// IsError set, never Go errors that reach the protocol.
package tools
