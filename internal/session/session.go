package session

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentls/agentls/internal/audit"
	"github.com/agentls/agentls/internal/editguard"
	"github.com/agentls/agentls/internal/ignore"
	"github.com/agentls/agentls/internal/jobs"
	"github.com/agentls/agentls/internal/mention"
	"github.com/agentls/agentls/internal/ops"
	"github.com/agentls/agentls/internal/overlay"
	"github.com/agentls/agentls/internal/policy"
	"github.com/agentls/agentls/internal/proc"
	"github.com/agentls/agentls/internal/sandbox"
	"github.com/agentls/agentls/internal/secrets"
	"github.com/agentls/agentls/internal/settings"
	"github.com/agentls/agentls/internal/spill"
	"github.com/agentls/agentls/internal/tools"
	"github.com/agentls/agentls/internal/tools/builtin"
	"github.com/agentls/agentls/internal/upstream"
	"github.com/agentls/agentls/internal/watch"
)

// Options configure a session.
type Options struct {
	Folders []ops.FolderSpec
	Log     *slog.Logger
	// TestTools are registered besides the built-ins: tools that exist
	// only for tests (toolstest.Tools, e.g. one that blocks until
	// cancelled); nil in the shipped binary.
	TestTools []*tools.Tool
	// Editor holds the permission settings the editor sent
	// (initializationOptions); they win over the workspace and user files.
	Editor *settings.Settings
	// Confirmer asks the user; nil when the client cannot (an "ask" then
	// becomes a denial telling the model approval is needed).
	Confirmer policy.Confirmer
	// HostApproves: the client's host confirms each tool call itself (an
	// MCP host), so a call that only agentls's default mode would ask
	// about runs; ask rules, destructive commands and the other built-in
	// asks still ask, deny rules and readOnly mode still refuse.
	HostApproves bool
	// Client names the client in refusals ("MCP host"; "" = "editor"),
	// and ModeHint is how its user changes the mode ("" = none).
	Client, ModeHint string
	// ToolNamePrefix is how the client's model sees the tool names
	// (initializationOptions.toolNamePrefix): the hints in results name
	// tools so. "" for MCP hosts and the CLI.
	ToolNamePrefix string
	// UserConfigDir overrides the user config directory ("" = the default).
	UserConfigDir string
	// DeferThreshold is how many tools may be active before non-core ones
	// are deferred (0 = tools.DefaultDeferThreshold).
	DeferThreshold int
	// AuditDir is where the audit log goes ("" = audit.DefaultDir(), "-" = no
	// audit log).
	AuditDir string
	// OnExternalChange is called (from a watcher goroutine) when a file
	// changed outside agentls; readStale says the model had read it.
	OnExternalChange func(uri, kind string, readStale bool)
	// Buffers are the documents open in the editor (LSP text document
	// sync); nil when the client has none.
	Buffers *overlay.Store
	// BufferEditor takes edits of open documents into the editor
	// (workspace/applyEdit); nil when the client cannot. With it, an open
	// document, not the file on disk, is what the edit guard checks.
	BufferEditor tools.BufferEditor
	// Diagnostics asks the editor what its language servers report for a
	// file edit or write changed (tools/diagnostics); nil when it cannot.
	Diagnostics tools.DiagnosticsSource
	// OnReload is called after the settings and extension tool files were
	// read again because they changed, with the problems found (invalid
	// rules, bad tool files); the client should show them.
	OnReload func(problems []string)
	// OnWatcherDegraded is called when a file watcher that started whole
	// degrades later (directories created past the watch limit); the
	// client should tell the user. A degraded start shows in OnWatcherReady.
	OnWatcherDegraded func()
	// NoUpstream skips the upstream MCP servers of .agentls/mcp.json.
	NoUpstream bool
	// Watchdog is armed before the session starts a process that can
	// outlive a call (a command, an upstream server); nil: none.
	Watchdog *proc.Watchdog
	// OnJobChanged is told when a background job starts or ends
	// (jobs/changed); OnJobOutput receives a running job's latest output
	// line, at most every 50 ms (tools/progress of its starting call).
	// Both are called unmasked: the caller masks what it sends.
	OnJobChanged func(ev jobs.Event)
	OnJobOutput  func(job, callID, line string)
	// HostCap is the most of one result the client passes to its model
	// (an MCP host's output cap); every limit is lowered to it
	// (tools.Limits.Within), so the descriptions state what arrives.
	// Zero: no cap.
	HostCap tools.HostCap
	// OnWatcherReady is called (from the arming goroutine) each time the
	// file watchers are armed: after New and after the folders change or
	// one is opened anew, with the watch mode: a watcher's Mode,
	// watch.ModeDegraded when one could not start or degraded, "" when
	// there is no writable folder to watch. Until then no external
	// change is announced; tool calls do not wait for it, as staleness is
	// checked with stat. Not called for an arming that Close or a folder
	// change stopped.
	OnWatcherReady func(mode string)
	// NoWatch arms no file watcher, on the folders or the user's
	// configuration: for a session that runs a few calls and ends (agentls
	// call), where a watcher's walk of the tree would be the most of its
	// cost and nobody receives what it announces. Calls stay correct: the
	// edit guard's stamps are stat-based, ignore rules and settings are
	// read fresh (the settings' Stamp is checked before every call).
	NoWatch bool
}

