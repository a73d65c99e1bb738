// Package launcher is the Linux sandbox launcher's body: it runs inside the
// new user, mount and network namespaces agentls starts it in, confines
// itself (loopback up, binds and covers, no_new_privs, Landlock, no
// capabilities) and then executes the shell in its own place.
//
// It is kept apart from internal/sandbox so that the small
// agentls-sandbox binary (cmd/agentls-sandbox) can hold it without the
// rest of agentls: every sandboxed command pays the launcher's start, and
// a Go binary's start grows with what it links (its package inits and
// the pages they touch). agentls itself runs the same code as the hidden
// `agentls __sandbox` when that binary is not installed next to it.
//
// Policy is what agentls hands over, as JSON on the command line; Run
// refuses a policy of another format (Format) or with a field it does
// not know, so a launcher of another build never runs a command under
// less confinement than asked.
package launcher
