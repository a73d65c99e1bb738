package e2e

// Contract tests of issue 4 (edit guard, watcher, edit, write,
// inline-diff details), written from docs/tools.md, docs/protocol.md and the issue's
// acceptance list only.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentls/agentls/test/harness"
)

// editCaseStart starts agentls on a fresh workspace holding files, in
// acceptEdits mode (edits and writes inside the workspace run unasked).
func editCaseStart(t *testing.T, files map[string]string) (*harness.Client, string, context.Context) {
	t.Helper()
	ws := t.TempDir()
	for name, body := range files {
		writeFile(t, filepath.Join(ws, name), body)
	}
	return editCaseStartIn(t, ws), ws, testCtx(t, 30*time.Second)
}

func editCaseStartIn(t *testing.T, ws string, env ...string) *harness.Client {
	t.Helper()
	return editCaseStartOpts(t, harness.Options{Root: ws, Env: env})
}

// editCaseStartOpts starts agentls with opts, initialized in acceptEdits mode.
func editCaseStartOpts(t *testing.T, opts harness.Options) *harness.Client {
	t.Helper()
	c := harness.Start(t, opts)
	c.Initialize(testCtx(t, 30*time.Second), map[string]any{"initializationOptions": map[string]any{"mode": "acceptEdits"}})
	return c
}

// editCaseMustRead calls the read tool and fails on an error result.
func editCaseMustRead(t *testing.T, c *harness.Client, ctx context.Context, args map[string]any) harness.Result {
	t.Helper()
	r := c.CallTool(ctx, "read", args)
	if r.IsError {
		t.Fatalf("read %v: %s", args, r.Text())
	}
	return r
}

func TestEditCaseDetails(t *testing.T) {
	old := "# Überschrift 😀\nprice: 5€ 🚀 rocket\nname = \"Zoë\"\ntail ✓\nend\n"
	ws := t.TempDir()
	writeFile(t, filepath.Join(ws, "doc.md"), old)
	raw := editCaseRawStart(t, ws, map[string]any{"mode": "acceptEdits"})
	if r, _ := raw.toolCall("read", "editCase-read", map[string]any{"path": "doc.md"}, 10*time.Second); r.IsError {
		t.Fatal(r.Text())
	}
	callID := "editCase-details-1"
	r, before := raw.toolCall("edit", callID, map[string]any{
		"path": "doc.md",
		"edits": []any{
			map[string]any{"oldText": "price: 5€ 🚀 rocket\nname = \"Zoë\"", "newText": "price: 6€ 🛸 ufo\nname = \"Zoë 👩‍💻\"\nextra ü"},
			map[string]any{"oldText": "tail ✓", "newText": "tail ✗"},
		}}, 10*time.Second)
	if r.IsError {
		t.Fatalf("edit: %s", r.Text())
	}
	newText := readFile(t, filepath.Join(ws, "doc.md"))
	if want := "# Überschrift 😀\nprice: 6€ 🛸 ufo\nname = \"Zoë 👩‍💻\"\nextra ü\ntail ✗\nend\n"; newText != want {
		t.Fatalf("file = %q", newText)
	}
	if n := strings.Count(strings.TrimSpace(r.Text()), "\n"); n > 1 {
		t.Errorf("model text should be one or two lines:\n%s", r.Text())
	}
	// The notification came before the reply (wire order), with the same details.
	notes := editCaseNotesFor(before, "tools/details", callID)
	if len(notes) != 1 {
		t.Fatalf("%d tools/details notifications before the reply, want 1", len(notes))
	}
	np := notes[0]
	if np["tool"] != "edit" {
		t.Errorf("tools/details tool = %v", np["tool"])
	}
	nd, _ := np["details"].(map[string]any)
	for _, k := range []string{"kind", "uri", "unifiedDiff", "edits", "firstChangedLine", "matchLevel", "oldHash", "newHash"} {
		if _, ok := nd[k]; !ok {
			t.Errorf("tools/details lacks %q", k)
		}
		a, _ := json.Marshal(nd[k])
		b, _ := json.Marshal(r.Details[k])
		if string(a) != string(b) {
			t.Errorf("details.%s differs between notification (%s) and reply (%s)", k, a, b)
		}
	}
	if nd["kind"] != "edit" {
		t.Errorf("kind = %v", nd["kind"])
	}
	if u, _ := nd["uri"].(string); !strings.HasPrefix(u, "file://") || !strings.HasSuffix(u, "/doc.md") {
		t.Errorf("uri = %v", nd["uri"])
	}
	if nd["oldHash"] == nd["newHash"] {
		t.Errorf("old and new hashes equal")
	}
	// firstChangedLine: line 2 of the old text (1-based).
	if f, _ := nd["firstChangedLine"].(float64); f != 2 {
		t.Errorf("firstChangedLine = %v, want 2", nd["firstChangedLine"])
	}
	edits, _ := r.Details["edits"].([]any)
	if len(edits) == 0 {
		t.Fatalf("no TextEdits: %v", r.Details["edits"])
	}
	if got := applyTextEdits(t, old, edits); got != newText {
		t.Errorf("TextEdits applied to the old text give %q, want %q", got, newText)
	}
	// The unified diff applies with git apply and with patch.
	diff, _ := r.Details["unifiedDiff"].(string)
	for _, tool := range []string{"git", "patch"} {
		dir := t.TempDir()
		writeFile(t, filepath.Join(dir, "doc.md"), old)
		writeFile(t, filepath.Join(dir, "change.diff"), diff)
		var cmd *exec.Cmd
		if tool == "git" {
			cmd = exec.Command("git", "apply", "change.diff")
		} else {
			cmd = exec.Command("patch", "-p1", "-i", "change.diff")
		}
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("%s cannot apply the diff: %v\n%s\ndiff:\n%s", tool, err, out, diff)
			continue
		}
		if got := readFile(t, filepath.Join(dir, "doc.md")); got != newText {
			t.Errorf("%s applied the diff to %q", tool, got)
		}
	}
}

