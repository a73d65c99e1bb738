package sandbox

import "os/exec"

// probeResult is what the platform check found: a mechanism, or why not.
type probeResult struct {
	mechanism string
	err       string
}

// prepareProbe is Prepare under the settings being probed, before the
// status says the sandbox is active.
func (sb *Sandbox) prepareProbe() (*Run, error) {
	o, tmp := sb.opts, sb.tmp
	pol := buildPolicy(Settings{}, Options{Home: o.Home}, tmp)
	pol.Dir = tmp
	exe := o.Exe
	if exe == "" {
		exe = "/proc/self/exe"
	}
	r := &Run{pol: pol}
	r.Wrap = func(cmd *exec.Cmd) error { return wrap(cmd, exe, r.pol) }
	return r, nil
}
