//go:build !linux

package sandbox

import (
	"fmt"
	"os"
)

// LauncherCommand is the hidden subcommand of the Linux launcher; other
// systems have none.
const LauncherCommand = "__sandbox"

// RunLauncher exists on Linux only.
func RunLauncher([]string) int {
	fmt.Fprintln(os.Stderr, "agentls: the sandbox launcher runs on Linux only")
	return 2
}
