package sandbox

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentls/agentls/internal/proc"
)

// TestWorkspaceWorkSucceeds: what a build in the workspace does works
// sandboxed: writes, TMPDIR, go build, git commit, an npm test script, a
// local server on the sandbox's own loopback.
func TestWorkspaceWorkSucceeds(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a Go module sandboxed")
	}
	gocache, _ := exec.Command("go", "env", "GOCACHE").Output()
	f := newFixture(t, Settings{AllowWrite: []string{strings.TrimSpace(string(gocache))}})
	requireActive(t, f)
	must(t, os.WriteFile(filepath.Join(f.ws, "go.mod"), []byte("module example.com/w\n\ngo 1.21\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(f.ws, "main.go"), []byte("package main\n\nfunc main() { println(\"built\") }\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(f.ws, "package.json"), []byte(`{"name":"w","version":"1.0.0","scripts":{"test":"node -e \"require('fs').writeFileSync('npm-ran', 'ok'); require('fs').writeFileSync(require('os').tmpdir() + '/t', 'ok')\""}}`), 0o644))
	cases := []struct {
		name, command string
		check         func(out string) error
	}{
		{"write, rename and remove in the workspace", `mkdir -p a/b && echo x > a/b/f && mv a/b/f a/g && cp a/g h && rm -r a && cat h`, func(o string) error {
			if content(filepath.Join(f.ws, "h")) != "x\n" {
				return fmt.Errorf("h not written")
			}
			return nil
		}},
		{"TMPDIR is the session's temp dir and writable", `echo t > "$TMPDIR/x" && cat "$TMPDIR/x" && echo "$TMPDIR"`, func(o string) error {
			if !strings.Contains(o, f.sb.tmpDir()) {
				return fmt.Errorf("TMPDIR is not the session temp dir %s", f.sb.tmpDir())
			}
			return nil
		}},
		{"go build", `GOCACHE=` + strings.TrimSpace(string(gocache)) + ` go build -o app . && ./app`, func(o string) error {
			if !strings.Contains(o, "built") {
				return fmt.Errorf("no build")
			}
			return nil
		}},
		{"git commit with the workspace's git config", `git add file go.mod main.go && git commit -qm first && git log --oneline | wc -l`, func(o string) error {
			if strings.TrimSpace(o) != "1" {
				return fmt.Errorf("no commit")
			}
			return nil
		}},
		{"npm test", `npm_config_cache="$TMPDIR/npm" npm test --silent && cat npm-ran`, func(o string) error {
			if !strings.Contains(o, "ok") || content(filepath.Join(f.ws, "npm-ran")) != "ok" {
				return fmt.Errorf("npm test did not run")
			}
			return nil
		}},
		{"a local server on the sandbox's loopback", `python3 -m http.server 8765 --bind 127.0.0.1 >/dev/null 2>&1 & for i in $(seq 50); do curl -s -o /dev/null http://127.0.0.1:8765/ && echo served && break; sleep 0.1; done; kill %1`, func(o string) error {
			if !strings.Contains(o, "served") {
				return fmt.Errorf("the local server was not reachable")
			}
			return nil
		}},
		{"reading outside the workspace", `head -1 /etc/passwd && ls / >/dev/null && echo read`, func(o string) error {
			if !strings.Contains(o, "read") {
				return fmt.Errorf("reads failed")
			}
			return nil
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, _ := f.run(t, c.command)
			if res.ExitCode != 0 {
				t.Fatalf("exit %d:\n%s", res.ExitCode, res.Output)
			}
			if err := c.check(res.Output); err != nil {
				t.Fatalf("%v:\n%s", err, res.Output)
			}
		})
	}
}

