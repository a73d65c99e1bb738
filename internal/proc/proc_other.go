//go:build !unix && !windows

package proc

import (
	"os"
	"os/exec"
)

// On platforms without process groups only the shell itself can be stopped.

func setupCmd(*exec.Cmd)                           {}
func terminateGroup(int)                           {}
func killGroup(int)                                {}
func groupAlive(int) bool                          { return false }
func escapedGroups(int, int) []int                 { return nil }
func exitStatus(ps *os.ProcessState) (int, string) { return ps.ExitCode(), "" }
