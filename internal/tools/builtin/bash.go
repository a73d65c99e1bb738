package builtin

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/agentls/agentls/internal/editguard"
	"github.com/agentls/agentls/internal/jobs"
	"github.com/agentls/agentls/internal/mention"
	"github.com/agentls/agentls/internal/ops"
	"github.com/agentls/agentls/internal/proc"
	"github.com/agentls/agentls/internal/shell"
	"github.com/agentls/agentls/internal/spill"
	"github.com/agentls/agentls/internal/tools"
)

// Limits of the bash tool.
const (
	BashKillGrace    = int(proc.KillGrace / time.Second)
	BashFailureLines = proc.MaxFailureLines
	// BashJobEarlyWait is how long (s) a background start waits for a failure.
	BashJobEarlyWait = int(jobs.EarlyWait / time.Second)
	// BashJobKeptMinutes is how long a finished job stays readable.
	BashJobKeptMinutes = int(jobs.KeepFinished / time.Minute)
)

type bashInput struct {
	Command         string `json:"command" jsonschema:"the command line, run with bash -c in the workspace root (or cwd)"`
	Timeout         int    `json:"timeout,omitzero" jsonschema:"seconds before the command is stopped"`
	Cwd             string `json:"cwd,omitzero" jsonschema:"working directory inside the workspace (default: the workspace root)"`
	RunInBackground bool   `json:"run_in_background,omitzero" jsonschema:"start the command as a background job and return at once with its job id (dev servers, watchers)"`
}

func bashDescription(l tools.Limits) string {
	return fmt.Sprintf(`Run a shell command in the workspace (bash -c, or sh where bash is absent).

When to use: to build, test, run programs, use git, or anything the other tools cannot do. Do not use it to read, search, list or edit files: {{read}}, {{grep}}, {{find}}, {{ls}}, {{edit}} and {{write}} are faster, safer and their output is made for you.

Parameters: command; timeout in seconds (default %d, maximum %d); cwd, a directory inside the workspace. stdin is empty (/dev/null) and pagers and editors are disabled (PAGER=cat, GIT_PAGER=cat, GIT_TERMINAL_PROMPT=0), so interactive commands fail instead of hanging.

Output: stdout and stderr interleaved, with colour codes and progress-bar redraws cleaned up. A result is at most %d lines and %d bytes, notices included: the end of the output is kept; when output is cut, the full output is saved to a file you can read (the notice gives its path and the line range shown) and up to %d lines from the cut part that look like failures (error, FAIL, panic:, Traceback, …) are listed first. Files you had read that the command changed are listed; read them again before editing them.

Errors: a non-zero exit code is an error result with the code; on timeout or cancellation the command's whole process group gets SIGTERM, then SIGKILL after %d seconds, and the output so far is returned.

Background: with run_in_background: true the command starts the same way (its own process group, the same permissions) as a job (job-1, job-2, …); the call waits at most %d second for an early failure, which it reports, and otherwise returns the job id and the output so far. No timeout applies to a job unless you give one. Read what it prints with bash_output {"job": "job-1"} (it can wait for new output and filter it) and stop it with bash_kill {"job": "job-1"}; both tools appear once a job exists. At most %d jobs run at once; finished jobs are kept %d minutes (%d jobs at most). Jobs are stopped when the session ends. Use it for dev servers, watchers and other commands that do not end by themselves.`,
		l.BashTimeout, l.BashMaxTimeout, l.BashLines, l.BashBytes, BashFailureLines, BashKillGrace,
		BashJobEarlyWait, jobs.MaxRunning, BashJobKeptMinutes, jobs.MaxKept)
}

