package e2e

// Contract tests of the wire contract (docs/protocol.md), written from the
// contract alone. Ordering guarantees are checked on the raw framing client
// (framingRaw, whose frames carry their wire position) because the
// harness's async handler may reorder notifications relative to replies.

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentls/agentls/test/harness"
)

// initializeNotesOf returns the notifications with method whose params.callId is callID.
func initializeNotesOf(r *framingRaw, method, callID string) []framingFrame {
	var out []framingFrame
	for _, f := range r.all() {
		if f.method() == method && f.M["id"] == nil && f.params()["callId"] == callID {
			out = append(out, f)
		}
	}
	return out
}

// initializeSession starts agentls on a fresh workspace and initializes it
// (bypass mode unless init names the options).
func initializeSession(t *testing.T, files map[string]string, init map[string]any) (*framingRaw, string) {
	t.Helper()
	ws := resolvedWorkspace(t, files)
	r := framingStart(t, ws)
	if init == nil {
		init = map[string]any{}
	}
	if _, ok := init["initializationOptions"]; !ok {
		init["initializationOptions"] = bypassOptions()
	}
	r.initialize(init)
	return r, ws
}

func TestInitializeDetailsBeforeReplyAndCallIDs(t *testing.T) {
	t.Parallel()
	old := "alpha\nbeta\ngamma\ndelta\n"
	r, ws := initializeSession(t, map[string]string{"a.txt": old, "b.txt": "one\n"}, nil)
	r.toolCall(t, "read", "", map[string]any{"path": "a.txt"})
	r.toolCall(t, "read", "", map[string]any{"path": "b.txt"})

	cases := []struct {
		name, callID, tool string
		args               map[string]any
		kind, file         string
	}{
		{"edit", "c-edit", "edit", map[string]any{"path": "a.txt", "edits": []any{
			map[string]any{"oldText": "beta", "newText": "BETA"}, map[string]any{"oldText": "delta\n", "newText": "delta\nepsilon\n"},
		}}, "edit", "a.txt"},
		{"write existing", "c-write", "write", map[string]any{"path": "b.txt", "content": "two\n"}, "write", "b.txt"},
		{"write new", "c-create", "write", map[string]any{"path": "sub/new.txt", "content": "fresh\n"}, "create", "sub/new.txt"},
		{"edit without callId", "", "edit", map[string]any{"path": "a.txt", "edits": []any{map[string]any{"oldText": "gamma", "newText": "GAMMA"}}}, "edit", "a.txt"},
	}
	seen := map[string]bool{}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before, _ := os.ReadFile(filepath.Join(ws, tc.file))
			reply := r.toolCall(t, tc.tool, tc.callID, tc.args)
			res := reply.result()
			if res["isError"] == true {
				t.Fatalf("%s failed: %s", tc.tool, framingText(res))
			}
			id, _ := res["callId"].(string)
			if tc.callID != "" && id != tc.callID {
				t.Errorf("callId = %q, want the echo %q", id, tc.callID)
			}
			if id == "" || seen[id] {
				t.Errorf("callId %q empty or reused", id)
			}
			seen[id] = true
			notes := initializeNotesOf(r, "tools/details", id)
			if len(notes) == 0 {
				t.Fatalf("no tools/details with callId %q", id)
			}
			n, d := notes[0], notes[0].params()["details"].(map[string]any)
			if n.Seq > reply.Seq || n.params()["tool"] != tc.tool || d["kind"] != tc.kind || d["uri"] != fileURI(filepath.Join(ws, tc.file)) {
				t.Errorf("tools/details (frame %d, the reply %d): %s; want before the reply, tool %s, kind %s", n.Seq, reply.Seq, n.Raw, tc.tool, tc.kind)
			}
			// The other details fields are scripts' (edit/details_diff_textedits_hashes.txtar).
			edits, ok := d["edits"].([]any)
			if !ok {
				t.Fatalf("details.edits = %#v, want TextEdit[]", d["edits"])
			}
			after, _ := os.ReadFile(filepath.Join(ws, tc.file))
			if got := applyTextEdits(t, string(before), edits); got != string(after) {
				t.Errorf("edits applied to the old text give %q, the file holds %q", got, after)
			}
			// The reply's details are the notification's.
			if rd, _ := res["details"].(map[string]any); rd == nil || rd["unifiedDiff"] != d["unifiedDiff"] {
				t.Errorf("reply details differ from tools/details: %v", rd)
			}
		})
	}
}

