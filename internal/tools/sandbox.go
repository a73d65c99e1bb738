package tools

import (
	"fmt"
	"strings"

	"github.com/agentls/agentls/internal/proc"
	"github.com/agentls/agentls/internal/sandbox"
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
func confine(c *Call, command, dir string, spec *proc.Spec) (*sandboxed, *Result) {
	sb := c.Env.Sandbox
	st := sb.Status()
	mode := sb.ModeOf(command)
	if c.sandboxOnly && mode != sandbox.Confined {
		r := Errorf("this command was allowed without asking because it would run in the sandbox, but it would not any more (%s); nothing was run. Run it again: it will be asked about or refused under the current settings.", st.Reason)
		r.setDetail("sandbox", false)
		return nil, &r
	}
	if !st.Enabled {
		return nil, nil
	}
	s := &sandboxed{mode: mode, dir: dir, st: st}
	switch s.mode {
	case sandbox.Refused:
		r := Errorf("%s", sb.Refusal())
		r.setDetail("sandbox", false)
		return nil, &r
	case sandbox.Confined:
		run, err := sb.Prepare(dir)
		if err != nil {
			// Fail closed: a command meant for the sandbox never runs outside it.
			r := Errorf("the sandbox could not be prepared (%v); nothing was run.", err)
			r.setDetail("sandbox", false)
			return nil, &r
		}
		s.run = run
		spec.Wrap = run.Wrap
		spec.Env = append(spec.Env, run.Env...)
	}
	return s, nil
}

// done releases the run and tells the model what the sandbox blocked.
func (s *sandboxed) done(r *Result, output string) {
	if s == nil {
		return
	}
	r.setDetail("sandbox", s.mode == sandbox.Confined)
	switch s.mode {
	case sandbox.Excluded:
		r.setDetail("sandboxReason", "excluded by sandbox.excludedCommands")
		return
	case sandbox.Unconfined:
		r.setDetail("sandboxReason", s.st.Reason)
		return
	}
	if !r.IsError {
		return
	}
	b := s.run.Explain(output, s.dir)
	if len(b.Messages) == 0 {
		return
	}
	r.setDetail("sandboxBlocked", b.Messages)
	r.Content[0].Text += "\n" + fmt.Sprintf("[%s]", strings.Join(b.Messages, "; "))
}