// NewBash returns the bash tool enforcing l.
func NewBash(l tools.Limits) *tools.Tool {
	l = l.WithDefaults()
	return tools.Define(tools.Spec[bashInput]{
		Name:        "bash",
		Title:       "Run shell command",
		Description: bashDescription(l),
		// The whole result, notices included (fitCommand).
		MaxResultBytes: l.BashBytes,
		KeepTail:       true,
		OpenWorld:      true,
		Aliases:        map[string]string{"script": "command", "workdir": "cwd", "working_directory": "cwd", "directory": "cwd", "dir": "cwd"},
		PrepareRaw: func(args map[string]any, n *tools.Normalization) {
			millisecondTimeout(args, n, l.BashMaxTimeout)
		},
		Labels: func(in bashInput) tools.Labels {
			a := shell.Analyze(in.Command, shell.Options{})
			return tools.Labels{ReadOnly: a.ReadOnly, Destructive: a.Destructive, ConcurrencySafe: a.ReadOnly}
		},
		Tweak: func(s map[string]any) {
			prop(s, "timeout")["minimum"] = 1.0
			prop(s, "timeout")["maximum"] = float64(l.BashMaxTimeout)
			prop(s, "timeout")["description"] = fmt.Sprintf("seconds before the command is stopped (default %d, maximum %d; a background job has none unless given)", l.BashTimeout, l.BashMaxTimeout)
		},
		Run: func(ctx context.Context, c *tools.Call, in bashInput) (tools.Result, error) {
			return runBash(ctx, c, in, l)
		},
		Check: planBash,
	})
}

// millisecondTimeout reads a timeout given in milliseconds as seconds:
// Claude Code's and Codex's shell tools take milliseconds (timeout: 120000,
// timeout_ms), and a timeout above the maximum (maxSeconds) that is a whole
// number of seconds in milliseconds (1000 ≤ v ≤ maxSeconds×1000) cannot
// mean anything else. Any other value is left for validation to refuse.
func millisecondTimeout(args map[string]any, n *tools.Normalization, maxSeconds int) {
	ms := func(v any) (float64, bool) {
		switch x := v.(type) {
		case float64:
			return x, true
		case string:
			f, err := strconv.ParseFloat(strings.TrimSpace(x), 64)
			return f, err == nil
		}
		return 0, false
	}
	toSeconds := func(key string, v float64) {
		sec := math.Ceil(v / 1000)
		n.Add("%s: %v → timeout %v (milliseconds read as seconds)", key, v, sec)
		delete(args, key)
		args["timeout"] = sec
	}
	maxMs := float64(maxSeconds) * 1000
	if v, ok := ms(args["timeout_ms"]); ok && v > 0 && v <= maxMs {
		if _, both := args["timeout"]; !both {
			toSeconds("timeout_ms", v)
			return
		}
	}
	if v, ok := ms(args["timeout"]); ok && v > float64(maxSeconds) && v <= maxMs && math.Mod(v, 1000) == 0 {
		toSeconds("timeout", v)
	}
}

func runBash(ctx context.Context, c *tools.Call, in bashInput, l tools.Limits) (tools.Result, error) {
	p, refusal := checkBashCwd(c, in)
	if refusal != nil {
		return *refusal, nil
	}
	if in.RunInBackground {
		return startJob(c, in, p.OS(), l), nil
	}
	timeout := time.Duration(l.BashTimeout) * time.Second
	if in.Timeout > 0 {
		timeout = time.Duration(in.Timeout) * time.Second
	}
	return runCommand(ctx, c, in.Command, p.OS(), timeout, "bash", l,
		fmt.Sprintf("Raise timeout (maximum %d s) or run the command in smaller steps.", l.BashMaxTimeout))
}