// Session is one workspace's tools, ready to run calls.
type Session struct {
	FS       ops.FS
	Registry *tools.Registry
	Executor *tools.Executor
	Env      *tools.Env
	Log      *slog.Logger
	// Policy is the permission configuration; Reload replaces its rules in
	// place when the settings files change.
	Policy *policy.Config
	// Problems are configuration problems found at startup (invalid rules,
	// a file that is not valid JSON); see policy.Problem for what each
	// costs.
	Problems []string
	audit    *audit.Log
	// Upstream runs the MCP servers of .agentls/mcp.json; nil when none.
	Upstream *upstream.Manager
	// Jobs are the background commands; Close kills every one.
	Jobs *jobs.Table
	// watchArm is an arming under way; stopWatchers waits for it.
	watchArm  sync.WaitGroup
	watchMu   sync.Mutex // guards watchers and stopWatch
	watchers  []*watch.Watcher
	stopWatch context.CancelFunc
	// housekeeping runs the clean-up of crashed writes' temp files; Close
	// stops it (stopHousekeeping) and waits for it.
	housekeeping      sync.WaitGroup
	stopHousekeeping  context.CancelFunc
	onExternalChange  func(uri, kind string, readStale bool)
	onWatcherDegraded func()
	noWatch           bool // Options.NoWatch
	// hostCap is Options.HostCap, for limits read again.
	hostCap        tools.HostCap
	onWatcherReady func(mode string)
	// What Reload needs to read the configuration again.
	reloadSpec reloadSpec
	reloader   reloader
	// settingsStat is what the policy was last read from (settingsfresh.go, a settings.Stamp).
	settingsStat settingsStat
	// stopUserWatch ends settings.WatchUser; userWatchDone is closed then.
	stopUserWatch context.CancelFunc
	userWatchDone <-chan struct{}
	// problemSink is OnProblems's function.
	problemSink atomic.Pointer[func([]string)]
	// matchers are the watched folders' shared ignore matchers; replaced
	// whole when the folders change, read by tools concurrently.
	matchers atomic.Pointer[map[*ops.Folder]*ignore.Matcher]
	// foldersMu orders the folder changes: SetFolders and the re-arming
	// after a folder was opened anew (folderKeeper.Reopened), which a call may
	// still make while Close runs (closed then says not to).
	foldersMu sync.Mutex
	closed    bool
	// noFolders, when set, says why no workspace folder is usable
	// (NoFolders); SetFolders with folders clears it.
	noFolders atomic.Pointer[string]
}

