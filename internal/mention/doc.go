// Package mention names agentls's tools in text the model reads, as that
// model sees them: a host may list the tools under other names (VS Code
// contributes agentls_read, agentls_grep, …), and a hint that says "use
// read" sends the model to a tool it does not have.
//
// Text written for the model marks a tool as {{name}}; a [Prefix] renders
// the marks. Only text agentls writes (a description, a format string) is
// rendered, never data joined into it (file content, paths, commands), so a
// file that holds "{{read}}" is shown as it is.
package mention
