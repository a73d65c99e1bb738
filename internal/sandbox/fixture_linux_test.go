package sandbox

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentls/agentls/internal/proc"
)

// fixture is a workspace (a git repository with a local config), a
// directory outside it, and a home directory holding every default
// denyRead path, with a sandbox over them.
type fixture struct {
	ws, out, home string
	secret        string // the content of every secret file
	sb            *Sandbox
}

func newFixture(t testing.TB, s Settings) *fixture {
	t.Helper()
	base := t.TempDir()
	f := &fixture{ws: filepath.Join(base, "ws"), out: filepath.Join(base, "outside"), home: filepath.Join(base, "home"), secret: "TOPSECRET-7f3a"}
	for _, d := range []string{f.ws, f.out, f.home} {
		must(t, os.MkdirAll(d, 0o755))
	}
	must(t, os.WriteFile(filepath.Join(f.out, "existing"), []byte("original\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(f.out, "existing2"), []byte("original\n"), 0o644))
	for _, p := range []string{".ssh/id_rsa", ".aws/credentials", ".gnupg/private-keys", ".config/gcloud/credentials.db", ".netrc", ".docker/config.json"} {
		full := filepath.Join(f.home, p)
		must(t, os.MkdirAll(filepath.Dir(full), 0o700))
		must(t, os.WriteFile(full, []byte(f.secret+"\n"), 0o600))
	}
	must(t, os.WriteFile(filepath.Join(f.ws, "secret.env"), []byte(f.secret+"\n"), 0o600))
	must(t, os.WriteFile(filepath.Join(f.ws, "file"), []byte("hello\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(f.ws, "locked.txt"), []byte("original\n"), 0o644))
	git := func(args ...string) {
		c := exec.Command("git", args...)
		c.Dir = f.ws
		if out, err := c.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q")
	git("config", "user.email", "sandbox@example.com")
	git("config", "user.name", "Sandbox Test")
	git("config", "commit.gpgsign", "false")
	must(t, os.MkdirAll(filepath.Join(f.ws, ".agentls"), 0o755))
	must(t, os.WriteFile(filepath.Join(f.ws, ".agentls", "settings.json"), []byte("{}\n"), 0o644))
	s.Enabled = true
	// With AGENTLS_BIN the launcher is the shipped one (agentls-sandbox
	// next to it when built, else agentls); without, this test binary.
	sb, err := New(s, Options{Folders: []string{f.ws}, Home: f.home, TempDir: base, DenyRead: []string{filepath.Join(f.ws, "secret.env")}, DenyWrite: []string{filepath.Join(f.ws, "locked.txt")}, Exe: os.Getenv("AGENTLS_BIN")})
	must(t, err)
	t.Cleanup(func() { sb.Close() })
	f.sb = sb
	return f
}

// run runs command sandboxed in dir (default: the workspace) the way the
// bash tool does, and returns its output and the run (for Explain).
func (f *fixture) run(t *testing.T, command string) (proc.Result, *Run) {
	t.Helper()
	r, err := f.sb.Prepare(f.ws)
	if err != nil {
		t.Fatalf("prepare: %v", err)
	}
	t.Cleanup(r.Close)
	env := append(proc.BaseEnv(os.Environ()), r.Env...)
	env = append(env, "HOME="+f.home, "WS="+f.ws, "OUT="+f.out)
	res, err := proc.Run(context.Background(), proc.Spec{Command: command, Dir: f.ws, Env: env, Wrap: r.Wrap, Timeout: 60e9})
	if err != nil {
		t.Fatalf("run %q: %v", command, err)
	}
	return res, r
}

// requireActive skips when this machine truly cannot sandbox, after
// checking what the sandbox then does: it says it is off, and why.
func requireActive(t *testing.T, f *fixture) {
	t.Helper()
	st := f.sb.Status()
	if st.Active {
		return
	}
	if st.Reason == "" || f.sb.ModeOf("true") != Unconfined {
		t.Fatalf("an inactive sandbox must say why and leave commands unconfined: %+v", st)
	}
	t.Skip(fmt.Sprintf("the sandbox cannot run on this machine (%s); checked that it reports so", st.Reason))
}

func exists(p string) bool { _, err := os.Lstat(p); return err == nil }

func content(p string) string { b, _ := os.ReadFile(p); return string(b) }

func contains(s, sub string) bool { return strings.Contains(s, sub) }