// editCaseWaitChange waits for a workspace/externalChange whose uri ends in
// suffix, sent after since.
func editCaseWaitChange(c *harness.Client, since time.Time, suffix string, d time.Duration) (map[string]any, time.Time, bool) {
	var got map[string]any
	n, ok := c.WaitNote(d, func(n harness.Note) bool {
		if n.Method != "workspace/externalChange" || n.At.Before(since) {
			return false
		}
		var p map[string]any
		json.Unmarshal(n.Params, &p)
		u, _ := p["uri"].(string)
		if strings.HasSuffix(u, "/"+suffix) {
			got = p
			return true
		}
		return false
	})
	return got, n.At, ok
}

// editCaseWaitKind waits for a workspace/externalChange of kind for a uri
// ending in suffix, sent after since.
func editCaseWaitKind(c *harness.Client, since time.Time, suffix, kind string) (map[string]any, bool) {
	var got map[string]any
	_, ok := c.WaitNote(3*time.Second, func(n harness.Note) bool {
		if n.Method != "workspace/externalChange" || n.At.Before(since) {
			return false
		}
		var p map[string]any
		json.Unmarshal(n.Params, &p)
		u, _ := p["uri"].(string)
		if strings.HasSuffix(u, "/"+suffix) && p["kind"] == kind {
			got = p
			return true
		}
		return false
	})
	return got, ok
}

