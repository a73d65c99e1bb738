package session

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentls/agentls/internal/ops"
	"github.com/agentls/agentls/internal/policy"
	"github.com/agentls/agentls/internal/settings"
)

func writeFile(t *testing.T, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// eventually polls cond for what a watcher-driven reload should bring.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Editing the settings and the extension tool files of a running session
// takes effect without a restart; problems are reported, not fatal.
func TestConfigFilesReloadWhenTheyChange(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "notes.txt"), "hello\n")
	var mu sync.Mutex
	var reported [][]string
	opts := Options{
		Folders: []ops.FolderSpec{{Path: dir}}, Log: slog.New(slog.DiscardHandler), NoUpstream: true, AuditDir: "-", UserConfigDir: t.TempDir(),
		OnReload: func(p []string) {
			mu.Lock()
			reported = append(reported, p)
			mu.Unlock()
		},
	}
	armed := watchersArmed(&opts)
	s, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	waitArmed(t, armed)
	changes := 0
	s.Registry.OnChange(func() {
		mu.Lock()
		changes++
		mu.Unlock()
	})
	has := func(name string) bool { _, ok := s.Registry.Lookup(name); return ok && s.Registry.IsActive(name) }

	// A new tool file: the tool appears, and tools/list is told.
	tool := filepath.Join(dir, ".agentls", "tools", "lint.json")
	writeFile(t, tool, `{"name": "lint", "description": "Runs the linter.", "inputSchema": {"type": "object"}, "command": "true", "deferred": false}`)
	eventually(t, "the new extension tool is registered", func() bool { return has("lint") })
	eventually(t, "tools/list is told", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return changes > 0
	})

	// A rule added to the settings applies to the next call.
	read := policy.Request{Tool: "read", Paths: []policy.PathRef{{Rel: "notes.txt", Abs: filepath.Join(dir, "notes.txt")}}, InWorkspace: true}
	if v := s.Policy.Evaluate(read); v.Decision != policy.Allow {
		t.Fatalf("before the rule: %+v", v)
	}
	writeFile(t, filepath.Join(dir, filepath.FromSlash(settings.WorkspaceFile)), `{"permissions": {"deny": ["Read(notes.txt)"]}}`)
	eventually(t, "the deny rule applies", func() bool { return s.Policy.Evaluate(read).Decision == policy.Deny })

	// A broken tool file is reported and its tool removed; the rest stays.
	writeFile(t, tool, `{"name": "lint", `)
	eventually(t, "the broken tool is gone", func() bool { return !has("lint") })
	eventually(t, "the problem is reported", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(reported) > 0 && strings.Contains(strings.Join(reported[len(reported)-1], "\n"), "lint.json")
	})
	if !has("read") {
		t.Fatal("a core tool went missing in a reload")
	}
}

// Close stops a reload that is pending.
func TestCloseStopsPendingReloads(t *testing.T) {
	var r reloader
	ran := make(chan struct{}, 1)
	r.schedule(func() []string { ran <- struct{}{}; return nil })
	r.stop()
	select {
	case <-ran:
		t.Fatal("a reload ran after stop")
	case <-time.After(2 * reloadDelay):
	}
	r.schedule(func() []string { ran <- struct{}{}; return nil })
	select {
	case <-ran:
		t.Fatal("a reload was scheduled after stop")
	case <-time.After(2 * reloadDelay):
	}
}

// The user's agentls directory (outside the workspace, not seen by the
// workspace watchers) is watched too, also when it is made after the start.
func TestUserConfigReloadsWhenItChanges(t *testing.T) {
	dir, userDir := t.TempDir(), t.TempDir()
	writeFile(t, filepath.Join(dir, "notes.txt"), "hello\n")
	s, err := New(Options{Folders: []ops.FolderSpec{{Path: dir}}, Log: slog.New(slog.DiscardHandler), NoUpstream: true, AuditDir: "-", UserConfigDir: userDir})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	writeFile(t, filepath.Join(userDir, "agentls", "tools", "mine.json"), `{"name": "mine", "description": "A user tool.", "inputSchema": {"type": "object"}, "command": "true", "deferred": false}`)
	eventually(t, "the user's new tool is registered", func() bool { return s.Registry.IsActive("mine") })

	read := policy.Request{Tool: "read", Paths: []policy.PathRef{{Rel: "notes.txt", Abs: filepath.Join(dir, "notes.txt")}}, InWorkspace: true}
	writeFile(t, filepath.Join(userDir, filepath.FromSlash(settings.UserFile)), `{"permissions": {"deny": ["Read(notes.txt)"]}}`)
	eventually(t, "the user's deny rule applies", func() bool { return s.Policy.Evaluate(read).Decision == policy.Deny })
}

// The user's mcp.json is read from the session's user configuration
// directory, the one its settings.json and tools come from, not from
// os.UserConfigDir (they differ on macOS under $XDG_CONFIG_HOME, and
// whenever Options.UserConfigDir is given).
func TestUserMCPServersComeFromTheSessionsUserDir(t *testing.T) {
	dir, userDir, other := t.TempDir(), t.TempDir(), t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", other)
	writeFile(t, filepath.Join(other, "agentls", "mcp.json"), `{"mcpServers": {"elsewhere": {"command": "no-such-server"}}}`)
	writeFile(t, filepath.Join(userDir, "agentls", "mcp.json"), `{"mcpServers": {"mine": {"command": "no-such-server"}}}`)
	fsys, err := ops.NewLocal([]ops.FolderSpec{{Path: dir}})
	if err != nil {
		t.Fatal(err)
	}
	defer fsys.Close()
	cfgs, err := upstreamConfigs(fsys, userDir)
	if err != nil {
		t.Fatal(err)
	}
	if len(cfgs) != 1 || cfgs[0].Name != "mine" {
		t.Errorf("servers = %+v, want only the session user dir's \"mine\"", cfgs)
	}
}

// A session for a few calls (agentls call) arms no watcher, and a deny
// rule saved mid-session still applies to its next call: the permission
// step's stamp check reads the settings again.
func TestNoWatchSessionArmsNothingAndStillSeesSavedRules(t *testing.T) {
	dir, userDir := t.TempDir(), t.TempDir()
	writeFile(t, filepath.Join(dir, "notes.txt"), "hello\n")
	armed := make(chan string, 1)
	s, err := New(Options{Folders: []ops.FolderSpec{{Path: dir}}, Log: slog.New(slog.DiscardHandler), NoUpstream: true, AuditDir: "-", UserConfigDir: userDir,
		NoWatch: true, OnWatcherReady: func(mode string) { armed <- mode }})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	read := policy.Request{Tool: "read", Paths: []policy.PathRef{{Rel: "notes.txt", Abs: filepath.Join(dir, "notes.txt")}}, InWorkspace: true}
	writeFile(t, filepath.Join(dir, filepath.FromSlash(settings.WorkspaceFile)), `{"permissions": {"deny": ["Read(notes.txt)"]}}`)
	s.freshPolicy() // what the permission step runs before each call
	if d := s.Policy.Evaluate(read).Decision; d != policy.Deny {
		t.Errorf("read after the deny rule was saved: %v, want deny", d)
	}
	select {
	case mode := <-armed:
		t.Errorf("a watcher was armed (%q)", mode)
	case <-time.After(200 * time.Millisecond):
	}
	if s.userWatchDone != nil {
		t.Error("the user configuration is watched")
	}
}
