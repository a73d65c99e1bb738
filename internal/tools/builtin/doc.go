// Package builtin owns the built-in tools, one file per tool (read.go,
// ls.go, grep.go, find.go, edit.go, write.go, bash.go; jobs.go holds
// bash_output and bash_kill, toolsearch.go tool_search) and what only they
// do: showing editor buffers and editing through the editor (buffers.go),
// hiding what the permission rules forbid (visible.go), the sandbox's part
// in a command run (sandbox.go), private-key lines and copied placeholders
// (keylines.go, masked.go), and "did you mean" paths (suggest.go).
//
// Each tool is declared with tools.Define and runs through the framework's
// executor; the framework never imports this package.
package builtin