// checkBashCwd refuses an empty command and a cwd that cannot be run in;
// otherwise it returns the cwd.
func checkBashCwd(c *tools.Call, in bashInput) (ops.Path, *tools.Result) {
	refuse := func(r tools.Result) (ops.Path, *tools.Result) { return ops.Path{}, &r }
	if strings.TrimSpace(in.Command) == "" {
		return refuse(tools.Errorf("command is empty; give a shell command line, e.g. {\"command\": \"go test ./...\"}."))
	}
	cwd := in.Cwd
	if cwd == "" {
		cwd = "."
	}
	p, err := c.Resolve(cwd)
	if err != nil {
		return refuse(tools.Errorf("cwd: %v", err))
	}
	if p.Folder != nil && refresh(c.Env, p.Folder) == ops.FolderGone {
		// Not followed: the command would run wherever the new name leads.
		return refuse(tools.Errorf("the workspace folder %s is no longer the directory agentls opened (it was removed, or replaced by a symbolic link); nothing was run. Restore the folder, or reopen the workspace.", p.Folder.Root))
	}
	fi, err := c.Env.FS.Stat(p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return refuse(c.Errorf("cwd %s does not exist.%s Use a directory inside the workspace ({{ls}} shows what is there) or omit cwd to run in the workspace root.", p.Display(), didYouMean(c.Env, p, suggestDirs)))
	case err != nil:
		return refuse(tools.Errorf("cwd %s cannot be used (%s); omit cwd to run in the workspace root, or give another directory.", p.Display(), errReason(err)))
	}
	if !fi.IsDir() {
		return refuse(tools.Errorf("cwd %s is a file, not a directory; omit cwd or give a directory.", p.Display()))
	}
	return p, nil
}

