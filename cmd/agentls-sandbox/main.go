// Command agentls-sandbox is agentls's small sandbox launcher (Linux). It
// is never run by hand: agentls starts it for every sandboxed bash
// command, as
//
//	agentls-sandbox __sandbox POLICY-JSON SHELL ARGS...
//
// Install it next to agentls (same directory, same build). It links only
// the launcher (internal/sandbox/launcher), so it starts in a fraction of
// agentls's time; without it agentls runs the same launcher as
// `agentls __sandbox`.
package main

import (
	"fmt"
	"os"

	"github.com/agentls/agentls/internal/sandbox/launcher"
)

func main() {
	if len(os.Args) < 2 || os.Args[1] != launcher.Command {
		fmt.Fprintln(os.Stderr, "agentls-sandbox: the sandbox launcher is started by agentls itself")
		os.Exit(2)
	}
	os.Exit(launcher.Run(os.Args[2:]))
}
