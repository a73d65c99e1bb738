package sandbox

import (
	"fmt"
	"os"
	"os/exec"

	"github.com/agentls/agentls/internal/sandbox/launcher"
)

const sandboxExec = "/usr/bin/sandbox-exec"

// probe: macOS confines with sandbox-exec and a generated profile.
func probe(*Sandbox) probeResult {
	if why := os.Getenv(UnavailableEnv); why != "" {
		return probeResult{err: why + " (" + UnavailableEnv + " is set)"}
	}
	if _, err := os.Stat(sandboxExec); err != nil {
		return probeResult{err: "sandbox-exec is missing: " + err.Error()}
	}
	return probeResult{mechanism: "seatbelt (sandbox-exec)"}
}

// wrap runs the shell under sandbox-exec. The proxy needs a port on
// loopback there, which the unix-socket bridge does not give: with
// allowedDomains the network stays off on macOS.
func wrap(cmd *exec.Cmd, _ string, pol launcher.Policy) error {
	args := append([]string{sandboxExec, "-p", SeatbeltProfile(pol, 0), cmd.Path}, cmd.Args[1:]...)
	cmd.Path = sandboxExec
	cmd.Args = args
	if cmd.Path == "" {
		return fmt.Errorf("sandbox: no sandbox-exec")
	}
	return nil
}