// Serial: the gaps are measured where the notes arrive, and neighbours
// on a 2-core machine bunch them up.
func TestInitializeProgress(t *testing.T) {
	slow(t)
	r, _ := initializeSession(t, nil, nil)
	script := func(tag string) string {
		return "for i in $(seq 1 30); do echo " + tag + "$i; sleep 0.03; done"
	}
	// check judges the progress of callID, whose command printed tag lines
	// from sent until the reply.
	check := func(t *testing.T, callID, tag string, sent time.Time, reply framingFrame) {
		t.Helper()
		notes := initializeNotesOf(r, "tools/progress", callID)
		if len(notes) < 5 {
			t.Fatalf("%d tools/progress for %s over ~1 s of output, want several", len(notes), callID)
		}
		// Throttle: at least 50 ms apart, so at most elapsed/50ms + 1 notes.
		if elapsed := reply.At.Sub(sent); len(notes) > int(elapsed/(50*time.Millisecond))+1 {
			t.Errorf("%d progress notes of %s in %v: more than one per 50 ms", len(notes), callID, elapsed)
		}
		var gaps []time.Duration
		for i := 1; i < len(notes); i++ {
			gaps = append(gaps, notes[i].At.Sub(notes[i-1].At))
		}
		slices.Sort(gaps)
		// Receive-side jitter tolerated by judging the median with 10% slack.
		if med := gaps[len(gaps)/2]; med < 45*time.Millisecond {
			t.Errorf("median gap between tools/progress of %s = %v, want ≥ 50 ms", callID, med)
		}
		if last := notes[len(notes)-1].params(); !strings.Contains(fmt.Sprint(last["output"]), tag) {
			t.Errorf("progress output does not carry the command's output: %v", last)
		}
		for _, n := range notes {
			p := n.params()
			if _, ok := p["output"].(string); p["tool"] != "bash" || !ok {
				t.Errorf("progress %v: want tool bash and the output a string", p)
			}
			text := fmt.Sprint(p["output"], p["message"])
			if strings.Contains(text, "OTHER") && tag != "OTHER" || strings.Contains(text, "MINE") && tag != "MINE" {
				t.Errorf("progress of %s carries another call's output: %q", callID, text)
			}
			if n.Seq > reply.Seq {
				t.Errorf("progress frame %d after the reply frame %d", n.Seq, reply.Seq)
			}
		}
	}

	t.Run("explicit callId", func(t *testing.T) {
		sent := time.Now()
		reply := r.toolCall(t, "bash", "c-prog", map[string]any{"command": script("MINE")})
		check(t, "c-prog", "MINE", sent, reply)
	})
	t.Run("generated callId", func(t *testing.T) {
		sent := time.Now()
		reply := r.toolCall(t, "bash", "", map[string]any{"command": script("MINE")})
		id, _ := reply.result()["callId"].(string)
		if id == "" {
			t.Fatalf("no generated callId: %s", reply.Raw)
		}
		check(t, id, "MINE", sent, reply)
	})
	t.Run("batch stamps each call", func(t *testing.T) {
		sent := time.Now()
		f := r.callT(t, "tools/callBatch", map[string]any{"calls": []any{
			map[string]any{"name": "bash", "callId": "b-mine", "arguments": map[string]any{"command": script("MINE")}},
			map[string]any{"name": "bash", "arguments": map[string]any{"command": script("OTHER")}},
			map[string]any{"name": "read", "arguments": map[string]any{"path": "missing.txt"}},
		}})
		results, _ := f.result()["results"].([]any)
		if len(results) != 3 {
			t.Fatalf("callBatch results: %s", f.Raw)
		}
		ids := make([]string, len(results))
		for i, x := range results {
			ids[i], _ = x.(map[string]any)["callId"].(string)
		}
		if ids[0] != "b-mine" || ids[1] == "" || ids[2] == "" || results[2].(map[string]any)["isError"] != true {
			t.Errorf("results = %v, want b-mine, two generated callIds and the last isError", results)
		}
		check(t, "b-mine", "MINE", sent, f)
		check(t, ids[1], "OTHER", sent, f)
		for _, n := range r.all() {
			if n.method() == "tools/progress" || n.method() == "tools/details" {
				if id, _ := n.params()["callId"].(string); id == "" {
					t.Errorf("%s without callId: %s", n.method(), n.Raw)
				}
			}
		}
	})
}

