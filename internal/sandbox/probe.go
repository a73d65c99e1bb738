package sandbox

import "os/exec"

// probeResult is what the platform check found: a mechanism, or why not.
type probeResult struct {
	mechanism string
	err       string
	exe       string // the launcher binary (Linux), "" where there is none
}

// prepareProbe is Prepare under the settings being probed, launched by
// exe, before the status says the sandbox is active.
func (sb *Sandbox) prepareProbe(exe string) *Run {
	o, tmp := sb.opts, sb.tmp
	pol := buildPolicy(Settings{}, Options{Home: o.Home}, tmp)
	pol.Dir = tmp
	r := &Run{pol: pol}
	r.Wrap = func(cmd *exec.Cmd) error { return wrap(cmd, exe, r.pol) }
	return r
}
