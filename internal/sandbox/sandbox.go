package sandbox

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/agentls/agentls/internal/owner"
	"github.com/agentls/agentls/internal/sandbox/launcher"
	"github.com/agentls/agentls/internal/shell"
)

// UnavailableEnv, when set to a reason, makes the sandbox unavailable as
// if the kernel lacked Landlock: tests and users check the fallback with
// it (failIfUnavailable refuses, otherwise commands run unsandboxed).
const UnavailableEnv = "AGENTLS_SANDBOX_UNAVAILABLE"

// Options describe the session a Sandbox serves.
type Options struct {
	Folders   []string // workspace folders that may be written (absolute, symlink-free); read-only ones are not given
	Home      string
	TempDir   string   // parent of the per-session temp dir; "" = os.TempDir()
	DenyRead  []string // absolute paths the permission rules deny reading (Read(...))
	DenyWrite []string // absolute paths the permission rules deny writing (Edit(...), Write(...))
	// Exe is the agentls binary the launcher runs as; "" = /proc/self/exe.
	// The small launcher named Exe+LauncherSuffix (agentls-sandbox), when
	// it is installed next to it and runs the probe's trial, is used
	// instead (Linux).
	Exe string
}

// Status says whether commands are sandboxed and, when not, why.
type Status struct {
	Enabled   bool   `json:"enabled"`             // the settings ask for it
	Active    bool   `json:"active"`              // commands do run sandboxed
	Mechanism string `json:"mechanism,omitempty"` // "landlock+userns", "seatbelt"
	Reason    string `json:"reason,omitempty"`    // why it is not active
	// FailIfUnavailable: bash refuses every command while it is not active.
	FailIfUnavailable bool `json:"failIfUnavailable,omitempty"`
	AutoAllowBash     bool `json:"autoAllowBashIfSandboxed,omitempty"`
}

// Sandbox decides, for one session, whether and how a command is
// confined. Safe for concurrent use; Update swaps the settings.
type Sandbox struct {
	mu     sync.RWMutex
	s      Settings
	opts   Options
	tmp    string // the per-session temp dir, exported as TMPDIR
	status Status
	probe  probeResult
}

// New returns the session's sandbox under s. The platform is probed once
// (Linux: Landlock's ABI, and a trial run of the launcher); the caller
// owns the result and must Close it.
func New(s Settings, o Options) (*Sandbox, error) {
	sb := &Sandbox{opts: o}
	parent := o.TempDir
	if parent == "" {
		parent = os.TempDir()
	}
	if s.Enabled {
		cleanStale(parent)
		tmp, err := os.MkdirTemp(parent, fmt.Sprintf("agentls-sandbox-%d-", os.Getpid()))
		if err != nil {
			return nil, fmt.Errorf("sandbox: temp dir: %w", err)
		}
		sb.tmp = tmp
		sb.probe = probe(sb)
	}
	sb.set(s)
	return sb, nil
}

// Update replaces the settings and the deny rules' paths (a settings file
// changed, or the folders did). Enabling the sandbox in a session that
// started without it probes the platform then.
func (sb *Sandbox) Update(s Settings, folders, denyRead, denyWrite []string) error {
	if sb == nil {
		return nil
	}
	sb.mu.Lock()
	sb.opts.Folders, sb.opts.DenyRead, sb.opts.DenyWrite = folders, denyRead, denyWrite
	sb.mu.Unlock()
	if s.Enabled && sb.tmpDir() == "" {
		parent := sb.opts.TempDir
		if parent == "" {
			parent = os.TempDir()
		}
		tmp, err := os.MkdirTemp(parent, fmt.Sprintf("agentls-sandbox-%d-", os.Getpid()))
		if err != nil {
			return fmt.Errorf("sandbox: temp dir: %w", err)
		}
		sb.mu.Lock()
		sb.tmp = tmp
		sb.mu.Unlock()
		p := probe(sb)
		sb.mu.Lock()
		sb.probe = p
		sb.mu.Unlock()
	}
	sb.set(s)
	return nil
}

// cleanStale removes the temp dirs of sandboxes whose agentls has ended
// without removing its own (killed).
func cleanStale(parent string) {
	names, _ := filepath.Glob(filepath.Join(parent, "agentls-sandbox-*-*"))
	for _, n := range names {
		rest := strings.TrimPrefix(filepath.Base(n), "agentls-sandbox-")
		pid, err := strconv.Atoi(rest[:max(strings.IndexByte(rest, '-'), 0)])
		if err == nil && pid != os.Getpid() && !owner.Alive(pid) {
			_ = os.RemoveAll(n)
		}
	}
}

func (sb *Sandbox) tmpDir() string {
	sb.mu.RLock()
	defer sb.mu.RUnlock()
	return sb.tmp
}

