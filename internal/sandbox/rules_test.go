package sandbox

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/agentls/agentls/internal/sandbox/launcher"
)

func TestExcludedCommandsMatchEverySimpleCommandOfTheLine(t *testing.T) {
	pats := []string{"docker:*", "npm run dev", "git push:*"}
	cases := []struct {
		line string
		want bool
	}{
		{"docker ps", true},
		{"/usr/bin/docker run x", true},
		{"cd app && docker compose up", true},
		{"echo $(docker ps)", true},
		{"npm run dev", true},
		{"npm run dev --port 3", false}, // exact pattern: the words exactly
		{"npm test", false},
		{"git push origin main", true},
		{"git pull", false},
		{"dockerd", false},
		{"echo docker", false},
		{"$CMD ps", false}, // computed: stays in the sandbox
		{"docker ps; (", false},
	}
	for _, c := range cases {
		if got := excluded(c.line, pats); got != c.want {
			t.Errorf("excluded(%q) = %v, want %v", c.line, got, c.want)
		}
	}
	if excluded("docker ps", nil) {
		t.Errorf("no patterns excluded a command")
	}
}

func TestAllowedDomainsMatchHostsAndWildcardSubdomains(t *testing.T) {
	doms := []string{"proxy.golang.org", "*.npmjs.org"}
	for host, want := range map[string]bool{
		"proxy.golang.org": true, "PROXY.golang.org.": true, "evil-proxy.golang.org": false,
		"registry.npmjs.org": true, "npmjs.org": false, "a.b.npmjs.org": true, "npmjs.org.evil.com": false, "": false,
	} {
		if got := Allowed(host, doms); got != want {
			t.Errorf("Allowed(%q) = %v, want %v", host, got, want)
		}
	}
}

func TestModeOfFollowsSettingsAndAvailability(t *testing.T) {
	on := &Sandbox{s: Settings{Enabled: true, ExcludedCommands: []string{"docker:*"}, AutoAllowBash: true}}
	on.probe = probeResult{mechanism: "test"}
	on.set(on.s)
	off := &Sandbox{}
	off.set(Settings{})
	gone := &Sandbox{probe: probeResult{err: "no Landlock"}}
	gone.set(Settings{Enabled: true})
	strict := &Sandbox{probe: probeResult{err: "no Landlock"}}
	strict.set(Settings{Enabled: true, FailIfUnavailable: true})
	var none *Sandbox
	cases := []struct {
		name string
		sb   *Sandbox
		cmd  string
		want Mode
		auto bool
	}{
		{"enabled and available", on, "make", Confined, true},
		{"excluded command", on, "docker ps", Excluded, false},
		{"not enabled", off, "make", Unconfined, false},
		{"unavailable", gone, "make", Unconfined, false},
		{"unavailable with failIfUnavailable", strict, "make", Refused, false},
		{"no sandbox at all", none, "make", Unconfined, false},
	}
	for _, c := range cases {
		if got := c.sb.ModeOf(c.cmd); got != c.want {
			t.Errorf("%s: ModeOf = %v, want %v", c.name, got, c.want)
		}
		if got := c.sb.AutoAllows(c.cmd); got != c.auto {
			t.Errorf("%s: AutoAllows = %v, want %v", c.name, got, c.auto)
		}
	}
	if st := gone.Status(); st.Active || st.Reason != "no Landlock" {
		t.Errorf("an unavailable sandbox's status must say why: %+v", st)
	}
	if !strings.Contains(strict.Refusal(), "no Landlock") || !strings.Contains(strict.Refusal(), "failIfUnavailable") {
		t.Errorf("the refusal does not say why: %s", strict.Refusal())
	}
}

