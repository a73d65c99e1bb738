//go:build !linux

package launcher

import (
	"fmt"
	"os"
)

// Run exists on Linux only.
func Run([]string) int {
	fmt.Fprintln(os.Stderr, "agentls: the sandbox launcher runs on Linux only")
	return 2
}
