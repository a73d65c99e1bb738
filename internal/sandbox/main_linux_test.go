package sandbox

import (
	"os"
	"testing"

	"github.com/agentls/agentls/internal/sandbox/launcher"
)

// TestMain lets the test binary act as the launcher, as agentls does:
// the sandbox re-executes /proc/self/exe.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == launcher.Command {
		os.Exit(launcher.Run(os.Args[2:]))
	}
	os.Exit(m.Run())
}
