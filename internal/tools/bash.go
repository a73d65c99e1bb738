package tools

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/agentls/agentls/internal/editguard"
	"github.com/agentls/agentls/internal/ops"
	"github.com/agentls/agentls/internal/proc"
	"github.com/agentls/agentls/internal/shell"
	"github.com/agentls/agentls/internal/spill"
)

// Limits of the bash tool.
const (
	BashDefaultTimeout = int(proc.DefaultTimeout / time.Second) // 120 s
	BashMaxTimeout     = int(proc.MaxTimeout / time.Second)     // 600 s
	BashTailLines      = proc.TailLines
	BashTailBytes      = proc.TailBytes
	BashKillGrace      = int(proc.KillGrace / time.Second)
	BashFailureLines   = proc.MaxFailureLines
)

type bashInput struct {
	Command string `json:"command" jsonschema:"the command line, run with bash -c in the workspace root (or cwd)"`
	Timeout int    `json:"timeout,omitzero" jsonschema:"seconds before the command is stopped"`
	Cwd     string `json:"cwd,omitzero" jsonschema:"working directory inside the workspace (default: the workspace root)"`
}

func bashDescription(l Limits) string {
	return fmt.Sprintf(`Run a shell command in the workspace (bash -c, or sh where bash is absent).

When to use: to build, test, run programs, use git, or anything the other tools cannot do. Do not use it to read, search, list or edit files: {{read}}, {{grep}}, {{find}}, {{ls}}, {{edit}} and {{write}} are faster, safer and their output is made for you.

Parameters: command; timeout in seconds (default %d, maximum %d); cwd, a directory inside the workspace. stdin is empty (/dev/null) and pagers and editors are disabled (PAGER=cat, GIT_PAGER=cat, GIT_TERMINAL_PROMPT=0), so interactive commands fail instead of hanging.

Output: stdout and stderr interleaved, with colour codes and progress-bar redraws cleaned up. Only the last %d lines or %d bytes are kept; when output is cut, the full output is saved to a file you can read (the notice gives its path and the line range shown) and up to %d lines from the cut part that look like failures (error, FAIL, panic:, Traceback, …) are listed first. Files you had read that the command changed are listed; read them again before editing them.

Errors: a non-zero exit code is an error result with the code; on timeout or cancellation the command's whole process group gets SIGTERM, then SIGKILL after %d seconds, and the output so far is returned.`,
		l.BashTimeout, l.BashMaxTimeout, l.BashLines, l.BashBytes, BashFailureLines, BashKillGrace)
}

// NewBash returns the bash tool enforcing l.
func NewBash(l Limits) *Tool {
	l = l.withDefaults()
	return Define(Spec[bashInput]{
		Name:           "bash",
		Description:    bashDescription(l),
		MaxResultBytes: l.BashBytes + 16*1024,
		KeepTail:       true,
		OpenWorld:      true,
		Aliases:        map[string]string{"script": "command", "workdir": "cwd", "working_directory": "cwd", "directory": "cwd", "dir": "cwd"},
		PrepareRaw: func(args map[string]any, n *Normalization) {
			millisecondTimeout(args, n, l.BashMaxTimeout)
			if truthy(args["run_in_background"]) {
				n.refuse("run_in_background is not supported: bash waits for the command (up to its timeout) and returns its output. To leave something running, start it in the background inside the command and return at once, e.g. {\"command\": \"nohup npm run dev > dev.log 2>&1 &\"}, then read dev.log.")
			}
		},
		Labels: func(in bashInput) Labels {
			a := shell.Analyze(in.Command, shell.Options{})
			return Labels{ReadOnly: a.ReadOnly, Destructive: a.Destructive, ConcurrencySafe: a.ReadOnly}
		},
		Tweak: func(s map[string]any) {
			prop(s, "timeout")["minimum"] = 1.0
			prop(s, "timeout")["maximum"] = float64(l.BashMaxTimeout)
			prop(s, "timeout")["description"] = fmt.Sprintf("seconds before the command is stopped (default %d, maximum %d)", l.BashTimeout, l.BashMaxTimeout)
		},
		Run: func(ctx context.Context, c *Call, in bashInput) (Result, error) { return runBash(ctx, c, in, l) },
	})
}

