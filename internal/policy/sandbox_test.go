package policy

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentls/agentls/internal/settings"
)

func writeSettings(t *testing.T, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestSandboxSettingsMergeAcrossSources(t *testing.T) {
	root, user := t.TempDir(), t.TempDir()
	writeSettings(t, filepath.Join(user, settings.UserFile), `{"sandbox": {"enabled": true, "failIfUnavailable": true,
		"filesystem": {"allowWrite": ["~/.cache/go-build"], "denyRead": ["~/.kube"]}, "network": {"allowedDomains": ["proxy.golang.org"]}}}`)
	writeSettings(t, filepath.Join(root, settings.WorkspaceFile), `{"sandbox": {"autoAllowBashIfSandboxed": true, "excludedCommands": ["docker:*"],
		"filesystem": {"allowWrite": ["build", "/etc"]}, "network": {"allowedDomains": ["*.npmjs.org"]}}}`)
	c, probs := Load([]string{root}, nil, user)
	s := c.SandboxSettings()
	home, _ := os.UserHomeDir()
	if !s.Enabled || !s.AutoAllowBash || !s.FailIfUnavailable {
		t.Errorf("switches not merged: %+v", s)
	}
	if !slices.Equal(s.ExcludedCommands, []string{"docker:*"}) || !slices.Equal(s.AllowedDomains, []string{"*.npmjs.org", "proxy.golang.org"}) || !slices.Equal(s.DenyRead, []string{"~/.kube"}) {
		t.Errorf("lists not joined: %+v", s)
	}
	wantWrite := []string{filepath.Join(root, "build"), filepath.Join(home, ".cache/go-build")}
	if !slices.Equal(s.AllowWrite, wantWrite) {
		t.Errorf("allowWrite = %v, want %v (the workspace's /etc dropped)", s.AllowWrite, wantWrite)
	}
	if !hasProblem(probs, `allowWrite "/etc" is ignored`) {
		t.Errorf("the dropped allowWrite is not reported: %v", probs)
	}
}

func TestWorkspaceSettingsCannotSwitchTheSandboxOff(t *testing.T) {
	root, user := t.TempDir(), t.TempDir()
	writeSettings(t, filepath.Join(user, settings.UserFile), `{"sandbox": {"enabled": true}}`)
	writeSettings(t, filepath.Join(root, settings.WorkspaceFile), `{"sandbox": {"enabled": false}}`)
	c, probs := Load([]string{root}, nil, user)
	if !c.SandboxSettings().Enabled || !hasProblem(probs, "cannot switch off the sandbox") {
		t.Fatalf("a workspace file switched the sandbox off: %+v %v", c.SandboxSettings(), probs)
	}
	// The editor (the user's own choice) can.
	off := false
	raw, _ := json.Marshal(map[string]any{"enabled": off})
	c, _ = Load([]string{root}, &settings.Settings{Sandbox: raw}, user)
	if c.SandboxSettings().Enabled {
		t.Fatalf("the editor's enabled:false was not honoured")
	}
}

func TestBrokenSandboxBlockFailsClosed(t *testing.T) {
	for name, body := range map[string]string{
		"wrong type":      `{"sandbox": {"enabled": "yes"}}`,
		"unknown key":     `{"sandbox": {"enable": true}}`,
		"typo in a block": `{"sandbox": {"filesystem": {"allowWrites": ["/"]}}}`,
		"empty entry":     `{"sandbox": {"excludedCommands": [""]}}`,
		"domain with url": `{"sandbox": {"network": {"allowedDomains": ["https://x.com/"]}}}`,
		"not an object":   `{"sandbox": true}`,
	} {
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			writeSettings(t, filepath.Join(root, settings.WorkspaceFile), body)
			c, probs := Load([]string{root}, nil, "")
			s := c.SandboxSettings()
			if !s.Enabled || !s.FailIfUnavailable || s.AutoAllowBash || len(s.AllowWrite) != 0 {
				t.Fatalf("a broken block must mean the sandbox on, strict: %+v", s)
			}
			if !hasProblem(probs, "the sandbox is on with its defaults") {
				t.Fatalf("not reported: %v", probs)
			}
			// The file's rules still apply.
			if c.Mode != ModeDefault {
				t.Fatalf("mode %q", c.Mode)
			}
		})
	}
}

func TestSandboxPathsAreTheLiteralDenyRules(t *testing.T) {
	root := t.TempDir()
	home, _ := os.UserHomeDir()
	c, _ := Load([]string{root}, &settings.Settings{Permissions: settings.Permissions{Deny: []string{
		"Read(./.env)", "Read(~/.kube/config)", "Edit(config/prod.yaml)", "Write(//etc/motd)", "Read(**/*.pem)", "Bash(rm:*)",
	}}}, "")
	read, write := c.SandboxPaths()
	if want := []string{filepath.Join(root, ".env"), filepath.Join(home, ".kube/config")}; !slices.Equal(read, want) {
		t.Errorf("denyRead = %v, want %v", read, want)
	}
	if want := []string{filepath.Join(root, "config/prod.yaml"), "/etc/motd"}; !slices.Equal(write, want) {
		t.Errorf("denyWrite = %v, want %v", write, want)
	}
}

func hasProblem(probs []Problem, sub string) bool {
	for _, p := range probs {
		if strings.Contains(p.String(), sub) {
			return true
		}
	}
	return false
}
