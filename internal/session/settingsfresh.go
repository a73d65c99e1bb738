package session

import (
	"os"
	"path/filepath"
	"sync"

	"github.com/agentls/agentls/internal/editguard"
	"github.com/agentls/agentls/internal/ops"
	"github.com/agentls/agentls/internal/policy"
)

// A deny rule saved a moment ago must apply to the very next call, before
// the watcher's debounced reload (reloadDelay) has run. So the permission
// step stats the settings files (three stats) and, when one differs from
// what the policy was last read from, reads the policy again first.

// settingsStat is the settings files' fingerprints as of the last policy
// load (zero: the file was missing).
type settingsStat struct {
	mu  sync.Mutex
	fps map[string]editguard.Fingerprint
}

// settingsPaths are the files policy.Load reads, the editor's settings aside.
func (s *Session) settingsPaths() []string {
	return settingsPathsOf(settingsRoots(s.FS), s.reloadSpec.userDir)
}

// settingsRoots are the folders whose settings files hold rules: the
// workspace folders, not the read-only roots.
func settingsRoots(fsys ops.FS) []string {
	var roots []string
	for _, f := range fsys.Folders() {
		if !f.ReadOnly {
			roots = append(roots, f.Root)
		}
	}
	return roots
}

func settingsPathsOf(roots []string, userDir string) []string {
	var paths []string
	for _, root := range roots {
		paths = append(paths, policy.FolderFiles(root)...)
	}
	if userDir != "" {
		paths = append(paths, filepath.Join(userDir, filepath.FromSlash(policy.UserFile)))
	}
	return paths
}

func statSettings(paths []string) map[string]editguard.Fingerprint {
	fps := make(map[string]editguard.Fingerprint, len(paths))
	for _, p := range paths {
		fps[p] = settingsFingerprint(p)
	}
	return fps
}

// settingsFingerprint is p's fingerprint, zero when it is missing.
func settingsFingerprint(p string) editguard.Fingerprint {
	if fi, err := os.Stat(p); err == nil {
		return editguard.FingerprintOf(fi)
	}
	return editguard.Fingerprint{}
}

// settingsUnchanged reports whether the settings files are those the
// policy was last read from. It runs on every call, so it compares file
// by file instead of building a map to compare.
func (s *Session) settingsUnchanged() bool {
	paths := s.settingsPaths()
	s.settingsStat.mu.Lock()
	last := s.settingsStat.fps // replaced whole on a reload, never changed
	s.settingsStat.mu.Unlock()
	if len(paths) != len(last) {
		return false
	}
	for _, p := range paths {
		if fp, ok := last[p]; !ok || settingsFingerprint(p) != fp {
			return false
		}
	}
	return true
}

// freshPolicy reads the permission settings again when a file changed
// since they were last read; the permission step calls it first.
func (s *Session) freshPolicy() {
	if s.settingsUnchanged() {
		return
	}
	s.reloader.run.Lock()
	probs := s.reloadPolicy()
	probs = append(probs, unknownToolRules(s.Policy, s.Registry, s.Executor.MaskText)...)
	s.reloader.run.Unlock()
	s.reportProblems(probs)
}

// reloadPolicy reads the permission settings again and puts them in force;
// the caller holds reloader.run. The files are stated before they are
// read, so a save during the read is seen by the next check.
func (s *Session) reloadPolicy() []string {
	fps := statSettings(s.settingsPaths())
	cfg, problems := s.Policy.Reload(settingsRoots(s.FS), s.reloadSpec.editor, s.reloadSpec.userDir)
	s.Policy.Replace(cfg)
	denyRead, denyWrite := cfg.SandboxPaths()
	if err := s.Env.Sandbox.Update(cfg.SandboxSettings(), settingsRoots(s.FS), denyRead, denyWrite); err != nil {
		problems = append(problems, policy.Problem{File: "sandbox", Msg: err.Error()})
	}
	s.settingsStat.mu.Lock()
	s.settingsStat.fps = fps
	s.settingsStat.mu.Unlock()
	var probs []string
	for _, p := range problems {
		text := s.Executor.MaskText(p.String()) // a rule may hold a token
		s.Log.Warn("permission settings", "problem", text)
		probs = append(probs, text)
	}
	return probs
}