// planBash is bash's Check: the cwd checks of runBash, and a command line
// that bash itself cannot parse (bash -n reads without running; asked
// only when agentls's own parser fails, which may be stricter).
func planBash(ctx context.Context, c *tools.Call, in bashInput) (tools.Plan, *tools.Result) {
	if _, refusal := checkBashCwd(c, in); refusal != nil {
		return tools.Plan{}, refusal
	}
	if shell.Analyze(in.Command, shell.Options{}).ParseError == nil {
		return tools.Plan{}, nil
	}
	ctx, cancel := context.WithTimeout(ctx, bashParseTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-n", "-c", in.Command)
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if err == nil || !errors.As(err, &exit) || ctx.Err() != nil {
		return tools.Plan{}, nil // parses, or bash could not judge it: the run will tell
	}
	msg := strings.TrimSpace(strings.ReplaceAll(string(out), "bash: -c: ", ""))
	return tools.Plan{}, new(c.Errorf("the command does not parse, so nothing was run: %s. Fix the quoting or syntax and call {{bash}} again.", msg))
}

// bashParseTimeout bounds planBash's bash -n.
const bashParseTimeout = 2 * time.Second

// runCommand runs a command line through the operations layer with the
// bash tool's governance and l's output and timeout limits; extension
// tools use it too.
// runCommand runs command with the bash tool's machinery; onTimeout is the
// advice a timed-out result ends with.
func runCommand(ctx context.Context, c *tools.Call, command, dir string, timeout time.Duration, spillName string, l tools.Limits, onTimeout string) (tools.Result, error) {
	// fitCommand gives back the tail's start when the notices do not fit
	// beside it.
	spec := commandSpec(c, command, dir, timeout, spillName, l)
	spec.OnProgress = func(tail string) {
		c.Reporter.Progress(tools.Progress{Output: tail})
	}
	sbx, refused := confine(c, command, dir, &spec)
	if refused != nil {
		return *refused, nil
	}
	if sbx != nil && sbx.run != nil {
		defer sbx.run.Close()
	}
	var before editguard.Snapshot
	if c.Env.Guard != nil {
		before = c.Env.Guard.Snapshot()
	}
	res, err := startCommand(ctx, c.Env, spec)
	if err != nil {
		return startFailure(err, command, dir, c.Names()), nil
	}
	var changed []string
	if c.Env.Guard != nil {
		for _, p := range c.Env.Guard.ChangedSince(before, "changed by a bash command") {
			changed = append(changed, p.Display())
		}
	}
	save := func(out string) (string, error) {
		if c.Env.SpillDir == nil {
			return "", errors.New("no spill directory")
		}
		return c.Env.SpillDir.Save(spillName, []byte(out))
	}
	failed := res.ExitCode != 0 || res.TimedOut || res.Cancelled
	// What the sandbox blocked is judged from the whole output, and told
	// within the result's budget like the rest.
	blocked := sbx.blocked(failed, res.Output)
	var trailer string
	if len(changed) > 0 {
		trailer += c.Names().Render("\nChanged by this command ({{read}} them again before editing): ") + strings.Join(changed, ", ")
	}
	if len(blocked) > 0 {
		trailer += "\n[" + strings.Join(blocked, "; ") + "]"
	}
	r := tools.Text(fitCommand(&res, timeout, l, onTimeout, trailer, save, c.Names()))
	r.IsError = failed
	if len(changed) > 0 {
		r.SetDetail("changedFiles", changed)
	}
	r.SetDetail("exitCode", res.ExitCode)
	r.SetDetail("totalLines", res.TotalLines)
	if res.SpillPath != "" {
		r.SetDetail("spillPath", res.SpillPath)
	}
	if res.TimedOut {
		r.SetDetail("timedOut", true)
	}
	sbx.done(&r, blocked)
	return r, nil
}

// commandSpec is how every command of the bash machinery runs: foreground,
// background and extension tools alike.
func commandSpec(c *tools.Call, command, dir string, timeout time.Duration, spillName string, l tools.Limits) proc.Spec {
	return proc.Spec{
		Command:    command,
		Dir:        dir,
		Env:        proc.BaseEnv(os.Environ()),
		Timeout:    timeout,
		MaxTimeout: time.Duration(l.BashMaxTimeout) * time.Second,
		TailLines:  l.BashLines,
		TailBytes:  l.BashBytes,
		SpillName:  spillName,
		Spill:      c.Env.SpillDir,
	}
}

// startCommand is the one start path of every command (foreground bash,
// background jobs, extension tools): it runs spec to its end, in its own
// process group, which the session's reaper kills at Close if the command
// left it running. spec.Dir is opened through its folder's root
// (ops.FS.OpenDir), so the command starts in the directory that was
// checked.
func startCommand(ctx context.Context, env *tools.Env, spec proc.Spec) (proc.Result, error) {
	if spec.Reaper == nil {
		spec.Reaper = env.Reaper
	}
	if spec.DirFile == nil {
		d, err := env.FS.OpenDir(spec.Dir)
		if err != nil {
			return proc.Result{}, err
		}
		defer d.Close()
		spec.DirFile = d
	}
	return proc.Run(ctx, spec)
}

// startFailure tells the model why a command could not be started.
func startFailure(err error, command, dir string, names mention.Prefix) tools.Result {
	switch {
	case errors.Is(err, proc.ErrCommandNUL):
		return tools.Errorf("%v; nothing was run. Leave the NUL out (printf '\\0' makes one at run time), or put binary data in a file.", err)
	case errors.Is(err, proc.ErrCommandTooLong), errors.Is(err, syscall.E2BIG):
		return tools.ErrorIn(names, "the command is %d bytes, more than one command line can carry (%d bytes); nothing was run. Write the long part to a file ({{write}}) and have the command read it.", len(command), proc.MaxCommandBytes)
	case errors.Is(err, fs.ErrPermission):
		// exec reports a directory it could not enter as the shell's fault.
		return tools.Errorf("could not start the command in %s: permission denied (the directory cannot be entered, or the shell cannot be run); give another cwd, or omit it.", dir)
	default:
		return tools.Errorf("could not start the command: %v", err)
	}
}

// fitCommand is the result text of res within l.BashBytes and
// l.BashLines, notices included: when failure lines, the notices or the
// changed files do not fit beside the tail, lines are given back from the
// tail's start and the notice's line range says what is shown. An output
// the runner kept whole is saved first (save) so the notice can say where.
func fitCommand(res *proc.Result, timeout time.Duration, l tools.Limits, onTimeout, trailer string, save func(string) (string, error), names mention.Prefix) string {
	saved := res.Truncated // the runner spilled the full output (or says why not)
	// Failure lines take at most a quarter of the result: the end of the
	// output is what the model reads first.
	for n, size := 0, 0; n < len(res.FailureLines); n++ {
		if size += len(res.FailureLines[n].Text) + 8; size > l.BashBytes/4 || n+2 > l.BashLines/4 {
			res.FailureLines = res.FailureLines[:n]
			break
		}
	}
	for {
		text := formatCommand(*res, timeout, l, onTimeout, saved, names) + trailer
		over, extra := len(text)-l.BashBytes, tools.LineCount(text)-l.BashLines
		out := res.Output
		last := strings.LastIndexByte(strings.TrimSuffix(out, "\n"), '\n') + 1 // the last line's start
		if over <= 0 && extra <= 0 || last == 0 {
			return text // governance holds what is left over
		}
		i, k := 0, 0
		for i < last && (i < over || k < extra || k == 0) {
			i += strings.IndexByte(out[i:], '\n') + 1
			k++
		}
		if !res.Truncated {
			res.Truncated = true
			res.ShownFrom, res.ShownTo = max(res.ShownFrom, 1), max(res.ShownTo, res.TotalLines)
			if p, err := save(out); err == nil {
				res.SpillPath, saved = p, true
			}
		}
		res.Output = out[i:]
		res.ShownFrom += k
	}
}

// formatCommand is res as the model reads it; saved says the cut part of
// the output is in res.SpillPath (or why it is not).
func formatCommand(res proc.Result, timeout time.Duration, l tools.Limits, onTimeout string, saved bool, names mention.Prefix) string {
	var b strings.Builder
	if res.Truncated {
		if len(res.FailureLines) > 0 {
			fmt.Fprintf(&b, "Lines from the cut part that look like failures (%d of %d):\n", len(res.FailureLines), max(res.FailureMatches, len(res.FailureLines)))
			for _, l := range res.FailureLines {
				fmt.Fprintf(&b, "%6d→%s\n", l.N, l.Text)
			}
		}
		fmt.Fprintf(&b, "[Output cut: showing lines %d-%d of %d (a result is at most %d lines / %d bytes, notices included).", res.ShownFrom, res.ShownTo, res.TotalLines, l.BashLines, l.BashBytes)
		switch {
		case !saved:
			b.WriteString(" The lines before were not saved.")
		case res.SpillPath != "" && res.SpillCutBytes > 0:
			// The spill file has a cap: say what it holds, not "full".
			b.WriteString(names.Sprintf(" Only the start of the output is saved, in %s: it stopped near the spill file's size cap (%d MiB) and %d bytes more were not saved — read it with {{read}} {\"path\": %q, \"offset\": 1}.", res.SpillPath, spill.MaxFileBytes>>20, res.SpillCutBytes, res.SpillPath))
		case res.SpillPath != "":
			b.WriteString(names.Sprintf(" Full output: %s — read it with {{read}} {\"path\": %q, \"offset\": 1}.", res.SpillPath, res.SpillPath))
		case res.SpillError != "":
			fmt.Fprintf(&b, " The full output could not be saved: %s.", res.SpillError)
		}
		b.WriteString("]\n")
	}
	b.WriteString(res.Output)
	if res.Output != "" && !strings.HasSuffix(res.Output, "\n") {
		b.WriteByte('\n')
	}
	switch {
	case res.TimedOut:
		fmt.Fprintf(&b, "[Timed out after %s: the process group was stopped with %s. %s]", timeout, res.KilledHow, onTimeout)
	case res.Cancelled:
		fmt.Fprintf(&b, "[Cancelled: the process group was stopped with %s.]", res.KilledHow)
	case res.Signal != "":
		fmt.Fprintf(&b, "[Killed by signal %s.]", res.Signal)
	case res.ExitCode != 0:
		fmt.Fprintf(&b, "[Exit code %d]", res.ExitCode)
	case res.Output == "":
		b.WriteString("[No output; exit code 0]")
	}
	return strings.TrimRight(b.String(), "\n")
}

// RunExtensionCommand runs an extension tool's rendered command with the
// bash tool's machinery, in the first workspace folder's root.
func RunExtensionCommand(ctx context.Context, c *tools.Call, command string, timeout time.Duration) (tools.Result, error) {
	p, err := c.Resolve(".")
	if err != nil {
		return tools.Errorf("%v", err), nil
	}
	return runCommand(ctx, c, command, p.OS(), timeout, c.Tool, c.Env.Limits(),
		c.Hintf("This tool's timeout is set by its definition file, not by the call: run it on less at a time, or run the command with {{bash}} and a larger timeout."))
}
