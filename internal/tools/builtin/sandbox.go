package builtin

import (
	"github.com/agentls/agentls/internal/proc"
	"github.com/agentls/agentls/internal/sandbox"
	"github.com/agentls/agentls/internal/tools"
)

// sandboxed is the sandbox's part in one command run.
type sandboxed struct {
	mode sandbox.Mode
	run  *sandbox.Run
	dir  string
	st   sandbox.Status
}

// confine decides how command runs and, when sandboxed, wraps spec: every
// command start (bash, extension tools, background jobs) goes through it.
// A non-nil Result is the refusal to return instead of running anything.
func confine(c *tools.Call, command, dir string, spec *proc.Spec) (*sandboxed, *tools.Result) {
	sb := c.Env.Sandbox
	st := sb.Status()
	mode := sb.ModeOf(command)
	if c.SandboxOnly() && mode != sandbox.Confined {
		r := tools.Errorf("this command was allowed without asking because it would run in the sandbox, but it would not any more (%s); nothing was run. Run it again: it will be asked about or refused under the current settings.", st.Reason)
		r.SetDetail("sandbox", false)
		return nil, &r
	}
	if !st.Enabled {
		return nil, nil
	}
	s := &sandboxed{mode: mode, dir: dir, st: st}
	switch s.mode {
	case sandbox.Refused:
		r := tools.Errorf("%s", sb.Refusal())
		r.SetDetail("sandbox", false)
		return nil, &r
	case sandbox.Confined:
		run, err := sb.Prepare(dir)
		if err != nil {
			// Fail closed: a command meant for the sandbox never runs outside it.
			r := tools.Errorf("the sandbox could not be prepared (%v); nothing was run.", err)
			r.SetDetail("sandbox", false)
			return nil, &r
		}
		s.run = run
		spec.Wrap = run.Wrap
		spec.Env = append(spec.Env, run.Env...)
	}
	return s, nil
}

// blocked is what the sandbox stopped a failed command from doing, judged
// from its output (EPERM/EACCES of confined paths, the proxy's refusals);
// nil for a command that succeeded or did not run confined.
func (s *sandboxed) blocked(failed bool, output string) []string {
	if s == nil || s.mode != sandbox.Confined || !failed {
		return nil
	}
	return s.run.Explain(output, s.dir).Messages
}

// done records in r's details how the command ran and what the sandbox
// blocked (the text already says it).
func (s *sandboxed) done(r *tools.Result, blocked []string) {
	if s == nil {
		return
	}
	r.SetDetail("sandbox", s.mode == sandbox.Confined)
	switch s.mode {
	case sandbox.Excluded:
		r.SetDetail("sandboxReason", "excluded by sandbox.excludedCommands")
		return
	case sandbox.Unconfined:
		r.SetDetail("sandboxReason", s.st.Reason)
		return
	}
	if len(blocked) > 0 {
		r.SetDetail("sandboxBlocked", blocked)
	}
}