func TestExplainNamesWhatWasBlocked(t *testing.T) {
	ws := t.TempDir()
	home := t.TempDir()
	unreadable := filepath.Join(t.TempDir(), "unreadable")
	must(t, os.MkdirAll(unreadable, 0o700))
	r := &Run{pol: launcher.Policy{
		Write:     []string{ws, "/tmp/session"},
		ReadOnly:  []string{filepath.Join(ws, ".agentls"), filepath.Join(ws, ".git", "hooks")},
		DenyDirs:  []string{filepath.Join(home, ".ssh")},
		DenyFiles: []string{filepath.Join(home, ".netrc")},
	}}
	cases := []struct {
		name, output, want string
	}{
		{"bash redirection", "/usr/bin/bash: line 1: /etc/hosts: Permission denied", "write to /etc/hosts is outside the workspace"},
		{"touch", "touch: cannot touch '/etc/zz': Permission denied", "write to /etc/zz is outside the workspace"},
		{"mv names the target", "mv: cannot move 'a' to '/opt/b': Permission denied", "write to /opt/b is outside the workspace"},
		{"python", "PermissionError: [Errno 13] Permission denied: '/var/x'", "write to /var/x is outside the workspace"},
		{"relative to the cwd", "bash: line 1: ../x: Permission denied", "write to " + filepath.Join(filepath.Dir(ws), "x") + " is outside the workspace"},
		{"read-only .agentls", "/usr/bin/bash: line 1: .agentls/settings.json: Read-only file system", filepath.Join(ws, ".agentls/settings.json") + " is read-only in the sandbox"},
		{"git hooks", "cp: cannot create regular file '.git/hooks/pre-commit': Read-only file system", ".git/hooks/pre-commit is read-only in the sandbox"},
		{"denied read", "cat: " + home + "/.ssh/id_rsa: Permission denied", home + "/.ssh/id_rsa cannot be read"},
		{"denied file", "cat: " + home + "/.netrc: Permission denied", home + "/.netrc cannot be read"},
		{"network", "curl: (7) Failed to connect to 127.0.0.1 port 80 after 0 ms: Couldn't connect to server", "network is off in the sandbox"},
		{"dns", "curl: (6) Could not resolve host: example.com", "allowed domains: none"},
		{"mount", "mount: /x: permission denied.", "mounts"},
	}
	for _, c := range cases {
		b := r.Explain(c.output, ws)
		if len(b.Messages) == 0 || !strings.Contains(b.Messages[0], c.want) {
			t.Errorf("%s: %q → %q, want %q", c.name, c.output, b.Messages, c.want)
		}
	}
	// Not the sandbox's doing: nothing is claimed.
	for _, out := range []string{
		"bash: line 1: " + filepath.Join(ws, "x") + ": Permission denied", // inside the workspace
		"ls: cannot open directory '" + unreadable + "x': Permission denied",
		"all good",
	} {
		if os.Getuid() == 0 && strings.Contains(out, unreadable) {
			continue // root reads everything
		}
		if b := r.Explain(out, ws); len(b.Messages) != 0 {
			t.Errorf("%q was explained as the sandbox's: %q", out, b.Messages)
		}
	}
}

func TestSeatbeltProfileConfinesWritesReadsAndNetwork(t *testing.T) {
	pol := launcher.Policy{
		Write:     []string{"/Users/u/ws", "/private/tmp/s"},
		ReadOnly:  []string{"/Users/u/ws/.agentls", "/Users/u/ws/.git/hooks"},
		Pin:       []string{"/Users/u/ws/.git"},
		DenyDirs:  []string{"/Users/u/.ssh"},
		DenyFiles: []string{"/Users/u/.netrc"},
	}
	p := SeatbeltProfile(pol, 0)
	for _, want := range []string{
		"(deny default)", "(allow file-read*)",
		"(deny file-read*\n  (subpath \"/Users/u/.ssh\")\n  (subpath \"/Users/u/.netrc\")\n)",
		"(allow file-write*\n  (subpath \"/Users/u/ws\")\n  (subpath \"/private/tmp/s\")",
		"(deny file-write*\n  (subpath \"/Users/u/ws/.agentls\")\n  (subpath \"/Users/u/ws/.git/hooks\")\n)",
		"(deny file-write-unlink\n  (literal \"/Users/u/ws/.git\")",
		"(allow signal (target same-sandbox))",
	} {
		if !strings.Contains(p, want) {
			t.Errorf("profile lacks %q:\n%s", want, p)
		}
	}
	if strings.Contains(p, "network") {
		t.Errorf("network allowed without a proxy:\n%s", p)
	}
	// The deny rules come after the allows: in SBPL the last match wins.
	if strings.Index(p, "(deny file-write*") < strings.Index(p, "(allow file-write*") || strings.Index(p, "(deny file-read*") < strings.Index(p, "(allow file-read*)") {
		t.Errorf("a deny comes before the allow it narrows:\n%s", p)
	}
	if q := SeatbeltProfile(launcher.Policy{Write: []string{`/a "quoted" \ path`}}, 0); !strings.Contains(q, `"/a \"quoted\" \\ path"`) {
		t.Errorf("paths are not quoted:\n%s", q)
	}
	if q := SeatbeltProfile(pol, 3128); !strings.Contains(q, `(allow network-outbound (remote ip "localhost:3128"))`) {
		t.Errorf("the proxy port is not allowed:\n%s", q)
	}
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestStaleSandboxTempDirsOfEndedProcessesAreRemoved(t *testing.T) {
	parent := t.TempDir()
	dead := filepath.Join(parent, "agentls-sandbox-999999999-1")
	mine := filepath.Join(parent, "agentls-sandbox-"+strconv.Itoa(os.Getpid())+"-1")
	other := filepath.Join(parent, "agentls-sandbox-x-1")
	for _, d := range []string{dead, mine, other} {
		must(t, os.MkdirAll(d, 0o755))
	}
	cleanStale(parent)
	if _, err := os.Stat(dead); err == nil {
		t.Errorf("the temp dir of an ended process was kept")
	}
	for _, d := range []string{mine, other} {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("%s was removed", d)
		}
	}
}
