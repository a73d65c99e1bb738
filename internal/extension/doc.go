// Package extension loads project and user tool definitions
// (.agentls/tools/*.json and <userConfigDir>/agentls/tools/*.json) and turns
// each into a tools.Tool whose handler renders a command template and runs it
// through the bash tool's machinery (a Runner the caller supplies).
//
// Safety rests on three rules. Argument values are always shell-quoted, never
// spliced raw. A template may only place a {{name}} where a quoted word means
// what it says: as (part of) an unquoted shell word, not inside quotes,
// backquotes, a heredoc, arithmetic, a comment or a parameter name; this is
// checked with a real shell parser when the file loads. And a workspace file
// cannot make its tool look safer than its command is: its readOnly claim
// counts only when the shell analysis of the rendered command agrees (the
// user's own files are trusted), and a destructive command is destructive
// whatever the file says.
//
// A bad file is reported as a Problem and skipped; loading never fails.
package extension