func TestEditCaseWatcherExternalChangeLatency(t *testing.T) {
	c, ws, ctx := editCaseStart(t, map[string]string{"w.txt": "v0\n", "sub/x.txt": "x\n"})
	editCaseMustRead(t, c, ctx, map[string]any{"path": "w.txt"})
	var lat []time.Duration
	for i := 1; i <= 5; i++ {
		start := time.Now()
		writeFile(t, filepath.Join(ws, "w.txt"), fmt.Sprintf("v%d\n", i))
		p, at, ok := editCaseWaitChange(c, start, "w.txt", 3*time.Second)
		if !ok {
			t.Fatalf("change %d: no workspace/externalChange", i)
		}
		if p["kind"] != "changed" || p["readStale"] != true {
			t.Errorf("change %d: params = %v, want kind changed, readStale true", i, p)
		}
		lat = append(lat, at.Sub(start))
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	t.Logf("externalChange latencies: %v", lat)
	since := time.Now()
	if err := os.Remove(filepath.Join(ws, "w.txt")); err != nil {
		t.Fatal(err)
	}
	if _, ok := editCaseWaitKind(c, since, "w.txt", "deleted"); !ok {
		t.Errorf("deleting a read file: no externalChange of kind deleted")
	}
	since = time.Now()
	writeFile(t, filepath.Join(ws, "w.txt"), "back\n")
	if _, ok := editCaseWaitKind(c, since, "w.txt", "created"); !ok {
		t.Errorf("re-creating a read file: no externalChange of kind created")
	}
	if lat[len(lat)/2] > 50*time.Millisecond {
		t.Errorf("median latency %v > 50 ms", lat[len(lat)/2])
	}
}

func TestEditCaseWatcherNewAndRenamedDirectories(t *testing.T) {
	c, ws, ctx := editCaseStart(t, map[string]string{"keep.txt": "k\n", "old/f.txt": "f0\n"})
	// mkdir -p a/b/c && echo x > a/b/c/f: the new directories are watched.
	cmd := exec.Command("sh", "-c", "mkdir -p a/b/c && echo x > a/b/c/f")
	cmd.Dir = ws
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	editCaseMustRead(t, c, ctx, map[string]any{"path": "a/b/c/f"})
	start := time.Now()
	writeFile(t, filepath.Join(ws, "a/b/c/f"), "changed\n")
	if _, _, ok := editCaseWaitChange(c, start, "a/b/c/f", 3*time.Second); !ok {
		t.Error("no externalChange for a file in a freshly created nested directory")
	}
	// A renamed directory keeps being watched under its new name.
	if err := os.Rename(filepath.Join(ws, "old"), filepath.Join(ws, "new")); err != nil {
		t.Fatal(err)
	}
	editCaseMustRead(t, c, ctx, map[string]any{"path": "new/f.txt"})
	start = time.Now()
	writeFile(t, filepath.Join(ws, "new/f.txt"), "f1\n")
	if _, _, ok := editCaseWaitChange(c, start, "new/f.txt", 3*time.Second); !ok {
		t.Error("no externalChange under the renamed directory's new name")
	}
}

func TestEditCaseWatcherOverflow(t *testing.T) {
	slow(t)
	c, ws, ctx := editCaseStart(t, map[string]string{"x.txt": "x0\n", "y.txt": "y0\n"})
	editCaseMustRead(t, c, ctx, map[string]any{"path": "x.txt"})
	editCaseMustRead(t, c, ctx, map[string]any{"path": "y.txt"})
	start := time.Now()
	// 20,000 creates in one burst overflow the kernel queue (16,384); the
	// change to x.txt in the middle of it must not be missed.
	dir := filepath.Join(ws, "flood")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 20000; i++ {
		if i == 10000 {
			writeFile(t, filepath.Join(ws, "x.txt"), "x1 external\n")
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%05d", i)), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("created 20,000 files in %v", time.Since(start))
	if _, _, ok := editCaseWaitChange(c, start, "x.txt", 10*time.Second); !ok {
		t.Error("externalChange for x.txt lost in the overflow")
	}
	r := c.CallTool(ctx, "edit", editCall("x.txt", "x1", "X"))
	wantResult(t, "stale edit after overflow", r, true, "read it again")
	// The watcher still works after the rescan.
	since := time.Now()
	writeFile(t, filepath.Join(ws, "y.txt"), "y1\n")
	if _, _, ok := editCaseWaitChange(c, since, "y.txt", 5*time.Second); !ok {
		t.Error("no externalChange after the overflow rescan")
	}
}

// TestEditCaseWatcherDegraded runs agentls in a user namespace whose
// inotify watch limit is 1, so adding watches fails with ENOSPC.
func TestEditCaseWatcherDegraded(t *testing.T) {
	if _, err := exec.LookPath("unshare"); err != nil {
		t.Skip("no unshare")
	}
	if err := exec.Command("unshare", "-U", "-r", "sh", "-c", "echo 1 > /proc/sys/user/max_inotify_watches").Run(); err != nil {
		t.Skipf("cannot lower the inotify watch limit in a user namespace: %v", err)
	}
	bin := harness.Binary(t)
	wrapper := filepath.Join(t.TempDir(), "agentls-limited")
	script := "#!/bin/sh\nexec unshare -U -r sh -c 'echo 1 > /proc/sys/user/max_inotify_watches && exec \"$0\" \"$@\"' " + bin + " \"$@\"\n"
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("AGENTLS_BIN", wrapper)
	ws := t.TempDir()
	for i := 0; i < 5; i++ {
		writeFile(t, filepath.Join(ws, fmt.Sprintf("d%d/e/f.txt", i)), "x\n")
	}
	writeFile(t, filepath.Join(ws, "a.txt"), "one\n")
	c := harness.Start(t, harness.Options{Root: ws, Process: true})
	ctx := testCtx(t, 30*time.Second)
	res := c.Initialize(ctx, map[string]any{"initializationOptions": map[string]any{"mode": "acceptEdits"}})
	caps, _ := res["capabilities"].(map[string]any)
	exp, _ := caps["experimental"].(map[string]any)
	ag, _ := exp["agentls"].(map[string]any)
	checkWatcherStart(t, ag, c.WatcherMode)
	if c.WatcherMode != "degraded" {
		t.Errorf("agentls/watcherReady watcher = %q, want degraded", c.WatcherMode)
	}
	if _, ok := c.WaitNote(3*time.Second, func(n harness.Note) bool {
		return n.Method == "window/logMessage" && strings.Contains(strings.ToLower(string(n.Params)), "degraded")
	}); !ok {
		t.Error("no window/logMessage reporting the degraded watcher")
	}
	editCaseMustRead(t, c, ctx, map[string]any{"path": "a.txt"})
	writeFile(t, filepath.Join(ws, "a.txt"), "two external\n")
	r := c.CallTool(ctx, "edit", editCall("a.txt", "two", "three"))
	wantResult(t, "stale edit in degraded mode", r, true, "read it again")
	if got := readFile(t, filepath.Join(ws, "a.txt")); got != "two external\n" {
		t.Errorf("file = %q", got)
	}
}

func TestEditCaseConcurrentEditsOfOneFile(t *testing.T) {
	const n = 50
	var b strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "slot %02d: old\n", i)
	}
	orig := b.String()
	want := strings.ReplaceAll(orig, ": old", ": new")
	edit := func(i int) map[string]any {
		return editCall("c.txt", fmt.Sprintf("slot %02d: old", i), fmt.Sprintf("slot %02d: new", i))
	}
	t.Run("callBatch", func(t *testing.T) {
		c, ws, ctx := editCaseStart(t, map[string]string{"c.txt": orig})
		editCaseMustRead(t, c, ctx, map[string]any{"path": "c.txt"})
		var calls []any
		for i := 0; i < n; i++ {
			calls = append(calls, map[string]any{"name": "edit", "arguments": edit(i)})
		}
		var res struct {
			Results []harness.Result `json:"results"`
		}
		if err := c.Call(ctx, "tools/callBatch", map[string]any{"calls": calls}, &res); err != nil {
			t.Fatal(err)
		}
		if len(res.Results) != n {
			t.Fatalf("%d results", len(res.Results))
		}
		for i, r := range res.Results {
			if r.IsError {
				t.Errorf("edit %d: %s", i, r.Text())
			}
		}
		if got := readFile(t, filepath.Join(ws, "c.txt")); got != want {
			t.Errorf("lost updates:\n%s", got)
		}
	})
	t.Run("parallel calls, half through a symlink alias", func(t *testing.T) {
		c, ws, ctx := editCaseStart(t, map[string]string{"c.txt": orig})
		if err := os.Symlink("c.txt", filepath.Join(ws, "alias.txt")); err != nil {
			t.Fatal(err)
		}
		editCaseMustRead(t, c, ctx, map[string]any{"path": "c.txt"})
		editCaseMustRead(t, c, ctx, map[string]any{"path": "alias.txt"})
		var wg sync.WaitGroup
		errs := make([]string, n)
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				args := edit(i)
				if i%2 == 1 {
					args["path"] = "alias.txt"
				}
				r, err := c.TryCallTool(ctx, "edit", args)
				if err != nil {
					errs[i] = err.Error()
				} else if r.IsError {
					errs[i] = r.Text()
				}
			}()
		}
		wg.Wait()
		for i, e := range errs {
			if e != "" {
				t.Errorf("edit %d: %s", i, e)
			}
		}
		if got := readFile(t, filepath.Join(ws, "c.txt")); got != want {
			t.Errorf("lost updates:\n%s", got)
		}
		if fi, err := os.Lstat(filepath.Join(ws, "alias.txt")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
			t.Errorf("the symlink alias was replaced by a file")
		}
	})
}

