//go:build !linux && !darwin

package sandbox

import (
	"os/exec"
	"runtime"

	"github.com/agentls/agentls/internal/sandbox/launcher"
)

func probe(*Sandbox) probeResult {
	return probeResult{err: "no sandbox on " + runtime.GOOS + " (Linux: Landlock and namespaces; macOS: Seatbelt)"}
}

func wrap(*exec.Cmd, string, launcher.Policy) error { return ErrUnavailable }