func (sb *Sandbox) set(s Settings) {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	sb.s = s
	st := Status{Enabled: s.Enabled, FailIfUnavailable: s.FailIfUnavailable, AutoAllowBash: s.AutoAllowBash}
	switch {
	case !s.Enabled:
		st.Reason = "sandbox.enabled is not set"
	case sb.probe.err != "":
		st.Reason = sb.probe.err
	default:
		st.Active, st.Mechanism = true, sb.probe.mechanism
	}
	sb.status = st
}

// Status reports the sandbox's state.
func (sb *Sandbox) Status() Status {
	if sb == nil {
		return Status{Reason: "sandbox.enabled is not set"}
	}
	sb.mu.RLock()
	defer sb.mu.RUnlock()
	return sb.status
}

// Close removes the session's temp dir.
func (sb *Sandbox) Close() error {
	if sb == nil {
		return nil
	}
	tmp := sb.tmpDir()
	if tmp == "" {
		return nil
	}
	if err := os.RemoveAll(tmp); err != nil {
		return fmt.Errorf("sandbox: remove temp dir: %w", err)
	}
	return nil
}

// Mode is how one command is to run.
type Mode int

const (
	// Unconfined: the sandbox is off (not enabled, or unavailable without
	// failIfUnavailable); the normal permission flow applies.
	Unconfined Mode = iota
	// Excluded: the command matches excludedCommands and runs outside the
	// sandbox under the normal permission flow.
	Excluded
	// Confined: the command runs sandboxed.
	Confined
	// Refused: the sandbox is enabled, unavailable, and failIfUnavailable
	// is set: nothing runs.
	Refused
)

// ModeOf decides how command runs: the one rule, used by the permission
// step (autoAllowBashIfSandboxed) and by the bash tool alike.
func (sb *Sandbox) ModeOf(command string) Mode {
	if sb == nil {
		return Unconfined
	}
	sb.mu.RLock()
	s, st := sb.s, sb.status
	sb.mu.RUnlock()
	switch {
	case !s.Enabled:
		return Unconfined
	case !st.Active && s.FailIfUnavailable:
		return Refused
	case !st.Active:
		return Unconfined
	case excluded(command, s.ExcludedCommands):
		return Excluded
	}
	return Confined
}

// Refusal is what the model reads when a command is Refused.
func (sb *Sandbox) Refusal() string {
	return fmt.Sprintf("the sandbox is enabled but unavailable here (%s), and sandbox.failIfUnavailable is set, so bash runs no command unsandboxed; nothing was run. Tell the user: they can fix the cause or unset failIfUnavailable to run commands unsandboxed under the permission rules.", sb.Status().Reason)
}

// AutoAllows reports whether a command that would be asked about may run
// without a question: it runs sandboxed and autoAllowBashIfSandboxed is set.
func (sb *Sandbox) AutoAllows(command string) bool {
	if sb == nil {
		return false
	}
	sb.mu.RLock()
	auto := sb.s.AutoAllowBash
	sb.mu.RUnlock()
	return auto && sb.ModeOf(command) == Confined
}

// excluded reports whether any simple command of the line matches a
// pattern: "docker:*" (the program, with any arguments), "npm run dev"
// (the words exactly) or "git push:*" (those words first). A line that
// does not parse, or runs a computed command, matches nothing: it stays
// in the sandbox.
func excluded(command string, patterns []string) bool {
	if len(patterns) == 0 {
		return false
	}
	a := shell.Analyze(command, shell.Options{})
	if a.ParseError != nil {
		return false
	}
	var walk func(cs []shell.Command) bool
	walk = func(cs []shell.Command) bool {
		for _, c := range cs {
			if matchExcluded(c.Words, patterns) || walk(c.Inner) {
				return true
			}
		}
		return false
	}
	return walk(a.Commands)
}

