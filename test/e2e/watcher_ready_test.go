package e2e

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/agentls/agentls/test/harness"
)

// initialize does not wait for the file watchers: its capability says
// "starting", and agentls/watcherReady names the mode only after the
// client's initialized (LSP allows nothing but log and show messages
// before the initialize result reaches the client), even when the
// arming finished long before. Tool calls work meanwhile, and an external
// change after watcherReady is announced.
func TestWatcherReadyFollowsInitializedAndStartsAnnouncements(t *testing.T) {
	t.Parallel()
	ws := resolvedWorkspace(t, map[string]string{"a.txt": "one\n"})
	r := framingStart(t, ws)
	f := r.callT(t, "initialize", map[string]any{"capabilities": map[string]any{}, "initializationOptions": bypassOptions()})
	if f.M["error"] != nil {
		t.Fatalf("initialize: %s", f.Raw)
	}
	ag, _ := f.result()["capabilities"].(map[string]any)["experimental"].(map[string]any)["agentls"].(map[string]any)
	if ag["watcher"] != "starting" {
		t.Errorf("initialize capability watcher = %#v, want \"starting\"", ag["watcher"])
	}
	isReady := func(f framingFrame) bool { return f.method() == harness.WatcherReady }
	// A small tree arms in milliseconds: the notification is held for
	// initialized, not for the walk.
	if early, ok := r.rawClient.wait(300*time.Millisecond, isReady); ok {
		t.Fatalf("%s before the client's initialized: %s", harness.WatcherReady, early.Raw)
	}
	// Tools work before it.
	if rr := r.toolCall(t, "read", "r1", map[string]any{"path": "a.txt"}); rr.M["error"] != nil || rr.result()["isError"] == true {
		t.Fatalf("read before %s: %s", harness.WatcherReady, rr.Raw)
	}
	r.notify("initialized", map[string]any{})
	ready, ok := r.rawClient.wait(framingWait, isReady)
	if !ok {
		t.Fatalf("no %s after initialized", harness.WatcherReady)
	}
	if mode := watcherReadyMode(ready.M); mode != "inotify" {
		t.Errorf("%s watcher = %q, want inotify on Linux", harness.WatcherReady, mode)
	}
	if ready.Seq < f.Seq {
		t.Errorf("%s (frame %d) came before the initialize reply (frame %d)", harness.WatcherReady, ready.Seq, f.Seq)
	}
	writeFile(t, filepath.Join(ws, "a.txt"), "two\n")
	if _, ok := r.rawClient.wait(framingWait, func(f framingFrame) bool {
		return f.method() == "workspace/externalChange" && f.params()["uri"] == fileURI(filepath.Join(ws, "a.txt"))
	}); !ok {
		t.Error("no workspace/externalChange for a read file changed after watcherReady")
	}
}

// A folder change re-arms the watchers: a second agentls/watcherReady
// says when changes in the new folder are announced; once removed, its
// files are refused.
func TestWatcherReadyAgainAfterAFolderChange(t *testing.T) {
	t.Parallel()
	ws := resolvedWorkspace(t, map[string]string{"a.txt": "one\n"})
	other := resolvedWorkspace(t, map[string]string{"o.txt": "omega\n"})
	c := harness.Start(t, harness.Options{Root: ws})
	ctx := testCtx(t, 30*time.Second)
	c.Initialize(ctx, bypass())
	if err := c.Conn.Notify(ctx, "workspace/didChangeWorkspaceFolders", map[string]any{"event": map[string]any{
		"added": []any{map[string]any{"uri": fileURI(other), "name": "other"}}, "removed": []any{},
	}}); err != nil {
		t.Fatal(err)
	}
	if mode := c.AwaitWatcher(2); mode != "inotify" {
		t.Errorf("second %s watcher = %q, want inotify", harness.WatcherReady, mode)
	}
	if r := c.CallTool(ctx, "read", map[string]any{"path": filepath.Join(other, "o.txt")}); r.IsError {
		t.Fatal(r.Text())
	}
	if err := os.WriteFile(filepath.Join(other, "o.txt"), []byte("changed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, ok := c.WaitNote(10*time.Second, func(n harness.Note) bool { return n.Method == "workspace/externalChange" }); !ok {
		t.Error("no workspace/externalChange in the added folder after its arming")
	}
	// Removed again, the folder's files are outside the workspace.
	if err := c.Conn.Notify(ctx, "workspace/didChangeWorkspaceFolders", map[string]any{"event": map[string]any{
		"added": []any{}, "removed": []any{map[string]any{"uri": fileURI(other), "name": "other"}},
	}}); err != nil {
		t.Fatal(err)
	}
	wantResult(t, "read in the removed folder", c.CallTool(ctx, "read", map[string]any{"path": filepath.Join(other, "o.txt")}), true, "outside the workspace")
}
