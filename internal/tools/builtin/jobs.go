package builtin

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/agentls/agentls/internal/jobs"
	"github.com/agentls/agentls/internal/mention"
	"github.com/agentls/agentls/internal/proc"
	"github.com/agentls/agentls/internal/sandbox"
	"github.com/agentls/agentls/internal/tools"
)

// Names of the job tools, deferred until a background job exists.
const (
	BashOutputName = "bash_output"
	BashKillName   = "bash_kill"
	// BashOutputMaxWait is bash_output's longest wait in seconds.
	BashOutputMaxWait = int(jobs.MaxWait / time.Second)
)

// ListFor is what a tools/list in format shows: the active tools (all with
// includeDeferred). VS Code's tools are contributed statically (its
// package.json is generated from this list), so its list also holds the job
// tools a session activates only with its first job.
func ListFor(reg *tools.Registry, format string, includeDeferred bool) []*tools.Tool {
	if format != "vscode" || includeDeferred {
		return reg.List(includeDeferred)
	}
	var out []*tools.Tool
	for _, t := range reg.List(true) {
		if reg.IsActive(t.Name) || t.Name == BashOutputName || t.Name == BashKillName {
			out = append(out, t)
		}
	}
	return out
}

// JobTools returns bash_output and bash_kill enforcing l. They are
// deferred: the session activates them when the first job starts.
func JobTools(l tools.Limits) []*tools.Tool {
	l = l.WithDefaults()
	return []*tools.Tool{newBashOutput(l), newBashKill()}
}

type bashOutputInput struct {
	Job    string  `json:"job" jsonschema:"the job id bash returned, e.g. job-1"`
	Wait   float64 `json:"wait,omitzero" jsonschema:"seconds to wait when there is no new output yet"`
	Filter string  `json:"filter,omitzero" jsonschema:"regular expression (RE2): show only matching lines"`
}

func bashOutputDescription(l tools.Limits) string {
	return fmt.Sprintf(`Read what a background job (bash with run_in_background) printed since your last bash_output of it.

When to use: to check a dev server, watcher or long build you started in the background, or to wait for it to print something (a "ready" line, a request, an error).

Parameters: job (e.g. "job-1"); wait, seconds to wait when nothing new has arrived yet (maximum %d): the call returns as soon as a new line (one matching filter, when given) or the job's end arrives; filter, a regular expression (RE2): only matching lines are shown and the number of the others is stated.

Output: the new lines, then the job's status (running, exited 0, killed by SIGTERM, …) and how long it has run. A line shows once it ends, or when the job ends. A job keeps its last %d lines or %d bytes in memory; older lines are in a spill file whose path the notice gives (read it with read).

Errors: an unknown or expired job id is an error listing the known jobs.`, BashOutputMaxWait, l.BashLines, l.BashBytes)
}

func newBashOutput(l tools.Limits) *tools.Tool {
	return tools.Define(tools.Spec[bashOutputInput]{
		Name:           BashOutputName,
		Description:    bashOutputDescription(l),
		MaxResultBytes: l.BashBytes + 16*1024,
		KeepTail:       true,
		Deferred:       true,
		Aliases:        map[string]string{"job_id": "job", "id": "job", "bash_id": "job", "shell_id": "job", "timeout": "wait", "pattern": "filter", "regex": "filter"},
		Static:         tools.Labels{ReadOnly: true, ConcurrencySafe: true},
		Tweak: func(s map[string]any) {
			w := prop(s, "wait")
			w["minimum"] = 0.0
			w["maximum"] = float64(BashOutputMaxWait)
			w["description"] = fmt.Sprintf("seconds to wait when there is no new output yet (maximum %d)", BashOutputMaxWait)
		},
		Run: func(ctx context.Context, c *tools.Call, in bashOutputInput) (tools.Result, error) {
			return runBashOutput(ctx, c, in, l), nil
		},
	})
}

type bashKillInput struct {
	Job string `json:"job" jsonschema:"the job id bash returned, e.g. job-1"`
}

var bashKillDescription = fmt.Sprintf(`Stop a background job (bash with run_in_background): SIGTERM to its whole process group, SIGKILL after %d seconds if anything is left.

Parameters: job (e.g. "job-1").

Output: the final status (killed by SIGTERM, or how it had ended already) and its last %d lines of output.

Errors: an unknown or expired job id is an error listing the known jobs.`, BashKillGrace, jobs.LastLines)