// New opens the folders and builds the registry and executor.
func New(opts Options) (*Session, error) {
	log := opts.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if len(opts.Folders) == 0 {
		wd, err := os.Getwd()
		if err != nil {
			return nil, fmt.Errorf("no workspace folder given and no working directory: %w", err)
		}
		opts.Folders = []ops.FolderSpec{{Path: wd}}
	}
	fsys, err := ops.NewLocal(opts.Folders)
	if err != nil {
		return nil, err
	}
	housekeeping, stopHousekeeping := context.WithCancel(context.Background())
	cleanTemp := func() {
		for _, f := range fsys.Folders() {
			if n := fsys.CleanTemp(housekeeping, f); n > 0 {
				log.Info("removed temp files left by an interrupted write", "folder", f.Root, "count", n)
			}
		}
	}
	guard := editguard.New(fsys)
	s := &Session{FS: fsys, Log: log}
	env := &tools.Env{FS: fsys, Log: log, Guard: guard, Folders: folderKeeper{s}, Reaper: &proc.Reaper{Watchdog: opts.Watchdog}, Buffers: opts.Buffers, Diagnostics: opts.Diagnostics, Names: mention.Prefix(opts.ToolNamePrefix)}
	if opts.Buffers != nil && opts.BufferEditor != nil {
		env.Editor = opts.BufferEditor
		guard.UseBuffers(opts.Buffers)
	}
	// Spill files live outside the workspace (under the user cache dir) and
	// are an extra read-only root, so read can open them.
	if sp, err := spill.Open(fsys.Folders()[0].Root); err != nil {
		log.Warn("no spill directory: cut output will not be saved", "err", err)
	} else if err := fsys.AddReadOnlyRoot(sp.Path()); err != nil {
		log.Warn("spill directory not readable", "err", err)
		sp.Close()
	} else {
		env.SpillDir = sp
	}
	userDir := opts.UserConfigDir
	if userDir == "" {
		userDir, _ = settings.UserConfigDir()
	}
	// Problems quote settings (a rule may hold a token): masked like any
	// text that leaves the server.
	masker := secrets.New(os.Environ())
	// Stated before they are read: a save during the read shows next call.
	settingsStamp := settings.StampFiles(settings.Files(settingsRoots(fsys), userDir))
	cfg, problems := policy.Load(settingsRoots(fsys), opts.Editor, userDir)
	var probs []string
	for _, p := range problems {
		text, _ := masker.Mask(p.String())
		log.Warn("permission settings", "problem", text)
		probs = append(probs, text)
	}
	env.Visible = cfg
	home, _ := os.UserHomeDir()
	denyRead, denyWrite := cfg.SandboxPaths()
	if env.Sandbox, err = sandbox.New(cfg.SandboxSettings(), sandbox.Options{Folders: settingsRoots(fsys), Home: home, DenyRead: denyRead, DenyWrite: denyWrite}); err != nil {
		log.Warn("no sandbox", "err", err)
		probs = append(probs, err.Error())
	} else if st := env.Sandbox.Status(); st.Enabled && !st.Active {
		log.Warn("sandbox unavailable", "reason", st.Reason)
	}
	limits, limitProbs := mergeLimits(cfg.Limits, opts.HostCap)
	for _, p := range limitProbs {
		log.Warn("limits settings", "problem", p)
	}
	probs = append(probs, limitProbs...)
	env.SetLimits(limits)
	reg := tools.NewRegistry()
	reg.MustRegister(builtin.Builtins(limits)...)
	reg.MustRegister(builtin.JobTools(limits)...)
	reg.MustRegister(builtin.NewToolSearch(reg))
	// bash_output and bash_kill join the tool list with the first job.
	table := jobs.New(jobs.Options{Lines: limits.BashLines, Bytes: limits.BashBytes, Spill: env.SpillDir, OnOutput: opts.OnJobOutput,
		OnChange: func(ev jobs.Event) {
			if ev.Status == "running" {
				reg.Activate(builtin.BashOutputName, builtin.BashKillName)
			}
			if opts.OnJobChanged != nil {
				opts.OnJobChanged(ev)
			}
		}})
	env.Jobs = table
	if len(opts.TestTools) > 0 {
		reg.MustRegister(opts.TestTools...)
	}
	exec := &tools.Executor{Registry: reg, Env: env, Log: log, Masker: masker}
	if env.SpillDir != nil {
		exec.Spill = env.SpillDir
	}

	// Extension tools: workspace definitions first (they win over the
	// user's of the same name), then <userDir>/agentls/tools.
	spec := reloadSpec{editor: opts.Editor, userDir: userDir, reserved: builtin.ReservedNames(reg), deferThreshold: opts.DeferThreshold, onReload: opts.OnReload}
	exts, extProbs := spec.extensionTools(fsys, log)
	probs = append(probs, extProbs...)
	for _, t := range exts {
		if err := reg.Register(t); err != nil {
			probs = append(probs, err.Error())
		}
	}
	reg.ApplyDeferThreshold(opts.DeferThreshold)
	for _, p := range unknownToolRules(cfg, reg, func(t string) string { t, _ = masker.Mask(t); return t }) {
		log.Warn("permission settings", "problem", p)
		probs = append(probs, p)
	}

	var auditLog *audit.Log
	if opts.AuditDir != "-" {
		dir := opts.AuditDir
		if dir == "" {
			dir, err = audit.DefaultDir()
		}
		if err == nil {
			auditLog, err = audit.Open(dir, masker)
		}
		if err != nil {
			log.Warn("no audit log", "err", err)
		} else {
			exec.OnResult = auditLog.Hook()
		}
	}
	gate := policy.NewGate(cfg, opts.Confirmer)
	gate.Client = opts.Client
	gate.Hints = policy.Hints{ModeHint: opts.ModeHint}
	if userDir != "" {
		gate.Hints.UserSettings = settings.UserSettings(userDir)
	}
	perm := &permission{gate: gate, hostApproves: opts.HostApproves, sandbox: env.Sandbox}
	exec.Permission = perm
	s.Jobs, s.Registry, s.Executor, s.Env, s.Policy, s.Problems, s.audit = table, reg, exec, env, cfg, probs, auditLog
	s.hostCap, s.reloadSpec, s.noWatch = opts.HostCap, spec, opts.NoWatch
	s.onExternalChange, s.onWatcherDegraded, s.onWatcherReady = opts.OnExternalChange, opts.OnWatcherDegraded, opts.OnWatcherReady
	guard.OnDeferred(s.observe)
	perm.fresh = s.freshPolicy
	perm.mask = exec.MaskValue
	s.settingsStat.stamp = settingsStamp
	if !opts.NoUpstream {
		// A manager even without servers: mcp.json may appear later (Reload).
		cfgs, err := upstreamConfigs(fsys, userDir)
		if err != nil {
			log.Warn("upstream MCP servers", "err", err)
			s.Problems = append(s.Problems, "mcp.json: "+err.Error())
		}
		armForServers(opts.Watchdog, cfgs)
		if s.Upstream, err = upstream.Register(context.Background(), reg, cfgs, log); err != nil {
			log.Warn("upstream MCP servers not started", "err", err)
		}
		exec.Unknown = s.Upstream.Explain
		reg.SetSearchNotes(s.Upstream.SearchNotes)
		s.Upstream.OnProblem(func(msg string) { s.reportProblems([]string{s.Executor.MaskText(msg)}) })
	}
	// What would delay New by a walk of every folder (0.8 s on a 115k-file
	// tree, docs/benchmarks.md) runs after it: arming the watchers and
	// removing the temp files of crashed writes (CleanTemp spares this
	// process's own). Close waits for both.
	s.startWatchers()
	if userDir != "" && !opts.NoWatch {
		ctx, cancel := context.WithCancel(context.Background())
		s.stopUserWatch, s.userWatchDone = cancel, settings.WatchUser(ctx, userDir, log, func() { s.reloader.schedule(s.Reload) })
	}
	s.stopHousekeeping = stopHousekeeping
	s.housekeeping.Go(cleanTemp)
	return s, nil
}

