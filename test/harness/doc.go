// Package harness builds the real agentls binary, spawns it over stdio and
// talks JSON-RPC to it through a Go client (go.lsp.dev/jsonrpc2, the same
// library the server uses), recording every notification the server sends.
// End-to-end tests and the faux provider drive agentls only through it.
package harness