func newBashKill() *tools.Tool {
	return tools.Define(tools.Spec[bashKillInput]{
		Name:        BashKillName,
		Description: bashKillDescription,
		Deferred:    true,
		Aliases:     map[string]string{"job_id": "job", "id": "job", "bash_id": "job", "shell_id": "job"},
		// It stops only a job this session started, which the permission
		// step already let run, and changes no file: never asked, so a job
		// a read-only mode allowed can be stopped there too.
		Static: tools.Labels{ReadOnly: true},
		Run: func(ctx context.Context, c *tools.Call, in bashKillInput) (tools.Result, error) {
			return runBashKill(ctx, c, in), nil
		},
	})
}

// startJob starts a background job of in.Command in dir.
func startJob(c *tools.Call, in bashInput, dir string, l tools.Limits) tools.Result {
	if c.Env.Jobs == nil {
		return tools.Errorf("background jobs are not available here (no session job table); nothing was run. Run the command without run_in_background.")
	}
	var timeout time.Duration
	if in.Timeout > 0 {
		timeout = time.Duration(in.Timeout) * time.Second
	}
	spec := commandSpec(c, in.Command, dir, timeout, "bash", l)
	// A job is confined exactly as a foreground command; its sandbox run
	// (temp dir, proxy) lasts as long as the job.
	sbx, refused := confine(c, in.Command, dir, &spec)
	if refused != nil {
		return *refused
	}
	release := func() {
		if sbx != nil && sbx.run != nil {
			sbx.run.Close()
		}
	}
	exec := func(ctx context.Context, s proc.Spec) (proc.Result, error) {
		defer release()
		return startCommand(ctx, c.Env, s)
	}
	j, err := c.Env.Jobs.Start(spec, exec, c.ID)
	if err != nil {
		release()
		var tm *jobs.TooManyError
		if errors.As(err, &tm) {
			tm.Names = c.Names()
		}
		return tools.Errorf("%v", err)
	}
	if err := j.StartError(); err != nil {
		r := startFailure(err, in.Command, dir, c.Names())
		r.SetDetail("job", j.ID)
		r.SetDetail("status", j.Status())
		return r
	}
	o := j.Read(context.Background(), 0, nil, nil)
	var b strings.Builder
	writeJobLines(&b, j.ID, o, l, c.Names())
	r := tools.Result{}
	if o.Running {
		b.WriteString(c.Hintf("[%s is running in the background (%s so far). Read new output with {{bash_output}} {\"job\": %q} (\"wait\": seconds to wait for it, \"filter\": a regular expression); stop it with {{bash_kill}} {\"job\": %q}.]", j.ID, roundRuntime(o.Runtime), j.ID, j.ID))
	} else {
		fmt.Fprintf(&b, "[%s ended within its first %d s: %s.]", j.ID, BashJobEarlyWait, o.Status)
		r.IsError = j.Failed()
	}
	r.Content = tools.Text(b.String()).Content
	setJobDetails(&r, j.ID, o)
	if sbx != nil {
		r.SetDetail("sandbox", sbx.mode == sandbox.Confined)
	}
	return r
}

func runBashOutput(ctx context.Context, c *tools.Call, in bashOutputInput, l tools.Limits) tools.Result {
	if c.Env.Jobs == nil {
		return tools.Errorf("there are no background jobs in this session.")
	}
	j, err := c.Env.Jobs.Get(in.Job)
	if err != nil {
		return tools.Errorf("%v.", err)
	}
	var re *regexp.Regexp
	if in.Filter != "" {
		if re, err = regexp.Compile(in.Filter); err != nil {
			return tools.Errorf("filter %q is not a valid regular expression (RE2 syntax): %v.", in.Filter, err)
		}
	}
	wait := time.Duration(in.Wait * float64(time.Second))
	tick := func(latest string) {
		c.Reporter.Progress(tools.Progress{Message: fmt.Sprintf("waiting for output of %s", j.ID), Output: latest})
	}
	o := j.Read(ctx, wait, re, tick)
	var b strings.Builder
	writeJobLines(&b, j.ID, o, l, c.Names())
	switch n := o.To - o.From + 1; {
	case n <= 0 && wait > 0 && o.Running:
		fmt.Fprintf(&b, "[No new output in %s of waiting.]\n", wait.Round(time.Millisecond))
	case n <= 0:
		b.WriteString("[No new output since the last read.]\n")
	case re != nil:
		fmt.Fprintf(&b, "[Filter %q: %d of %d new lines (%d-%d) shown, %d did not match.]\n", in.Filter, len(o.Lines), n-o.Lost, o.From+o.Lost, o.To, o.Dropped)
	}
	if o.Running {
		fmt.Fprintf(&b, "[%s: running for %s.]", j.ID, roundRuntime(o.Runtime))
	} else {
		fmt.Fprintf(&b, "[%s: %s after %s.]", j.ID, o.Status, roundRuntime(o.Runtime))
	}
	r := tools.Text(b.String())
	setJobDetails(&r, j.ID, o)
	if re != nil {
		r.SetDetail("filteredOut", o.Dropped)
	}
	return r
}

