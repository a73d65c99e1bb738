package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentls/agentls/test/harness"
)

// One stale MCP root used to drop the client's good roots too, leaving the
// workspace on the server's working directory (started in /, `read
// /etc/hostname` worked). The good roots are kept and the stale one named;
// with none usable every call fails naming the roots.
func TestStaleMCPRootNeverFallsBackToTheWorkingDirectory(t *testing.T) {
	t.Parallel()
	cwd := resolvedWorkspace(t, map[string]string{"cwd-secret.txt": "CWD SECRET\n"})
	good := resolvedWorkspace(t, map[string]string{"g.txt": "good root\n"})
	other := resolvedWorkspace(t, map[string]string{"plain.txt": "a file\n"})
	missing, file := filepath.Join(other, "gone"), filepath.Join(other, "plain.txt")

	t.Run("stale root among good ones", func(t *testing.T) {
		m, ctx := rootsStartMCPIn(t, cwd, nil, nestedFolders(good, missing, file))
		wantResult(t, "read in the good root, naming the skipped roots", m.tool(t, ctx, "read", map[string]any{"path": "g.txt"}), false, "good root", missing, "does not exist", file, "not a directory")
		wantLacks(t, "the skipped-roots notice, a second time", m.tool(t, ctx, "ls", map[string]any{}).Text(), missing)
		for _, p := range []string{filepath.Join(cwd, "cwd-secret.txt"), "cwd-secret.txt"} {
			r := m.tool(t, ctx, "read", map[string]any{"path": p})
			wantResult(t, "read in the working directory beside the client's roots", r, true)
			wantLacks(t, "read in the working directory beside the client's roots", r.Text(), "CWD SECRET")
		}
		if !strings.Contains(m.stderr.String(), missing) {
			t.Errorf("the log does not name the skipped root:\n%s", m.stderr.String())
		}
	})

	t.Run("no usable root", func(t *testing.T) {
		m, ctx := rootsStartMCPIn(t, cwd, nil, append(nestedFolders(missing, file), map[string]any{"uri": "https://example.com/repo", "name": "web"}))
		for _, c := range []struct {
			tool string
			args map[string]any
		}{
			{"read", map[string]any{"path": filepath.Join(cwd, "cwd-secret.txt")}},
			{"read", map[string]any{"path": "cwd-secret.txt"}},
			{"ls", map[string]any{}},
			{"grep", map[string]any{"pattern": "CWD SECRET"}},
			{"bash", map[string]any{"command": "cat cwd-secret.txt"}},
			{"write", map[string]any{"path": "new.txt", "content": "x"}},
		} {
			r := m.tool(t, ctx, c.tool, c.args)
			wantResult(t, c.tool+" with no usable root", r, true, "No workspace folder", missing, file, "https://example.com/repo")
			wantLacks(t, c.tool+" with no usable root", r.Text(), "CWD SECRET")
		}
		if _, err := os.Stat(filepath.Join(cwd, "new.txt")); err == nil {
			t.Error("write with no usable root created a file in the working directory")
		}
	})
}

// One --root that cannot be opened used to end `agentls mcp`: it is skipped
// with a warning naming it and the good ones are the workspace (`agentls
// call`: folders/bad_root_flag_skipped_with_a_warning.txtar); with none
// usable the command exits 2 naming them, never running on the working
// directory.
func TestBadRootFlagIsSkippedAndNoneUsableExits2(t *testing.T) {
	t.Parallel()
	cwd := resolvedWorkspace(t, map[string]string{"cwd-secret.txt": "CWD SECRET\n"})
	good := resolvedWorkspace(t, map[string]string{"g.txt": "good root\n", "f.txt": "a file\n"})
	missing, file := filepath.Join(good, "gone"), filepath.Join(good, "f.txt")

	t.Run("mcp, one bad among good", func(t *testing.T) {
		m, ctx := rootsStartMCPIn(t, cwd, nil, nil, "--root", missing, "--root", good)
		wantResult(t, "read in the good --root", m.tool(t, ctx, "read", map[string]any{"path": "g.txt"}), false, "good root")
		wantResult(t, "read in the working directory beside --root", m.tool(t, ctx, "read", map[string]any{"path": filepath.Join(cwd, "cwd-secret.txt")}), true)
		if w := m.stderr.String(); !strings.Contains(w, "warning: --root "+missing) {
			t.Errorf("no warning naming the bad --root:\n%s", w)
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
		"workspaceFolders":      append(nestedFolders(good, missing), map[string]any{"uri": ""}),
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
	nestedChange(t, ctx, c, []string{missing + "2"}, []string{good})
	if !shown(missing + "2") {
		t.Errorf("no window/showMessage names the added folder that is missing: %v", c.Notes("window/showMessage"))
	}
	for _, p := range []string{filepath.Join(good, "g.txt"), "g.txt", filepath.Join(decoy, "decoy.txt"), "decoy.txt"} {
		r := c.CallTool(ctx, "read", map[string]any{"path": p})
		if !r.IsError || !strings.Contains(r.Text(), "No workspace folder") || !strings.Contains(r.Text(), missing+"2") {
			t.Errorf("read %s with no usable folder: isError=%v %q", p, r.IsError, r.Text())
		}
	}

	// Adding a usable folder ends the refusal (removing one that is not
	// there changes nothing); the missing one is still no folder.
	nestedChange(t, ctx, c, []string{good}, []string{filepath.Join(missing, "other")})
	if r := c.CallTool(ctx, "read", map[string]any{"path": "g.txt"}); r.IsError || !strings.Contains(r.Text(), "good folder") {
		t.Errorf("read after the good folder came back: %q", r.Text())
	}
	wantResult(t, "grep after the good folder came back", c.CallTool(ctx, "grep", map[string]any{"pattern": "good"}), false, "g.txt:1: good folder")
	wantLacks(t, "ls (a folder that does not exist is no folder)", c.CallTool(ctx, "ls", map[string]any{}).Text(), "more folder")
}
