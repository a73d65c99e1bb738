package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentls/agentls/test/harness"
)

// rootsConnect starts `agentls mcp` with no --root in cwd and connects the
// Go SDK client declaring roots (on the newest version where roots are not
// deprecated).
func rootsConnect(t *testing.T, ctx context.Context, cwd string, roots ...string) (*mcp.ClientSession, *lockedBuffer) {
	t.Helper()
	cmd := harness.Command(t, []string{"mcp"})
	cmd.Dir = cwd
	errb := &lockedBuffer{}
	cmd.Stderr = errb
	client := mcp.NewClient(&mcp.Implementation{Name: "roots-test", Version: "1"}, nil)
	for _, r := range roots {
		client.AddRoots(&mcp.Root{URI: r, Name: filepath.Base(r)})
	}
	s, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 3 * time.Second}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatalf("connect: %v\nstderr:\n%s", err, errb.String())
	}
	t.Cleanup(func() { s.Close() })
	return s, errb
}

func rootsCall(t *testing.T, ctx context.Context, s *mcp.ClientSession, name string, args map[string]any) (bool, string) {
	t.Helper()
	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s %v: protocol error %v", name, args, err)
	}
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return !res.IsError, strings.Join(parts, "\n")
}

// One stale MCP root used to drop the client's good roots too, leaving the
// workspace on the server's working directory (started in /, `read
// /etc/hostname` worked). The good roots are kept and the stale one named;
// with none usable every call fails naming the roots.
func TestStaleMCPRootNeverFallsBackToTheWorkingDirectory(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 30*time.Second)
	cwd := resolvedWorkspace(t, map[string]string{"cwd-secret.txt": "CWD SECRET\n"})
	good := resolvedWorkspace(t, map[string]string{"g.txt": "good root\n"})
	other := resolvedWorkspace(t, map[string]string{"plain.txt": "a file\n"})
	missing := filepath.Join(other, "gone")
	file := filepath.Join(other, "plain.txt")

	t.Run("stale root among good ones", func(t *testing.T) {
		s, errb := rootsConnect(t, ctx, cwd, fileURI(good), fileURI(missing), fileURI(file))
		ok, text := rootsCall(t, ctx, s, "read", map[string]any{"path": "g.txt"})
		if !ok || !strings.Contains(text, "good root") {
			t.Fatalf("read in the good root: ok=%v %q\nstderr:\n%s", ok, text, errb.String())
		}
		for _, want := range []string{missing, "does not exist", file, "not a directory"} {
			if !strings.Contains(text, want) {
				t.Errorf("first result does not name the skipped roots (%q): %q", want, text)
			}
		}
		if _, text := rootsCall(t, ctx, s, "ls", map[string]any{}); strings.Contains(text, missing) {
			t.Errorf("the skipped-roots notice came twice: %q", text)
		}
		for _, p := range []string{filepath.Join(cwd, "cwd-secret.txt"), "cwd-secret.txt"} {
			if ok, text := rootsCall(t, ctx, s, "read", map[string]any{"path": p}); ok || strings.Contains(text, "CWD SECRET") {
				t.Errorf("read %s in the working directory beside the client's roots: %q", p, text)
			}
		}
		if !strings.Contains(errb.String(), missing) {
			t.Errorf("the log does not name the skipped root:\n%s", errb.String())
		}
	})

	t.Run("no usable root", func(t *testing.T) {
		s, _ := rootsConnect(t, ctx, cwd, fileURI(missing), fileURI(file), "https://example.com/repo")
		calls := []struct {
			tool string
			args map[string]any
		}{
			{"read", map[string]any{"path": filepath.Join(cwd, "cwd-secret.txt")}},
			{"read", map[string]any{"path": "cwd-secret.txt"}},
			{"ls", map[string]any{}},
			{"grep", map[string]any{"pattern": "CWD SECRET"}},
			{"bash", map[string]any{"command": "cat cwd-secret.txt"}},
			{"write", map[string]any{"path": "new.txt", "content": "x"}},
		}
		for _, c := range calls {
			ok, text := rootsCall(t, ctx, s, c.tool, c.args)
			if ok || strings.Contains(text, "CWD SECRET") {
				t.Errorf("%s %v with no usable root: ok=%v %q", c.tool, c.args, ok, text)
				continue
			}
			for _, want := range []string{"No workspace folder", missing, file, "https://example.com/repo"} {
				if !strings.Contains(text, want) {
					t.Errorf("%s: refusal lacks %q: %q", c.tool, want, text)
				}
			}
		}
		if _, err := os.Stat(filepath.Join(cwd, "new.txt")); err == nil {
			t.Error("write with no usable root created a file in the working directory")
		}
	})
}