// TestProxyLetsOnlyAllowedDomainsThrough: with allowedDomains, HTTP goes
// through agentls's proxy; an allowed host answers, any other is refused
// and named.
func TestProxyLetsOnlyAllowedDomainsThrough(t *testing.T) {
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "UPSTREAM-OK") })}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	go srv.Serve(ln) // ends with Close below
	defer srv.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	f := newFixture(t, Settings{AllowedDomains: []string{"localhost"}})
	requireActive(t, f)

	res, run := f.run(t, fmt.Sprintf(`curl -sS --noproxy '' --max-time 10 http://localhost:%d/`, port))
	if !strings.Contains(res.Output, "UPSTREAM-OK") {
		t.Fatalf("an allowed host was not reachable through the proxy (exit %d):\n%s", res.ExitCode, res.Output)
	}
	if len(run.Explain(res.Output, f.ws).Messages) != 0 {
		t.Errorf("an allowed fetch was reported as blocked")
	}

	res, run = f.run(t, fmt.Sprintf(`curl -sS --noproxy '' --max-time 10 http://127.0.0.1:%d/`, port))
	if strings.Contains(res.Output, "UPSTREAM-OK") {
		t.Fatalf("a host not in allowedDomains was reached:\n%s", res.Output)
	}
	b := run.Explain(res.Output, f.ws)
	if len(b.Messages) == 0 || !strings.Contains(b.Messages[0], "refused 127.0.0.1") {
		t.Fatalf("the refusal does not name the host: %q\n%s", b.Messages, res.Output)
	}

	res, _ = f.run(t, `curl -sS --max-time 10 https://example.org/ && echo FETCHED`)
	if strings.Contains(res.Output, "FETCHED") {
		t.Fatalf("https to a host not allowed got through:\n%s", res.Output)
	}

	res, _ = f.run(t, fmt.Sprintf(`curl -sS --noproxy '*' --max-time 5 http://127.0.0.1:%d/`, port))
	if strings.Contains(res.Output, "UPSTREAM-OK") {
		t.Fatalf("bypassing the proxy reached the host:\n%s", res.Output)
	}
}

// TestProxyForwarderEndsWithTheCommand: the forwarder that bridges the
// command's network namespace to the proxy ends when the command does.
// Its parent-death signal alone never came (Landlock's signal scoping
// drops it), so every command with allowedDomains left one process
// behind for the rest of the session. "true" ends before the forwarder
// looks at it; under load the forwarder once took that for a kernel
// without pidfd and waited for good.
func TestProxyForwarderEndsWithTheCommand(t *testing.T) {
	f := newFixture(t, Settings{AllowedDomains: []string{"localhost"}})
	requireActive(t, f)
	for _, command := range []string{"true", "sleep 0.2; echo done"} {
		r, err := f.sb.Prepare(f.ws)
		must(t, err)
		socket := r.pol.Proxy
		if socket == "" {
			t.Fatal("no proxy socket with allowedDomains set")
		}
		res, err := proc.Run(context.Background(), proc.Spec{Command: command, Dir: f.ws, Env: append(proc.BaseEnv(os.Environ()), r.Env...), Wrap: r.Wrap, Timeout: 60e9})
		r.Close()
		if err != nil || res.ExitCode != 0 {
			t.Fatalf("%q: exit %d, %v:\n%s", command, res.ExitCode, err, res.Output)
		}
		deadline := time.Now().Add(5 * time.Second)
		for forwarders(t, socket) > 0 && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		if n := forwarders(t, socket); n > 0 {
			t.Errorf("%q: %d forwarder process(es) still run 5 s after the command ended", command, n)
		}
	}
}

// forwarders counts the processes whose command line names socket.
func forwarders(t *testing.T, socket string) int {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	must(t, err)
	n := 0
	for _, e := range ents {
		if b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline"); err == nil && strings.Contains(string(b), "__sandbox-forward\x00"+socket+"\x00") {
			n++
		}
	}
	return n
}

// TestSymlinkedAgentlsDirIsRefused: a .agentls that is a link could be
// swapped by a command, so nothing runs (fail closed).
func TestSymlinkedAgentlsDirIsRefused(t *testing.T) {
	f := newFixture(t, Settings{})
	requireActive(t, f)
	must(t, os.RemoveAll(filepath.Join(f.ws, ".agentls")))
	must(t, os.MkdirAll(filepath.Join(f.ws, "cfg"), 0o755))
	must(t, os.Symlink("cfg", filepath.Join(f.ws, ".agentls")))
	if _, err := f.sb.Prepare(f.ws); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Fatalf("Prepare = %v, want a refusal naming the link", err)
	}
}