func TestEditCaseSigkillLeavesOldOrNew(t *testing.T) {
	slow(t)
	ws := t.TempDir()
	p := filepath.Join(ws, "big.txt")
	var b strings.Builder
	for b.Len() < 4<<20 {
		b.WriteString("0123456789 abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ\n")
	}
	body := b.String()
	writeFile(t, p, "MARK-0\n"+body)
	// Time one undisturbed edit, then spread the kill points across it.
	c0 := editCaseStartOpts(t, harness.Options{Root: ws, Process: true})
	ctx0 := testCtx(t, 30*time.Second)
	editCaseMustRead(t, c0, ctx0, map[string]any{"path": "big.txt", "limit": 1})
	t0 := time.Now()
	if r := c0.CallTool(ctx0, "edit", editCall("big.txt", "MARK-0\n", "MARK-00\n")); r.IsError {
		t.Fatal(r.Text())
	}
	editDur := time.Since(t0)
	c0.Process().Kill()
	<-c0.Exited()
	t.Logf("one edit of the 4 MB file takes %v", editDur)
	deadline := time.Now().Add(12 * time.Second)
	var outcomes []bool // whether each killed edit had landed
	for i := 0; i < 12 && time.Now().Before(deadline); i++ {
		before := readFile(t, p)
		cur := strings.SplitN(before, "\n", 2)[0]
		next := fmt.Sprintf("MARK-%d", i+1)
		after := next + before[len(cur):]
		c := editCaseStartOpts(t, harness.Options{Root: ws, Process: true})
		ctx := testCtx(t, 30*time.Second)
		editCaseMustRead(t, c, ctx, map[string]any{"path": "big.txt", "limit": 1})
		done := make(chan struct{})
		go func() {
			defer close(done)
			c.TryCallTool(ctx, "edit", editCall("big.txt", cur+"\n", next+"\n"))
		}()
		// Vary the kill point across the edit's lifetime.
		time.Sleep(editDur * time.Duration(i) / 8)
		c.Process().Kill()
		<-c.Exited()
		<-done
		got := readFile(t, p)
		outcomes = append(outcomes, got == after)
		if got != before && got != after {
			t.Fatalf("iteration %d: file is neither old nor new (len %d, starts %q)", i, len(got), got[:min(20, len(got))])
		}
	}
	t.Logf("edit landed before the kill: %v", outcomes)
	c := editCaseStartIn(t, ws)
	editCaseMustRead(t, c, testCtx(t, 30*time.Second), map[string]any{"path": "big.txt", "limit": 1})
	entries, err := os.ReadDir(ws)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if len(names) != 1 || names[0] != "big.txt" {
		t.Errorf("temp files left behind after restart: %v", names)
	}
}

