package session

import (
	"log/slog"
	"path"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/agentls/agentls/internal/extension"
	"github.com/agentls/agentls/internal/ops"
	"github.com/agentls/agentls/internal/proc"
	"github.com/agentls/agentls/internal/settings"
	"github.com/agentls/agentls/internal/tools"
	"github.com/agentls/agentls/internal/tools/builtin"
	"github.com/agentls/agentls/internal/upstream"
)

// The permission settings and the extension tool files of the workspace
// are read again when they change (the watcher sees it), as Claude Code
// users expect of their settings: a deny rule added mid-session applies to
// the next call, a new tool file shows up in tools/list (tools/listChanged).
// Upstream MCP servers whose entry in .agentls/mcp.json changed restart
// (removed ones stop, new ones start). The user's files (~/.config/agentls)
// are watched too (settings.WatchUser).

// reloadDelay coalesces the events of one save (editors write a temporary
// file and rename it) into one reload.
const reloadDelay = 100 * time.Millisecond

// configFile reports whether rel (a slash path relative to a workspace
// folder) is a configuration file the session reads, or a directory
// holding them.
func configFile(rel string) bool {
	switch rel {
	case settings.LocalFile, settings.WorkspaceFile, upstream.WorkspaceConfig, ".agentls", extension.WorkspaceSubdir:
		return true
	}
	return path.Dir(rel) == extension.WorkspaceSubdir && strings.HasSuffix(rel, ".json")
}

// reloadSpec is what reading the configuration needs besides the files.
type reloadSpec struct {
	editor         *settings.Settings // the editor's settings, which win
	userDir        string
	reserved       []string // names extension tools may not take
	deferThreshold int
	onReload       func(problems []string)
}

// extensionTools loads the extension tool definitions of every writable
// folder, then the user's.
func (r reloadSpec) extensionTools(fsys ops.Workspace, log *slog.Logger) ([]*tools.Tool, []string) {
	var dirs []extension.Dir
	for _, f := range fsys.Folders() {
		if !f.ReadOnly {
			dirs = append(dirs, extension.WorkspaceDir(f.Root))
		}
	}
	if r.userDir != "" {
		dirs = append(dirs, extension.UserDir(r.userDir))
	}
	exts, problems := extension.Load(dirs, r.reserved, builtin.RunExtensionCommand)
	var probs []string
	for _, p := range problems {
		log.Warn("extension tool skipped", "file", p.File, "problem", p.Msg)
		probs = append(probs, p.String())
	}
	return exts, probs
}

// Reload reads the permission settings and the extension tool files again:
// the new rules apply from the next call (rules the user added for the
// session stay), and extension tools are added, changed or removed, with
// tools/listChanged when tools/list changes. It returns the problems found,
// which also go to Options.OnReload.
func (s *Session) Reload() []string {
	s.reloader.run.Lock()
	defer s.reloader.run.Unlock()
	probs := s.reloadPolicy()
	probs = append(probs, s.reloadLimits()...)
	exts, extProbs := s.reloadSpec.extensionTools(s.FS, s.Log)
	probs = append(probs, extProbs...)
	for _, err := range s.Registry.Replace("extension", exts) {
		probs = append(probs, err.Error())
	}
	if s.Upstream != nil {
		cfgs, err := upstreamConfigs(s.FS, s.reloadSpec.userDir)
		if err != nil {
			probs = append(probs, "mcp.json: "+err.Error())
		}
		armForServers(s.Env.Reaper.Watchdog, cfgs)
		if err := s.Upstream.Update(cfgs); err != nil {
			probs = append(probs, "mcp.json: "+err.Error())
		}
	}
	s.Registry.ApplyDeferThreshold(s.reloadSpec.deferThreshold)
	probs = append(probs, unknownToolRules(s.Policy, s.Registry, s.Executor.MaskText)...)
	s.Log.Info("configuration reloaded", "extensionTools", len(exts), "problems", len(probs))
	s.reportProblems(probs)
	return probs
}

// armForServers arms the watchdog before upstream servers start: each is a
// process that lives as long as the session.
func armForServers(wd *proc.Watchdog, cfgs []upstream.ServerConfig) {
	if len(cfgs) > 0 {
		wd.Arm()
	}
}

// upstreamConfigs reads the MCP server declarations of the writable folders
// (and the user's).
func upstreamConfigs(fsys ops.Workspace, userDir string) ([]upstream.ServerConfig, error) {
	var paths []string
	for _, f := range fsys.Folders() {
		if !f.ReadOnly {
			paths = append(paths, f.Root)
		}
	}
	return upstream.LoadConfigs(userDir, paths)
}

// reloader debounces reloads and stops them at Close. Its zero value is
// ready.
type reloader struct {
	run sync.Mutex // one Reload at a time

	mu      sync.Mutex
	timer   *time.Timer
	closed  bool
	running sync.WaitGroup
}

// schedule runs f reloadDelay after the last call, unless stopped.
func (r *reloader) schedule(f func() []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return
	}
	if r.timer != nil {
		r.timer.Reset(reloadDelay)
		return
	}
	r.timer = time.AfterFunc(reloadDelay, func() {
		r.mu.Lock()
		if r.closed {
			r.mu.Unlock()
			return
		}
		r.running.Add(1)
		r.mu.Unlock()
		defer r.running.Done()
		f()
	})
}

// stop cancels a pending reload and waits for a running one.
func (r *reloader) stop() {
	r.mu.Lock()
	r.closed = true
	if r.timer != nil {
		r.timer.Stop()
	}
	r.mu.Unlock()
	r.running.Wait()
}

// reloadLimits rebuilds the built-in tools when the settings' limits
// changed (a file edited, or folders from MCP roots bringing their own):
// tools/listChanged follows, as their descriptions state the new numbers.
// The caller holds reloader.run.
func (s *Session) reloadLimits() []string {
	l, probs := mergeLimits(s.Policy.LimitSources(), s.hostCap)
	if l == s.Env.Limits() {
		return probs
	}
	s.Env.SetLimits(l)
	builtins := append(builtin.Builtins(l), builtin.JobTools(l)...)
	s.Jobs.SetLimits(l.BashLines, l.BashBytes)
	core := make([]*tools.Tool, 0, len(builtins)+2)
	core = append(core, builtins...)
	for _, t := range s.Registry.List(true) {
		// tool_search (and test tools) are core tools that state no limit.
		if t.Source == "core" && !slices.ContainsFunc(builtins, func(b *tools.Tool) bool { return b.Name == t.Name }) {
			core = append(core, t)
		}
	}
	for _, err := range s.Registry.Replace("core", core) {
		probs = append(probs, err.Error())
	}
	s.Log.Info("limits changed: built-in tools rebuilt")
	return probs
}
