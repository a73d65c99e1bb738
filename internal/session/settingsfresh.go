package session

import (
	"sync"

	"github.com/agentls/agentls/internal/ops"
	"github.com/agentls/agentls/internal/policy"
	"github.com/agentls/agentls/internal/settings"
)

// settingsStat is the settings files' stamp as of the last policy load:
// the permission step compares the files with it before every call
// (settings.Stamp), so a deny rule saved a moment ago applies to the very
// next call, before the watcher's debounced reload (reloadDelay) runs.
type settingsStat struct {
	mu    sync.Mutex
	stamp settings.Stamp // replaced whole on a reload, never changed
}

// settingsPaths are the files policy.Load reads, the editor's settings aside.
func (s *Session) settingsPaths() []string {
	return settings.Files(settingsRoots(s.FS), s.reloadSpec.userDir)
}

// settingsRoots are the folders whose settings files hold rules: the
// workspace folders, not the read-only roots.
func settingsRoots(fsys ops.Workspace) []string {
	var roots []string
	for _, f := range fsys.Folders() {
		if !f.ReadOnly {
			roots = append(roots, f.Root)
		}
	}
	return roots
}

// freshPolicy reads the permission settings again when a file changed
// since they were last read; the permission step calls it first.
func (s *Session) freshPolicy() {
	s.settingsStat.mu.Lock()
	last := s.settingsStat.stamp
	s.settingsStat.mu.Unlock()
	if last.Current(s.settingsPaths()) {
		return
	}
	s.reloader.run.Lock()
	probs := s.reloadPolicy()
	probs = append(probs, unknownToolRules(s.Policy, s.Registry, s.Executor.MaskText)...)
	s.reloader.run.Unlock()
	s.reportProblems(probs)
}

// reloadPolicy reads the permission settings again and puts them in force;
// the caller holds reloader.run. The files are stamped before they are
// read, so a save during the read is seen by the next check.
func (s *Session) reloadPolicy() []string {
	stamp := settings.StampFiles(s.settingsPaths())
	cfg, problems := s.Policy.Reload(settingsRoots(s.FS), s.reloadSpec.editor, s.reloadSpec.userDir)
	s.Policy.Replace(cfg)
	denyRead, denyWrite := cfg.SandboxPaths()
	if err := s.Env.Sandbox.Update(cfg.SandboxSettings(), settingsRoots(s.FS), denyRead, denyWrite); err != nil {
		problems = append(problems, policy.Problem{File: "sandbox", Msg: err.Error()})
	}
	s.settingsStat.mu.Lock()
	s.settingsStat.stamp = stamp
	s.settingsStat.mu.Unlock()
	var probs []string
	for _, p := range problems {
		text := s.Executor.MaskText(p.String()) // a rule may hold a token
		s.Log.Warn("permission settings", "problem", text)
		probs = append(probs, text)
	}
	return probs
}