// editCaseRaw speaks LSP framing to agentls directly, so the order of frames
// on the wire (a notification before its call's reply) can be checked; the
// harness's async handlers do not preserve it.
type editCaseRaw struct {
	*rawClient[map[string]any]
	nextID int
	taken  int // frames already returned by call
}

func editCaseRawStart(t *testing.T, ws string, initOpts map[string]any, env ...string) *editCaseRaw {
	t.Helper()
	r := &editCaseRaw{rawClient: startRaw(t, []string{"--root", ws}, env, lenientFrames(func(body []byte) []map[string]any {
		var m map[string]any
		json.Unmarshal(body, &m)
		if m != nil {
			m["_recvAt"] = time.Now() // local only, never sent
		}
		return []map[string]any{m}
	}))}
	r.call("initialize", map[string]any{"capabilities": map[string]any{}, "initializationOptions": initOpts}, 10*time.Second)
	r.send(map[string]any{"jsonrpc": "2.0", "method": "initialized", "params": map[string]any{}})
	// Tests change files and expect workspace/externalChange: only once
	// the watchers are armed.
	if _, ok := r.wait(10*time.Second, func(f map[string]any) bool { return f["method"] == harness.WatcherReady }); !ok {
		t.Fatalf("no %s within 10s", harness.WatcherReady)
	}
	return r
}

