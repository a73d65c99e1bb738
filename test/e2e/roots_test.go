package e2e

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentls/agentls/test/harness"
)

// One --root that cannot be opened used to end `agentls mcp`; it is skipped
// with a warning (folders/bad_root_flag_skipped_with_a_warning.txtar, unit
// TestRootFlagSkipsABadRootAndFailsWhenNoneIsUsable). With none usable the
// command exits 2 naming them, never running on the working directory.
func TestBadRootFlagIsSkippedAndNoneUsableExits2(t *testing.T) {
	t.Parallel()
	cwd := resolvedWorkspace(t, map[string]string{"cwd-secret.txt": "CWD SECRET\n"})
	good := resolvedWorkspace(t, map[string]string{"f.txt": "a file\n"})
	missing, file := filepath.Join(good, "gone"), filepath.Join(good, "f.txt")
	for sub, args := range map[string][]string{"mcp": {"mcp"}, "call": {"call", "read", `{"path":"cwd-secret.txt"}`}} {
		t.Run(sub+", none usable", func(t *testing.T) {
			r := runAgentls(t, cwd, nil, append(args, "--root", missing, "--root", file)...)
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
	wantResult(t, "read in the good folder", c.CallTool(ctx, "read", map[string]any{"path": "g.txt"}), false, "good folder")
	if !shown(missing) {
		t.Errorf("no window/showMessage names the skipped folder %s: %v", missing, c.Notes("window/showMessage"))
	}
	wantResult(t, "--root beside the editor's folders", c.CallTool(ctx, "read", map[string]any{"path": filepath.Join(decoy, "decoy.txt")}), true)

	// The editor removes the good folder and adds a missing one.
	nestedChange(t, ctx, c, []string{missing + "2"}, []string{good})
	if !shown(missing + "2") {
		t.Errorf("no window/showMessage names the added folder that is missing: %v", c.Notes("window/showMessage"))
	}
	for _, p := range []string{filepath.Join(good, "g.txt"), "g.txt", filepath.Join(decoy, "decoy.txt"), "decoy.txt"} {
		wantResult(t, "read "+p+" with no usable folder", c.CallTool(ctx, "read", map[string]any{"path": p}), true, "No workspace folder", missing+"2")
	}

	// Adding a usable folder ends the refusal (removing one that is not
	// there changes nothing); the missing one is still no folder.
	nestedChange(t, ctx, c, []string{good}, []string{filepath.Join(missing, "other")})
	wantResult(t, "read after the good folder came back", c.CallTool(ctx, "read", map[string]any{"path": "g.txt"}), false, "good folder")
	wantResult(t, "grep after the good folder came back", c.CallTool(ctx, "grep", map[string]any{"pattern": "good"}), false, "g.txt:1: good folder")
	wantLacks(t, "ls (a folder that does not exist is no folder)", c.CallTool(ctx, "ls", map[string]any{}).Text(), "more folder")
}