func matchExcluded(words, patterns []string) bool {
	if len(words) == 0 {
		return false
	}
	for _, p := range patterns {
		prefix := strings.HasSuffix(p, ":*")
		want := strings.Fields(strings.TrimSuffix(p, ":*"))
		if len(want) == 0 || len(words) < len(want) || !prefix && len(words) != len(want) {
			continue
		}
		ok := true
		for i, w := range want {
			name := words[i]
			if i == 0 {
				name = filepath.Base(name)
			}
			if name != w {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}

// Run is one sandboxed command being started: Wrap goes in proc.Spec,
// Env is added to the command's environment, and Close must be called
// once the command has ended (it stops the command's proxy).
type Run struct {
	Wrap func(cmd *exec.Cmd) error
	Env  []string
	pol  launcher.Policy
	// proxy, when allowedDomains are set, records the hosts it refused.
	proxy *proxy
}

// Close releases what the run holds.
func (r *Run) Close() {
	if r != nil && r.proxy != nil {
		r.proxy.close()
	}
}

// ErrUnavailable is returned by Prepare when the sandbox cannot run.
var ErrUnavailable = errors.New("the sandbox is unavailable")

// Prepare builds the confinement of one command run in dir. The result's
// Close must be called when the command has ended.
func (sb *Sandbox) Prepare(dir string) (*Run, error) {
	sb.mu.RLock()
	s, st, tmp, o, exe := sb.s, sb.status, sb.tmp, sb.opts, sb.probe.exe
	sb.mu.RUnlock()
	if !st.Active {
		return nil, fmt.Errorf("%w: %s", ErrUnavailable, st.Reason)
	}
	if err := heldPlaces(o.Folders); err != nil {
		return nil, err
	}
	pol := buildPolicy(s, o, tmp)
	pol.Dir = dir
	r := &Run{pol: pol, Env: []string{"TMPDIR=" + tmp}}
	if len(s.AllowedDomains) > 0 {
		px, err := startProxy(tmp, s.AllowedDomains)
		if err != nil {
			return nil, fmt.Errorf("sandbox: proxy: %w", err)
		}
		r.proxy = px
		r.pol.Proxy = px.socket
	}
	r.Wrap = func(cmd *exec.Cmd) error { return wrap(cmd, exe, r.pol) }
	return r, nil
}

// heldPlaces refuses a folder whose .git or .agentls is a symbolic link:
// the link could be replaced by a command, so its target cannot be held
// read-only. Fail closed: the command does not run.
func heldPlaces(folders []string) error {
	for _, f := range folders {
		for _, name := range []string{".git", ".agentls", ".git/hooks"} {
			p := filepath.Join(f, name)
			if fi, err := os.Lstat(p); err == nil && fi.Mode()&os.ModeSymlink != 0 {
				return fmt.Errorf("%s is a symbolic link, which the sandbox cannot hold read-only (a command could replace it); nothing was run. Replace the link with the directory, or add the command to sandbox.excludedCommands", p)
			}
		}
	}
	return nil
}

// buildPolicy resolves the settings into what the launcher applies.
func buildPolicy(s Settings, o Options, tmp string) launcher.Policy {
	var pol launcher.Policy
	pol.Write = append(pol.Write, o.Folders...)
	pol.Write = append(pol.Write, tmp)
	for _, w := range s.AllowWrite {
		p := ExpandHome(w, o.Home, "")
		if filepath.IsAbs(p) {
			pol.Write = append(pol.Write, p)
		}
	}
	// Kept read-only inside the writable folders: a command must not plant
	// a git hook (or point core.hooksPath elsewhere) nor rewrite agentls's
	// own settings. .git itself is pinned (bound onto itself), so it
	// cannot be renamed away and replaced with one holding hooks.
	for _, f := range o.Folders {
		gitDir := filepath.Join(f, ".git")
		if fi, err := os.Lstat(gitDir); err == nil && fi.IsDir() {
			pol.Pin = append(pol.Pin, gitDir)
			hooks := filepath.Join(gitDir, "hooks")
			_ = os.Mkdir(hooks, 0o755) // git makes it too; a mount needs it
			pol.ReadOnly = append(pol.ReadOnly, hooks)
			if _, err := os.Lstat(filepath.Join(gitDir, "config")); err == nil {
				pol.ReadOnly = append(pol.ReadOnly, filepath.Join(gitDir, "config"))
			}
		} else if err == nil && fi.Mode().IsRegular() {
			pol.ReadOnly = append(pol.ReadOnly, gitDir) // a worktree's pointer
		}
		cfg := filepath.Join(f, ".agentls")
		_ = os.Mkdir(cfg, 0o755) // an empty one, so that it can be held read-only
		if fi, err := os.Lstat(cfg); err == nil && fi.IsDir() {
			pol.ReadOnly = append(pol.ReadOnly, cfg)
		}
	}
	for _, p := range o.DenyWrite {
		if _, err := os.Lstat(p); err == nil {
			pol.ReadOnly = append(pol.ReadOnly, p)
		}
	}
	deny := append(DefaultDenyRead(), s.DenyRead...)
	seen := map[string]bool{}
	add := func(p string) {
		if seen[p] {
			return
		}
		seen[p] = true
		fi, err := os.Stat(p)
		switch {
		case err != nil:
		case fi.IsDir():
			pol.DenyDirs = append(pol.DenyDirs, p)
		default:
			pol.DenyFiles = append(pol.DenyFiles, p)
		}
	}
	for _, d := range deny {
		add(ExpandHome(d, o.Home, o.Home))
	}
	for _, d := range o.DenyRead {
		add(d)
	}
	if len(pol.DenyFiles) > 0 {
		pol.Blank = filepath.Join(tmp, ".agentls-denied")
	}
	return pol
}

// writable reports whether the run may write p (for messages).
func (r *Run) writable(p string) bool {
	for _, w := range r.pol.Write {
		if within(p, w) {
			return true
		}
	}
	return false
}