func (r *editCaseRaw) send(msg map[string]any) {
	b, _ := json.Marshal(msg)
	if err := r.writeFrame(b); err != nil {
		r.t.Fatalf("send: %v", err)
	}
}

// call sends a request and returns its reply and every frame received
// before it (since the previous call's reply), in wire order.
func (r *editCaseRaw) call(method string, params any, timeout time.Duration) (map[string]any, []map[string]any) {
	r.t.Helper()
	r.nextID++
	id := r.nextID
	r.send(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	var before []map[string]any
	deadline := time.Now().Add(timeout)
	for {
		f, ok := r.next(&r.taken, deadline)
		if !ok && r.isExited() {
			r.t.Fatalf("%s: connection closed", method)
		}
		if !ok {
			r.t.Fatalf("%s: no reply within %v", method, timeout)
		}
		if fid, ok := f["id"].(float64); ok && int(fid) == id && f["method"] == nil {
			return f, before
		}
		before = append(before, f)
	}
}

// toolCall runs tools/call and returns the result and the notifications
// (by method) that preceded the reply.
func (r *editCaseRaw) toolCall(name, callID string, args any, timeout time.Duration) (harness.Result, []map[string]any) {
	r.t.Helper()
	reply, before := r.call("tools/call", map[string]any{"name": name, "callId": callID, "arguments": args}, timeout)
	var res harness.Result
	b, _ := json.Marshal(reply["result"])
	if err := json.Unmarshal(b, &res); err != nil || reply["error"] != nil {
		r.t.Fatalf("tools/call %s: %v %v", name, err, reply["error"])
	}
	return res, before
}

// editCaseNotesFor returns the params of frames with method for callID.
func editCaseNotesFor(frames []map[string]any, method, callID string) []map[string]any {
	var out []map[string]any
	for _, f := range frames {
		p, _ := f["params"].(map[string]any)
		if f["method"] == method && p["callId"] == callID {
			out = append(out, p)
		}
	}
	return out
}