// startWatchers watches every writable folder: events feed the edit guard
// (which recognises agentls's own writes) and, for files the model has
// read, the client's workspace/externalChange. It arms them on a
// goroutine that stopWatchers stops and waits for.
func (s *Session) startWatchers() {
	if s.noWatch {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	s.watchMu.Lock()
	s.stopWatch = cancel
	s.watchMu.Unlock()
	s.watchArm.Go(func() { s.armWatchers(ctx) })
}

// observe judges a watcher event for p (editguard.Guard.Observe) and tells
// the client of a change to a file the model read.
func (s *Session) observe(p ops.Path, kind string) {
	kind, readStale, skip := s.Env.Guard.Observe(p, kind)
	if !skip && s.onExternalChange != nil {
		s.onExternalChange((&url.URL{Scheme: "file", Path: filepath.ToSlash(p.OS())}).String(), kind, readStale)
	}
}

// WatchSettle is how long a path's watcher events are held until it is
// quiet: a save that truncates, then writes, is judged once it is done,
// so rewriting the same bytes is not announced as a change. Short, as
// workspace/externalChange is announced within 50 ms of a change.
const WatchSettle = 5 * time.Millisecond

// armWatchers starts the watchers and installs them unless ctx ended
// meanwhile, then reports the watch mode to OnWatcherReady.
func (s *Session) armWatchers(ctx context.Context) {
	guard := s.Env.Guard
	var started []*watch.Watcher
	matchers := map[*ops.Folder]*ignore.Matcher{}
	mode := ""
	var writable []*ops.Folder
	for _, f := range s.FS.Folders() {
		if !f.ReadOnly {
			writable = append(writable, f)
		}
	}
	for _, share := range ops.Shares(writable) {
		if share.Covered {
			continue // an earlier folder's watcher sees its files
		}
		folder, ffs := share.Folder, s.FS.FolderFS(share.Folder)
		m := ignore.NewMatcher(ffs, s.FS.OuterIgnore(folder))
		var running atomic.Bool // a degrade before Start returned is the start's
		w, err := watch.Start(ctx, watch.Options{
			OnDegrade: func(error) {
				if running.Load() && s.onWatcherDegraded != nil {
					s.onWatcherDegraded()
				}
			},
			Root: folder.Root, FS: ffs, Matcher: m, Log: s.Log, Settle: WatchSettle,
			OnEvent: func(ev watch.Event) {
				if !share.Owns(ev.Rel) {
					return // an earlier folder inside this one reports it
				}
				if configFile(ev.Rel) {
					s.reloader.schedule(s.Reload)
				}
				p := ops.Path{Folder: folder, Rel: ev.Rel}
				s.observe(p, string(ev.Kind))
				if ev.Kind == watch.Deleted {
					// A directory moved or removed in one event: the
					// files the model read in it went with it.
					for _, sub := range guard.StampedBelow(p) {
						s.observe(ops.Path{Folder: folder, Rel: path.Join(ev.Rel, sub)}, string(watch.Deleted))
					}
				}
			},
			OnRescan: guard.RecheckAll,
		})
		running.Store(true)
		if ctx.Err() != nil {
			break // stopped meanwhile: not an error
		}
		if err != nil {
			s.Log.Warn("file watcher not started", "folder", folder.Root, "err", err)
			mode = watch.ModeDegraded
			continue
		}
		if w.Mode() != watch.ModeDegraded {
			// The watcher invalidates the rules it sees change, so tools
			// can share its warm matcher.
			matchers[folder] = m
		}
		started = append(started, w)
		if mode == "" || w.Mode() == watch.ModeDegraded {
			mode = w.Mode()
		}
	}
	s.watchMu.Lock()
	if ctx.Err() != nil {
		s.watchMu.Unlock()
		for _, w := range started {
			w.Close()
		}
		return
	}
	s.watchers = started
	s.matchers.Store(&matchers)
	s.watchMu.Unlock()
	if mode == watch.ModeDegraded {
		s.Log.Warn("file watcher degraded: no external-change notifications")
	}
	if s.onWatcherReady != nil {
		s.onWatcherReady(mode)
	}
}

func (s *Session) stopWatchers() {
	s.watchMu.Lock()
	cancel := s.stopWatch
	s.watchMu.Unlock()
	if cancel != nil {
		cancel()
	}
	s.watchArm.Wait()
	s.watchMu.Lock()
	ws := s.watchers
	s.watchers = nil
	s.watchMu.Unlock()
	for _, w := range ws {
		w.Close()
	}
}

// SetFolders replaces the workspace folders; the watchers restart on the
// new set, and the configuration (permission settings, extension tools,
// upstream MCP servers) is read again from the new folders.
func (s *Session) SetFolders(specs []ops.FolderSpec) error {
	s.foldersMu.Lock()
	defer s.foldersMu.Unlock()
	s.stopWatchers()
	err := s.FS.SetFolders(specs)
	s.startWatchers()
	if err == nil {
		// What the model read in a removed folder no longer vouches for
		// anything: if the folder comes back, its files need fresh reads.
		roots := s.FS.Folders()
		s.Env.Guard.Retain(func(p string) bool {
			return slices.ContainsFunc(roots, func(f *ops.Folder) bool { _, in := ops.Within(f.Root, p); return in })
		})
		s.noFolders.Store(nil)
		s.Reload()
	}
	return err
}

// folderKeeper is the session as the tools' tools.FolderKeeper.
type folderKeeper struct{ s *Session }

// Matcher is folder f's shared ignore matcher, nil before its watcher is
// armed (and for a read-only root).
func (k folderKeeper) Matcher(f *ops.Folder) *ignore.Matcher {
	if m := k.s.matchers.Load(); m != nil {
		return (*m)[f]
	}
	return nil
}

// Reopened follows folder f, which the FS opened anew at its path
// (deleted and created again, say by a fresh clone; tools.Env.refresh):
// tools read its ignore rules fresh until the watchers, armed again on the
// new directory, share theirs, and its settings, extension tools and MCP
// servers are read again.
func (k folderKeeper) Reopened(f *ops.Folder) {
	s := k.s
	s.Log.Info("workspace folder opened again: its directory was created anew", "folder", f.Root)
	if m := s.matchers.Load(); m != nil {
		next := maps.Clone(*m)
		delete(next, f)
		s.matchers.Store(&next)
	}
	s.foldersMu.Lock()
	defer s.foldersMu.Unlock()
	if s.closed {
		return
	}
	s.stopWatchers()
	s.startWatchers()
	s.reloader.schedule(s.Reload)
}

// AwaitTools waits, when one of names is not a registered tool, for the
// upstream MCP servers' first listing (each start is bounded by
// upstream.ConnectTimeout), so a call right after the session opens finds
// their tools; for tool_search it waits upstream.SearchWait at most. It
// returns early with ctx's error.
func (s *Session) AwaitTools(ctx context.Context, names ...string) error {
	if s.Upstream == nil {
		return nil
	}
	search := false
	for _, n := range names {
		if n == tools.ToolSearchName {
			search = true
		} else if _, ok := s.Registry.Lookup(n); !ok {
			return s.Upstream.Wait(ctx)
		}
	}
	if !search {
		return nil
	}
	// A search waits SearchWait at most, then names the servers still
	// starting (Registry.SearchNotes): one hung server must not stall it.
	wctx, cancel := context.WithTimeout(ctx, upstream.SearchWait)
	defer cancel()
	s.Upstream.Wait(wctx)
	return ctx.Err()
}

// Close kills what commands left running, removes spill files and
// releases the roots.
func (s *Session) Close() error {
	// Jobs first: their groups are stopped in parallel, each with its own
	// SIGTERM, grace and SIGKILL, before the reaper's sweep.
	s.Jobs.Close()
	s.stopHousekeeping()
	s.housekeeping.Wait()
	s.foldersMu.Lock()
	s.closed = true
	s.foldersMu.Unlock()
	s.stopWatchers()
	if s.stopUserWatch != nil {
		s.stopUserWatch()
		<-s.userWatchDone
	}
	s.reloader.stop()
	if s.Upstream != nil {
		s.Upstream.Close()
	}
	s.Env.Reaper.KillAll()
	err := s.FS.Close()
	if s.Env.SpillDir != nil {
		s.Env.SpillDir.Close()
	}
	if s.audit != nil {
		s.audit.Close()
	}
	if err := s.Env.Sandbox.Close(); err != nil {
		s.Log.Warn("sandbox", "err", err)
	}
	return err
}

// mergeLimits applies the settings sources' limits, lowest precedence first,
// to the defaults. A source whose limits are wrong is skipped as a whole and
// reported.
// The result is lowered to what the host takes (hostCap).
func mergeLimits(srcs []policy.LimitsSource, hostCap tools.HostCap) (tools.Limits, []string) {
	l := tools.DefaultLimits()
	var probs []string
	for _, src := range slices.Backward(srcs) {
		next, warnings, err := l.Apply(src.Value)
		for _, w := range warnings {
			probs = append(probs, src.File+": "+w)
		}
		if err != nil {
			probs = append(probs, fmt.Sprintf("%s: %v; its limits are ignored", src.File, err))
			continue
		}
		l = next
	}
	return l.Within(hostCap), probs
}