// millisecondTimeout reads a timeout given in milliseconds as seconds:
// Claude Code's and Codex's shell tools take milliseconds (timeout: 120000,
// timeout_ms), and a timeout above the maximum (maxSeconds) that is a whole
// number of seconds in milliseconds (1000 ≤ v ≤ maxSeconds×1000) cannot
// mean anything else. Any other value is left for validation to refuse.
func millisecondTimeout(args map[string]any, n *Normalization, maxSeconds int) {
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
		n.add("%s: %v → timeout %v (milliseconds read as seconds)", key, v, sec)
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

func runBash(ctx context.Context, c *Call, in bashInput, l Limits) (Result, error) {
	if strings.TrimSpace(in.Command) == "" {
		return Errorf("command is empty; give a shell command line, e.g. {\"command\": \"go test ./...\"}."), nil
	}
	cwd := in.Cwd
	if cwd == "" {
		cwd = "."
	}
	p, err := c.Resolve(cwd)
	if err != nil {
		return Errorf("cwd: %v", err), nil
	}
	if p.Folder != nil && c.Env.refresh(p.Folder) == ops.FolderGone {
		// Not followed: the command would run wherever the new name leads.
		return Errorf("the workspace folder %s is no longer the directory agentls opened (it was removed, or replaced by a symbolic link); nothing was run. Restore the folder, or reopen the workspace.", p.Folder.Root), nil
	}
	fi, err := c.Env.FS.Stat(p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return Errorf("cwd %s does not exist.%s Use a directory inside the workspace (ls shows what is there) or omit cwd to run in the workspace root.", p.Display(), c.Env.didYouMean(p, suggestDirs)), nil
	case err != nil:
		return Errorf("cwd %s cannot be used (%s); omit cwd to run in the workspace root, or give another directory.", p.Display(), errReason(err)), nil
	}
	if !fi.IsDir() {
		return Errorf("cwd %s is a file, not a directory; omit cwd or give a directory.", p.Display()), nil
	}
	timeout := time.Duration(l.BashTimeout) * time.Second
	if in.Timeout > 0 {
		timeout = time.Duration(in.Timeout) * time.Second
	}
	return runCommand(ctx, c, in.Command, p.OS(), timeout, "bash", l,
		fmt.Sprintf("Raise timeout (maximum %d s) or run the command in smaller steps.", l.BashMaxTimeout))
}

// runCommand runs a command line through the operations layer with the
// bash tool's governance and l's output and timeout limits; extension
// tools use it too.
// runCommand runs command with the bash tool's machinery; onTimeout is the
// advice a timed-out result ends with.
func runCommand(ctx context.Context, c *Call, command, dir string, timeout time.Duration, spillName string, l Limits, onTimeout string) (Result, error) {
	spec := proc.Spec{
		Command:    command,
		Dir:        dir,
		Env:        proc.BaseEnv(os.Environ()),
		Timeout:    timeout,
		MaxTimeout: time.Duration(l.BashMaxTimeout) * time.Second,
		TailLines:  l.BashLines,
		TailBytes:  l.BashBytes,
		SpillName:  spillName,
		Spill:      c.Env.SpillDir,
		OnProgress: func(tail string) {
			c.Reporter.Progress(Progress{Output: tail})
		},
	}
	var before editguard.Snapshot
	if c.Env.Guard != nil {
		before = c.Env.Guard.Snapshot()
	}
	res, err := c.Env.FS.Exec(ctx, spec)
	switch {
	case errors.Is(err, proc.ErrCommandNUL):
		return Errorf("%v; nothing was run. Leave the NUL out (printf '\\0' makes one at run time), or put binary data in a file.", err), nil
	case errors.Is(err, proc.ErrCommandTooLong), errors.Is(err, syscall.E2BIG):
		return Errorf("the command is %d bytes, more than one command line can carry (%d bytes); nothing was run. Write the long part to a file (write) and have the command read it.", len(command), proc.MaxCommandBytes), nil
	case errors.Is(err, fs.ErrPermission):
		// exec reports a directory it could not enter as the shell's fault.
		return Errorf("could not start the command in %s: permission denied (the directory cannot be entered, or the shell cannot be run); give another cwd, or omit it.", dir), nil
	case err != nil:
		return Errorf("could not start the command: %v", err), nil
	}
	r := Text(formatCommand(res, timeout, l, onTimeout))
	r.IsError = res.ExitCode != 0 || res.TimedOut || res.Cancelled
	if c.Env.Guard != nil {
		var changed []string
		for _, p := range c.Env.Guard.ChangedSince(before, "changed by a bash command") {
			changed = append(changed, p.Display())
		}
		if len(changed) > 0 {
			r.Content[0].Text += "\nChanged by this command (read them again before editing): " + strings.Join(changed, ", ")
			r.setDetail("changedFiles", changed)
		}
	}
	r.setDetail("exitCode", res.ExitCode)
	r.setDetail("totalLines", res.TotalLines)
	if res.SpillPath != "" {
		r.setDetail("spillPath", res.SpillPath)
	}
	if res.TimedOut {
		r.setDetail("timedOut", true)
	}
	return r, nil
}

func formatCommand(res proc.Result, timeout time.Duration, l Limits, onTimeout string) string {
	var b strings.Builder
	if res.Truncated {
		if len(res.FailureLines) > 0 {
			fmt.Fprintf(&b, "Lines from the cut part that look like failures (%d of %d):\n", len(res.FailureLines), max(res.FailureMatches, len(res.FailureLines)))
			for _, l := range res.FailureLines {
				fmt.Fprintf(&b, "%6d→%s\n", l.N, l.Text)
			}
		}
		fmt.Fprintf(&b, "[Output cut: showing lines %d-%d of %d (the last %d lines / %d bytes).", res.ShownFrom, res.ShownTo, res.TotalLines, l.BashLines, l.BashBytes)
		switch {
		case res.SpillPath != "" && res.SpillCutBytes > 0:
			// The spill file has a cap: say what it holds, not "full".
			fmt.Fprintf(&b, " Only the start of the output is saved, in %s: it stopped near the spill file's size cap (%d MiB) and %d bytes more were not saved — read it with read {\"path\": %q, \"offset\": 1}.", res.SpillPath, spill.MaxFileBytes>>20, res.SpillCutBytes, res.SpillPath)
		case res.SpillPath != "":
			fmt.Fprintf(&b, " Full output: %s — read it with read {\"path\": %q, \"offset\": 1}.", res.SpillPath, res.SpillPath)
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
func RunExtensionCommand(ctx context.Context, c *Call, command string, timeout time.Duration) (Result, error) {
	p, err := c.Resolve(".")
	if err != nil {
		return Errorf("%v", err), nil
	}
	return runCommand(ctx, c, command, p.OS(), timeout, c.Tool, c.Env.Limits(),
		"This tool's timeout is set by its definition file, not by the call: run it on less at a time, or run the command with bash and a larger timeout.")
}