// One --root that cannot be opened used to end `agentls mcp` and was not
// checked by `agentls call`: it is skipped with a warning naming it and the
// good ones are the workspace; with none usable the command exits 2 naming
// them, never running on the working directory.
func TestBadRootFlagIsSkippedAndNoneUsableExits2(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 30*time.Second)
	cwd := resolvedWorkspace(t, map[string]string{"cwd-secret.txt": "CWD SECRET\n"})
	good := resolvedWorkspace(t, map[string]string{"g.txt": "good root\n", "f.txt": "a file\n"})
	missing, file := filepath.Join(good, "gone"), filepath.Join(good, "f.txt")

	t.Run("mcp, one bad among good", func(t *testing.T) {
		cmd := harness.Command(t, []string{"mcp", "--root", missing, "--root", good})
		cmd.Dir = cwd
		errb := &lockedBuffer{}
		cmd.Stderr = errb
		client := mcp.NewClient(&mcp.Implementation{Name: "roots-test", Version: "1"}, &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}})
		s, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 3 * time.Second}, nil)
		if err != nil {
			t.Fatalf("connect: %v\nstderr:\n%s", err, errb.String())
		}
		defer s.Close()
		if ok, text := rootsCall(t, ctx, s, "read", map[string]any{"path": "g.txt"}); !ok || !strings.Contains(text, "good root") {
			t.Errorf("read in the good --root: ok=%v %q", ok, text)
		}
		if ok, text := rootsCall(t, ctx, s, "read", map[string]any{"path": filepath.Join(cwd, "cwd-secret.txt")}); ok {
			t.Errorf("the working directory was read beside --root: %q", text)
		}
		if w := errb.String(); !strings.Contains(w, "warning: --root "+missing) {
			t.Errorf("no warning naming the bad --root:\n%s", w)
		}
	})

	t.Run("call, one bad among good", func(t *testing.T) {
		r := runAgentls(t, cwd, nil, "call", "read", `{"path":"g.txt"}`, "--root", missing, "--root", good)
		if r.code != 0 || !strings.Contains(r.stdout, "good root") || !strings.Contains(r.stderr, "warning: --root "+missing) {
			t.Errorf("call: code %d stdout %q stderr %q; want 0, the file, and a warning naming %s", r.code, r.stdout, r.stderr, missing)
		}
	})

	for _, sub := range []string{"mcp", "call"} {
		t.Run(sub+", none usable", func(t *testing.T) {
			args := []string{sub, "--root", missing, "--root", file}
			if sub == "call" {
				args = []string{"call", "read", `{"path":"cwd-secret.txt"}`, "--root", missing, "--root", file}
			}
			r := runAgentls(t, cwd, nil, args...)
			if r.code != 2 || !strings.Contains(r.stderr, missing) || !strings.Contains(r.stderr, file) || strings.Contains(r.stdout, "CWD SECRET") {
				t.Errorf("%s: code %d stdout %q stderr %q; want 2 naming both roots", sub, r.code, r.stdout, r.stderr)
			}
		})
	}
}

// An empty or missing workspace folder used to fail the editor's initialize
// (and a bad added folder left the earlier folders in place). It is skipped
// and named in window/showMessage; once the editor's folders leave none
// usable, every call fails naming them, never running on --root or the
// folders from before.
func TestUnusableWorkspaceFolderIsSkippedAndShownToTheUser(t *testing.T) {
	t.Parallel()
	decoy := resolvedWorkspace(t, map[string]string{"decoy.txt": "DECOY ROOT\n"})
	good := resolvedWorkspace(t, map[string]string{"g.txt": "good folder\n"})
	missing := filepath.Join(good, "gone")
	c, ctx := startIn(t, decoy, map[string]any{
		"workspaceFolders":      []any{map[string]any{"uri": fileURI(good), "name": "good"}, map[string]any{"uri": fileURI(missing), "name": "gone"}, map[string]any{"uri": ""}},
		"initializationOptions": map[string]any{"mode": "bypass"},
	})
	shown := func(substr string) bool {
		_, ok := c.WaitNote(5*time.Second, func(n harness.Note) bool {
			return n.Method == "window/showMessage" && strings.Contains(string(n.Params), substr)
		})
		return ok
	}
	if r := c.CallTool(ctx, "read", map[string]any{"path": "g.txt"}); r.IsError || !strings.Contains(r.Text(), "good folder") {
		t.Fatalf("read in the good folder: %q", r.Text())
	}
	if !shown(missing) {
		t.Errorf("no window/showMessage names the skipped folder %s: %v", missing, c.Notes("window/showMessage"))
	}
	if r := c.CallTool(ctx, "read", map[string]any{"path": filepath.Join(decoy, "decoy.txt")}); !r.IsError {
		t.Errorf("--root was read beside the editor's folders: %q", r.Text())
	}

	// The editor removes the good folder and adds a missing one.
	if err := c.Conn.Notify(ctx, "workspace/didChangeWorkspaceFolders", map[string]any{"event": map[string]any{
		"added":   []any{map[string]any{"uri": fileURI(missing + "2"), "name": "gone2"}},
		"removed": []any{map[string]any{"uri": fileURI(good), "name": "good"}},
	}}); err != nil {
		t.Fatal(err)
	}
	if !shown(missing + "2") {
		t.Errorf("no window/showMessage names the added folder that is missing: %v", c.Notes("window/showMessage"))
	}
	for _, p := range []string{filepath.Join(good, "g.txt"), "g.txt", filepath.Join(decoy, "decoy.txt"), "decoy.txt"} {
		r := c.CallTool(ctx, "read", map[string]any{"path": p})
		if !r.IsError || !strings.Contains(r.Text(), "No workspace folder") || !strings.Contains(r.Text(), missing+"2") {
			t.Errorf("read %s with no usable folder: isError=%v %q", p, r.IsError, r.Text())
		}
	}

	// Adding a usable folder ends the refusal.
	if err := c.Conn.Notify(ctx, "workspace/didChangeWorkspaceFolders", map[string]any{"event": map[string]any{
		"added": []any{map[string]any{"uri": fileURI(good), "name": "good"}}, "removed": []any{},
	}}); err != nil {
		t.Fatal(err)
	}
	if r := c.CallTool(ctx, "read", map[string]any{"path": "g.txt"}); r.IsError || !strings.Contains(r.Text(), "good folder") {
		t.Errorf("read after the good folder came back: %q", r.Text())
	}
}
