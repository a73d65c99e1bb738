//go:build unix

package proc

import "syscall"

// termVictim sends SIGTERM, then SIGCONT so that a stopped process acts on it.
func termVictim(v victim) {
	signalVictim(v, syscall.SIGTERM)
	signalVictim(v, syscall.SIGCONT)
}

func killVictim(v victim) { signalVictim(v, syscall.SIGKILL) }

func signalVictim(v victim, s syscall.Signal) {
	if v.group {
		_ = syscall.Kill(-v.id, s)
		return
	}
	_ = syscall.Kill(v.id, s)
}