func runBashKill(ctx context.Context, c *tools.Call, in bashKillInput) tools.Result {
	if c.Env.Jobs == nil {
		return tools.Errorf("there are no background jobs in this session.")
	}
	j, err := c.Env.Jobs.Get(in.Job)
	if err != nil {
		return tools.Errorf("%v.", err)
	}
	select {
	case <-j.Done():
		o := j.Last(jobs.LastLines)
		var b strings.Builder
		writeLast(&b, o)
		fmt.Fprintf(&b, "[%s had already ended: %s after %s; nothing was stopped.]", j.ID, o.Status, roundRuntime(o.Runtime))
		r := tools.Text(b.String())
		setJobDetails(&r, j.ID, o)
		return r
	default:
	}
	j.Kill(ctx)
	o := j.Last(jobs.LastLines)
	var b strings.Builder
	writeLast(&b, o)
	if o.Running {
		fmt.Fprintf(&b, "[%s: the stop was cancelled before the job ended; it may still be stopping.]", j.ID)
	} else {
		fmt.Fprintf(&b, "[%s stopped: %s after %s.]", j.ID, o.Status, roundRuntime(o.Runtime))
	}
	r := tools.Text(b.String())
	setJobDetails(&r, j.ID, o)
	return r
}

// writeJobLines writes a read's new lines, first saying which new lines are
// only in the spill file.
func writeJobLines(b *strings.Builder, id string, o jobs.Output, l tools.Limits, names mention.Prefix) {
	if o.Lost > 0 {
		fmt.Fprintf(b, "[Lines %d-%d of the new output are no longer in memory (a job keeps its last %d lines / %d bytes).", o.From, o.From+o.Lost-1, l.BashLines, l.BashBytes)
		switch {
		case o.SpillPath != "" && o.SpillCut > 0:
			b.WriteString(names.Sprintf(" The spill file %s holds the output from its start up to its size cap; read it with {{read}} {\"path\": %q, \"offset\": %d}.", o.SpillPath, o.SpillPath, o.From))
		case o.SpillPath != "":
			b.WriteString(names.Sprintf(" All of %s's output is in %s: {{read}} {\"path\": %q, \"offset\": %d}.", id, o.SpillPath, o.SpillPath, o.From))
		case o.SpillErr != "":
			fmt.Fprintf(b, " They could not be saved: %s.", o.SpillErr)
		}
		b.WriteString("]\n")
	}
	for _, line := range o.Lines {
		b.WriteString(line)
		b.WriteByte('\n')
	}
}

func writeLast(b *strings.Builder, o jobs.Output) {
	if len(o.Lines) == 0 {
		return
	}
	fmt.Fprintf(b, "Last lines (%d-%d):\n", o.From, o.To)
	for _, line := range o.Lines {
		b.WriteString(line)
		b.WriteByte('\n')
	}
}

func setJobDetails(r *tools.Result, id string, o jobs.Output) {
	r.SetDetail("job", id)
	r.SetDetail("status", o.Status)
	r.SetDetail("running", o.Running)
	r.SetDetail("runtimeMs", o.Runtime.Milliseconds())
	r.SetDetail("totalLines", o.To)
	if o.SpillPath != "" {
		r.SetDetail("spillPath", o.SpillPath)
	}
}

func roundRuntime(d time.Duration) time.Duration {
	if d < 10*time.Second {
		return d.Round(100 * time.Millisecond)
	}
	return d.Round(time.Second)
}