// initializationOptions (docs/protocol.md): an invalid value fails
// initialize with -32602 naming the field and leaves the server
// uninitialized, so a corrected initialize works; an unknown key is a
// window/logMessage warning; `[]` (how Lua encodes an empty table) is `{}`
// inside the options too (at the top it is TestDocsInitializationOptions').
func TestInitializeInitializationOptions(t *testing.T) {
	t.Parallel()
	t.Run("invalid values, then a corrected initialize", func(t *testing.T) {
		r := framingStart(t, resolvedWorkspace(t, nil))
		opts := func(o map[string]any) map[string]any { return map[string]any{"initializationOptions": o} }
		for _, tc := range []struct {
			name   string
			params map[string]any
			field  string
		}{
			{"unknown mode", opts(map[string]any{"mode": "yolo"}), "mode"},
			{"mode is a number", opts(map[string]any{"mode": 3}), "mode"},
			{"allow is a string", opts(map[string]any{"permissions": map[string]any{"allow": "Bash(ls)"}}), "allow"},
			{"deny holds a number", opts(map[string]any{"permissions": map[string]any{"deny": []any{1}}}), "deny"},
			{"limit below range", opts(map[string]any{"limits": map[string]any{"readLines": 0}}), "readLines"},
			{"negative limit", opts(map[string]any{"limits": map[string]any{"readLines": -1}}), "readLines"},
			{"limit above range", opts(map[string]any{"limits": map[string]any{"bashTimeout": 86401}}), "bashTimeout"},
			{"grouped limit below range", opts(map[string]any{"limits": map[string]any{"read": map[string]any{"bytes": 10}}}), "read"},
			{"grouped limit a number", opts(map[string]any{"limits": map[string]any{"read": -1}}), "limits"},
			{"deferThreshold is a string of letters", opts(map[string]any{"deferThreshold": "many"}), "deferThreshold"},
			{"rootUri is a number", map[string]any{"rootUri": 5}, "rootUri"},
			{"workspaceFolders is a string", map[string]any{"workspaceFolders": "file:///tmp"}, "workspaceFolders"},
		} {
			tc.params["capabilities"] = map[string]any{}
			f := r.callT(t, "initialize", tc.params)
			if code, msg := framingErr(f.M); code != -32602 {
				t.Errorf("%s: got %s, want error -32602", tc.name, f.Raw)
			} else {
				wantContains(t, tc.name, msg, tc.field)
			}
		}
		r.initialize(map[string]any{"initializationOptions": map[string]any{"mode": "bypass", "colour": "blue"}})
		f, ok := r.rawClient.wait(framingWait, func(f framingFrame) bool {
			return f.method() == "window/logMessage" && strings.Contains(fmt.Sprint(f.params()["message"]), "colour")
		})
		if !ok {
			t.Fatalf("no window/logMessage naming the unknown key; frames: %d", len(r.all()))
		}
		if f.params()["type"] != float64(2) {
			t.Errorf("logMessage type = %v, want 2 (Warning): %s", f.params()["type"], f.Raw)
		}
	})
	t.Run("[] for {} inside the options", func(t *testing.T) {
		r := framingStart(t, resolvedWorkspace(t, map[string]string{"a.txt": "hello\n"}))
		r.initialize(map[string]any{"initializationOptions": map[string]any{"permissions": []any{}, "limits": []any{}}})
		if res := r.toolCall(t, "read", "", map[string]any{"path": "a.txt"}).result(); !strings.Contains(framingText(res), "hello") {
			t.Errorf("read: %s", framingText(res))
		}
	})
}

// A notification is never answered, so one that cannot be decoded can only
// be logged (a window/logMessage warning where the contract promises one):
// it must not end the session (Errors: the connection goes on).
func TestInitializeMalformedNotificationsKeepTheSession(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, body string
		warns      bool
	}{
		{"cancel without id", `{"jsonrpc":"2.0","method":"$/cancelRequest","params":{}}`, true},
		{"cancel with null id", `{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":null}}`, true},
		{"cancel with object id", `{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":{"a":1}}}`, true},
		{"cancel with a boolean id", `{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":true}}`, true},
		{"cancel params a string", `{"jsonrpc":"2.0","method":"$/cancelRequest","params":"garbage"}`, false},
		{"cancel without params", `{"jsonrpc":"2.0","method":"$/cancelRequest"}`, false},
		{"tools/call as a notification with bad params", `{"jsonrpc":"2.0","method":"tools/call","params":"garbage"}`, false},
		{"tools/list as a notification with bad params", `{"jsonrpc":"2.0","method":"tools/list","params":"garbage"}`, false},
		{"folders change with a numeric uri", `{"jsonrpc":"2.0","method":"workspace/didChangeWorkspaceFolders","params":{"event":{"added":[{"uri":5}]}}}`, false},
		{"folders change with a numeric event", `{"jsonrpc":"2.0","method":"workspace/didChangeWorkspaceFolders","params":{"event":5}}`, true},
		{"didOpen params a string", `{"jsonrpc":"2.0","method":"textDocument/didOpen","params":"garbage"}`, false},
		{"didOpen textDocument a number", `{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":5}}`, true},
		{"didChange params a string", `{"jsonrpc":"2.0","method":"textDocument/didChange","params":"nonsense"}`, true},
	}
	r, _ := initializeSession(t, map[string]string{"a.txt": "hello\n"}, nil)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := len(r.all())
			r.writeFrame([]byte(tc.body))
			if tc.warns {
				method := strings.Split(strings.SplitN(tc.body, `"method":"`, 2)[1], `"`)[0]
				if _, ok := r.waitFrom(before, framingWait, func(f framingFrame) bool {
					return f.method() == "window/logMessage" && f.params()["type"] == float64(2) && strings.Contains(string(f.Raw), method)
				}); !ok {
					t.Errorf("no window/logMessage warning naming %s for %s", method, tc.body)
				}
			}
			f := r.callT(t, "tools/call", framingTool("read", map[string]any{"path": "a.txt"}))
			wantContains(t, "read after the bad notification", framingText(f.result()), "hello")
			for _, g := range r.all()[before:] {
				if framingIsReply(g.M) && g.Seq != f.Seq {
					t.Errorf("the notification drew a reply: %s", g.Raw)
				}
			}
		})
	}
}

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
