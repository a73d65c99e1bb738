package e2e

// Contract tests of the write tool and of the edit guard's
// external-change detection, from docs/tools.md ("write", "edit", shared rules),
// docs/protocol.md (tools/details, workspace/externalChange) and docs/tools.md /
// docs/protocol.md. Only the wire and the disk are observed.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.lsp.dev/jsonrpc2"

	"github.com/agentls/agentls/test/harness"
)

// writesNoteWait bounds every wait for a notification: generous for a loaded
// 2-core machine, still far below the test's own timeout.
const writesNoteWait = 8 * time.Second

type writesOpts struct {
	mode      string // initializationOptions.mode; "" → acceptEdits
	caps      map[string]any
	onRequest func(ctx context.Context, method string, params json.RawMessage) (any, error)
}

// writesStart starts agentls on ws; acceptEdits by default, as this client
// answers no tools/confirm unless told to.
func writesStart(t *testing.T, ws string, o writesOpts) (*harness.Client, context.Context) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	t.Cleanup(cancel)
	c := harness.Start(t, harness.Options{Root: ws})
	c.OnRequest = o.onRequest
	mode := o.mode
	if mode == "" {
		mode = "acceptEdits"
	}
	params := map[string]any{"initializationOptions": map[string]any{"mode": mode}}
	if o.caps != nil {
		params["capabilities"] = map[string]any{"experimental": map[string]any{"agentls": o.caps}}
	}
	c.Initialize(ctx, params)
	return c, ctx
}

// writesWS returns a fresh workspace (symlinks resolved, so URIs compare) with files.
func writesWS(t *testing.T, files map[string]string) string {
	t.Helper()
	ws, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for rel, body := range files {
		writesPut(t, filepath.Join(ws, rel), body, 0o644)
	}
	return ws
}

func writesPut(t *testing.T, p, body string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), mode); err != nil {
		t.Fatal(err)
	}
}

func writesGet(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		return "<" + err.Error() + ">"
	}
	return string(b)
}

// writesNames lists a directory's entry names, sorted: temp files left behind show here.
func writesNames(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	sort.Strings(out)
	return out
}

// writesSameNames checks that dir ends up holding exactly want: a cancelled
// call answers -32800 at once and removes its temp file as it winds down,
// so a temp file counts as left behind only if it is still there after 2 s.
func writesSameNames(t *testing.T, what, dir string, want ...string) {
	t.Helper()
	sort.Strings(want)
	var got []string
	if !waitUntil(2*time.Second, func() bool { got = writesNames(t, dir); return reflect.DeepEqual(got, want) }) {
		t.Errorf("%s: directory %s holds %q, want exactly %q (temp file left behind?)", what, dir, got, want)
	}
}

func writesURI(p string) string { return "file://" + filepath.ToSlash(p) }

func writesWant(t *testing.T, what string, r harness.Result, isErr bool, wants ...string) {
	t.Helper()
	if r.IsError != isErr {
		t.Errorf("%s: isError=%v, want %v; text: %q", what, r.IsError, isErr, r.Text())
	}
	for _, w := range wants {
		if !strings.Contains(r.Text(), w) {
			t.Errorf("%s: text %q does not contain %q", what, r.Text(), w)
		}
	}
}

func writesWriteArgs(path, content string) map[string]any {
	return map[string]any{"path": path, "content": content}
}

func writesEditArgs(path, oldText, newText string) map[string]any {
	return map[string]any{"path": path, "edits": []any{map[string]any{"oldText": oldText, "newText": newText}}}
}

// writesExt is one workspace/externalChange notification.
type writesExt struct {
	URI       string `json:"uri"`
	Kind      string `json:"kind"`
	ReadStale bool   `json:"readStale"`
}

func writesExts(c *harness.Client, uri string) []writesExt {
	var out []writesExt
	for _, n := range c.Notes("workspace/externalChange") {
		var e writesExt
		if json.Unmarshal(n.Params, &e) == nil && (uri == "" || e.URI == uri) {
			out = append(out, e)
		}
	}
	return out
}

// writesWaitExt waits for an externalChange of uri with the given kind.
func writesWaitExt(t *testing.T, c *harness.Client, uri, kind string) writesExt {
	t.Helper()
	n, ok := c.WaitNote(writesNoteWait, func(n harness.Note) bool {
		var e writesExt
		return n.Method == "workspace/externalChange" && json.Unmarshal(n.Params, &e) == nil && e.URI == uri && e.Kind == kind
	})
	if !ok {
		t.Fatalf("no workspace/externalChange {uri: %s, kind: %s} within %v; got %+v", uri, kind, writesNoteWait, writesExts(c, ""))
	}
	var e writesExt
	json.Unmarshal(n.Params, &e)
	return e
}

// writesBarrier changes a file the model has read (barrier.txt, read
// beforehand) and waits for its notification: events caused earlier have
// been handled by then, so the absence of a notification can be asserted.
func writesBarrier(t *testing.T, c *harness.Client, ws string, n int) {
	t.Helper()
	p := filepath.Join(ws, "barrier.txt")
	mark := time.Now()
	if err := os.WriteFile(p, []byte(fmt.Sprintf("barrier %d, a longer line\n", n)), 0o644); err != nil {
		t.Fatal(err)
	}
	// WaitNote holds the client's lock while it calls the predicate: parse, do not call Notes.
	if _, ok := c.WaitNote(writesNoteWait, func(n harness.Note) bool {
		var e writesExt
		return n.Method == "workspace/externalChange" && n.At.After(mark) && json.Unmarshal(n.Params, &e) == nil && e.URI == writesURI(p)
	}); !ok {
		t.Fatalf("barrier: no workspace/externalChange for %s within %v", p, writesNoteWait)
	}
}

// writesDetailsNote returns the tools/details notification of callID.
func writesDetailsNote(t *testing.T, c *harness.Client, callID string) map[string]any {
	t.Helper()
	for _, n := range c.Notes("tools/details") {
		var p struct {
			CallID  string         `json:"callId"`
			Tool    string         `json:"tool"`
			Details map[string]any `json:"details"`
		}
		if json.Unmarshal(n.Params, &p) == nil && p.CallID == callID {
			if p.Tool != "write" {
				t.Errorf("tools/details of %s: tool %q, want write", callID, p.Tool)
			}
			return p.Details
		}
	}
	t.Fatalf("no tools/details for call %s before the reply (notes: %d)", callID, len(c.Notes("tools/details")))
	return nil
}

// --- write: creation -------------------------------------------------------

// The tools/details notification of a write carries the same details as
// the reply, for a new file and a replaced one. (The details themselves are
// pinned by cmd/agentls/testdata/script/write.)
func TestWriteDetailsNotificationMatchesReply(t *testing.T) {
	ws := writesWS(t, map[string]string{"src/a.txt": "alpha\nbeta\n"})
	c, ctx := writesStart(t, ws, writesOpts{})
	writesWant(t, "read", c.CallTool(ctx, "read", map[string]any{"path": "src/a.txt"}), false)
	for _, args := range []map[string]any{
		writesWriteArgs("new/sub/deep/n.txt", "first line\nsecond ünïcode line 😀\n"),
		writesWriteArgs("src/a.txt", "alpha\nβeta 😀 y\n"),
	} {
		r := c.CallTool(ctx, "write", args)
		writesWant(t, fmt.Sprint(args["path"]), r, false)
		note := writesDetailsNote(t, c, r.CallID)
		for _, k := range []string{"kind", "uri", "unifiedDiff", "edits", "firstChangedLine", "matchLevel", "oldHash", "newHash"} {
			if _, ok := r.Details[k]; !ok {
				t.Errorf("%s: details lack %q: %v", args["path"], k, r.Details)
			}
			if !reflect.DeepEqual(r.Details[k], note[k]) {
				t.Errorf("%s: details.%s differs between tools/details (%v) and the reply (%v)", args["path"], k, note[k], r.Details[k])
			}
		}
	}
}

// --- write: the read stamp -------------------------------------------------

// A change made while the editor answers the diagnostics question (between
// the guard's check and the rename) is caught: nothing written.
func TestWriteStaleDuringDiagnosticsQuestion(t *testing.T) {
	ws := writesWS(t, map[string]string{"a.txt": "original\n"})
	p := filepath.Join(ws, "a.txt")
	var asked atomic.Int32
	c, ctx := writesStart(t, ws, writesOpts{
		caps: map[string]any{"diagnostics": true},
		onRequest: func(ctx context.Context, method string, params json.RawMessage) (any, error) {
			if method == "tools/diagnostics" && asked.Add(1) == 1 {
				if err := os.WriteFile(p, []byte("changed meanwhile by the user\n"), 0o644); err != nil {
					return nil, err
				}
			}
			return map[string]any{"items": []any{}}, nil
		},
	})
	writesWant(t, "read", c.CallTool(ctx, "read", map[string]any{"path": "a.txt"}), false)
	r := c.CallTool(ctx, "write", writesWriteArgs("a.txt", "model\n"))
	if asked.Load() == 0 {
		t.Fatal("no tools/diagnostics question was asked around the write (docs/tools.md: edit and write ask before and after)")
	}
	writesWant(t, "write raced by the user", r, true, "changed since you read it")
	if got := writesGet(t, p); got != "changed meanwhile by the user\n" {
		t.Errorf("the user's change was overwritten: %q", got)
	}
	writesSameNames(t, "raced write", ws, "a.txt")
}

// writesReply is the outcome of a tools/call sent with writesSend.
type writesReply struct {
	r   harness.Result
	err error
}

// writesSend sends tools/call on a context that is never cancelled, so the
// reply the server really sends (result or -32800) is what comes back; the
// test cancels with writesCancel. The JSON-RPC id is the client's sequence
// number: go.lsp.dev/jsonrpc2 numbers calls 1, 2, 3… (initialize is 1).
func writesSend(c *harness.Client, name string, args any) <-chan writesReply {
	ch := make(chan writesReply, 1)
	go func() {
		var r harness.Result
		_, err := c.Conn.Call(context.Background(), "tools/call", map[string]any{"name": name, "arguments": args}, &r)
		ch <- writesReply{r, err}
	}()
	return ch
}

func writesCancel(t *testing.T, ctx context.Context, c *harness.Client, id int64) {
	t.Helper()
	if err := c.Conn.Notify(ctx, "$/cancelRequest", map[string]any{"id": id}); err != nil {
		t.Fatal(err)
	}
}

func writesAwait(t *testing.T, ch <-chan writesReply) writesReply {
	t.Helper()
	select {
	case rep := <-ch:
		return rep
	case <-time.After(3 * writesNoteWait):
		t.Fatal("no reply to the cancelled call")
		return writesReply{}
	}
}

func writesIsCancelled(err error) bool {
	var rpcErr *jsonrpc2.Error
	return errors.As(err, &rpcErr) && rpcErr.Code == -32800
}

// A write cancelled while it waits for the editor is -32800 and changes
// nothing; no temp file remains.
func TestWriteCancelledLeavesNothing(t *testing.T) {
	ws := writesWS(t, map[string]string{"a.txt": "original\n"})
	p := filepath.Join(ws, "a.txt")
	entered := make(chan struct{}, 4)
	release := make(chan struct{})
	c, ctx := writesStart(t, ws, writesOpts{
		caps: map[string]any{"diagnostics": true},
		onRequest: func(ctx context.Context, method string, params json.RawMessage) (any, error) {
			entered <- struct{}{}
			select { // answer nothing until the call is cancelled
			case <-ctx.Done():
			case <-release:
			}
			return map[string]any{"items": []any{}}, nil
		},
	})
	t.Cleanup(func() { close(release) })                                                   // runs before the harness's cleanup
	writesWant(t, "read", c.CallTool(ctx, "read", map[string]any{"path": "a.txt"}), false) // id 2
	ch := writesSend(c, "write", writesWriteArgs("a.txt", "model\n"))                      // id 3
	select {
	case <-entered:
	case <-time.After(writesNoteWait):
		t.Fatal("write never asked tools/diagnostics")
	}
	writesCancel(t, ctx, c, 3)
	rep := writesAwait(t, ch)
	if !writesIsCancelled(rep.err) {
		t.Fatalf("cancelled write: err %v, result %q; want the -32800 RequestCancelled error", rep.err, rep.r.Text())
	}
	// A dry-run edit of the same file queues behind the cancelled write.
	writesWant(t, "dry run after cancel", c.CallTool(ctx, "edit", map[string]any{"path": "a.txt", "dryRun": true,
		"edits": []any{map[string]any{"oldText": "original", "newText": "x"}}}), false)
	if got := writesGet(t, p); got != "original\n" {
		t.Errorf("-32800 but the file changed: %q", got)
	}
	writesSameNames(t, "cancelled write", ws, "a.txt")
}

// writesCancelSize is large enough that a write takes a while to land.
const writesCancelSize = 3 << 20

// 3 MB writes cancelled at varying moments: the file is always old or new,
// -32800 means old, and no temp file is ever left.
func TestWriteCancelLargeWrite(t *testing.T) {
	slow(t)
	ws := writesWS(t, nil)
	p := filepath.Join(ws, "big.txt")
	old := strings.Repeat("old line of the big file, sixty-four bytes long, padded......\n", writesCancelSize/64)
	writesPut(t, p, old, 0o644)
	c, ctx := writesStart(t, ws, writesOpts{})
	writesWant(t, "read", c.CallTool(ctx, "read", map[string]any{"path": "big.txt", "limit": 5}), false) // id 2
	cur := old
	cancelled := 0
	id := int64(3)
	delays := []time.Duration{0, 10 * time.Millisecond, 50 * time.Millisecond}
	for i, delay := range delays {
		next := strings.Repeat(fmt.Sprintf("new line %d of the big file, sixty-four bytes long, padded....\n", i), writesCancelSize/64)
		ch := writesSend(c, "write", writesWriteArgs("big.txt", next))
		time.Sleep(delay) // the cancel point varies; correctness must not depend on it
		writesCancel(t, ctx, c, id)
		id++
		rep := writesAwait(t, ch)
		got := writesGet(t, p)
		switch {
		case writesIsCancelled(rep.err):
			cancelled++
			if got != cur {
				t.Errorf("delay %v: -32800 but the file changed (len %d)", delay, len(got))
			}
		case rep.err != nil:
			t.Errorf("delay %v: unexpected error %v", delay, rep.err)
		case rep.r.IsError:
			t.Errorf("delay %v: write failed: %q", delay, rep.r.Text())
		default:
			if got != next {
				t.Errorf("delay %v: write succeeded but the file is not the new content (len %d)", delay, len(got))
			}
		}
		if got != cur && got != next {
			t.Errorf("delay %v: file is neither old nor new (len %d)", delay, len(got))
		}
		cur = got
		writesSameNames(t, fmt.Sprintf("cancel after %v", delay), ws, "big.txt")
	}
	t.Logf("%d of %d writes answered -32800", cancelled, len(delays))
}

// A concurrent reader polling the file during a 5 MB write sees only the
// whole old or the whole new content (also for a new file: absent or whole).
func TestWriteConcurrentReaderNeverSeesHalf(t *testing.T) {
	slow(t)
	const size = 5 << 20
	ws := writesWS(t, nil)
	old := strings.Repeat("a", size-1) + "\n"
	next := strings.Repeat("b", size-1) + "\n"
	writesPut(t, filepath.Join(ws, "big.txt"), old, 0o644)
	c, ctx := writesStart(t, ws, writesOpts{})
	writesWant(t, "read", c.CallTool(ctx, "read", map[string]any{"path": "big.txt"}), false)
	cases := []struct {
		name, rel string
		before    *string
	}{
		{"overwrite", "big.txt", &old},
		{"create", "fresh.txt", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(ws, tc.rel)
			stop := make(chan struct{})
			var wg sync.WaitGroup
			var reads, bad atomic.Int64
			var badLen atomic.Int64
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					select {
					case <-stop:
						return
					default:
					}
					b, err := os.ReadFile(p)
					if err != nil {
						if tc.before == nil && errors.Is(err, os.ErrNotExist) {
							continue
						}
						bad.Add(1)
						continue
					}
					reads.Add(1)
					s := string(b)
					if s != next && (tc.before == nil || s != *tc.before) {
						bad.Add(1)
						badLen.Store(int64(len(b)))
					}
				}
			}()
			r := c.CallTool(ctx, "write", writesWriteArgs(tc.rel, next))
			close(stop)
			wg.Wait()
			writesWant(t, tc.name, r, false)
			if bad.Load() > 0 {
				t.Errorf("a concurrent reader saw %d partial/odd versions (e.g. %d bytes) in %d reads", bad.Load(), badLen.Load(), reads.Load())
			}
			if got := writesGet(t, p); got != next {
				t.Errorf("final content wrong (len %d)", len(got))
			}
		})
	}
}

// --- write: mode, no change, content forms ---------------------------------

// A write that changes nothing sends no tools/details. (Its refusal and
// the untouched file are pinned by write/identical_content_no_change.txtar.)
func TestWriteNoChangeSendsNoDetails(t *testing.T) {
	ws := writesWS(t, map[string]string{"a.txt": "same\r\ncontent\n"})
	c, ctx := writesStart(t, ws, writesOpts{})
	writesWant(t, "read", c.CallTool(ctx, "read", map[string]any{"path": "a.txt"}), false)
	writesWant(t, "identical write", c.CallTool(ctx, "write", writesWriteArgs("a.txt", "same\r\ncontent\n")), true, "no change")
	if len(c.Notes("tools/details")) != 0 {
		t.Errorf("a no-change write sent tools/details: %s", c.Notes("tools/details")[0].Params)
	}
}

func TestWriteTenMegabytes(t *testing.T) {
	slow(t)
	ws := writesWS(t, nil)
	c, ctx := writesStart(t, ws, writesOpts{})
	content := strings.Repeat("0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcde\n", 10<<20/64)
	start := time.Now()
	r := c.CallTool(ctx, "write", writesWriteArgs("ten.txt", content))
	took := time.Since(start)
	if r.IsError {
		// Refusal is allowed only when it says why (a size limit).
		if !strings.Contains(strings.ToLower(r.Text()), "size") && !strings.Contains(r.Text(), "MB") {
			t.Fatalf("10 MB write refused without a clear reason: %q", r.Text())
		}
		t.Logf("10 MB write refused: %s", r.Text())
		return
	}
	if got := writesGet(t, filepath.Join(ws, "ten.txt")); got != content {
		t.Errorf("10 MB write: disk has %d bytes, want %d", len(got), len(content))
	}
	t.Logf("10 MB write took %v; text %q", took, r.Text())
	writesSameNames(t, "10 MB", ws, "ten.txt")
}

// --- write: paths ------------------------------------------------------------

// In acceptEdits (the usual mode for an agent that edits) a path the
// tools refuse anyway must get the refusal's reason (docs/tools.md: "refused
// with a clear message"), not a request for the user's approval that could
// not make it work.
func TestWriteRefusedPathNotAskedInAcceptEdits(t *testing.T) {
	parent := writesWS(t, nil)
	ws := filepath.Join(parent, "ws")
	writesPut(t, filepath.Join(ws, "f"), "a file\n", 0o644)
	writesPut(t, filepath.Join(parent, "outside.txt"), "outside\n", 0o644)
	if err := os.Symlink(filepath.Join(parent, "outside.txt"), filepath.Join(ws, "out.lnk")); err != nil {
		t.Fatal(err)
	}
	cases := []struct{ name, path, want string }{
		{"dot-dot escape", "../escape.txt", `".."`},
		{"symlink to outside", "out.lnk", "outside the workspace"},
		{"under a file", "f/b", "not a directory"},
	}
	t.Run("client answers tools/confirm", func(t *testing.T) {
		var asked atomic.Int32
		c, ctx := writesStart(t, ws, writesOpts{
			caps: map[string]any{"confirm": true},
			onRequest: func(ctx context.Context, method string, params json.RawMessage) (any, error) {
				if method == "tools/confirm" {
					asked.Add(1)
					return map[string]any{"decision": "allowOnce"}, nil
				}
				return nil, fmt.Errorf("unexpected %s", method)
			},
		})
		for _, tc := range cases {
			n := asked.Load()
			r := c.CallTool(ctx, "write", writesWriteArgs(tc.path, "payload\n"))
			writesWant(t, tc.path, r, true, tc.want)
			if asked.Load() != n {
				t.Errorf("%s: the user was asked (tools/confirm) to approve a write to %q, which is refused whatever the answer", tc.name, tc.path)
			}
		}
	})
	t.Run("client without confirm", func(t *testing.T) {
		c, ctx := writesStart(t, ws, writesOpts{})
		for _, tc := range cases {
			r := c.CallTool(ctx, "write", writesWriteArgs(tc.path, "payload\n"))
			if !r.IsError || !strings.Contains(r.Text(), tc.want) {
				t.Errorf("%s: write %q answered %q (isError %v); want the refusal's reason containing %q",
					tc.name, tc.path, r.Text(), r.IsError, tc.want)
			}
		}
	})
	if got := writesGet(t, filepath.Join(parent, "outside.txt")); got != "outside\n" {
		t.Errorf("outside file changed: %q", got)
	}
	writesSameNames(t, "outside", parent, "outside.txt", "ws")
}

// --- external changes --------------------------------------------------------

func TestWriteExternalChangeKinds(t *testing.T) {
	type step struct {
		kind string // expected notification kind
		do   func(t *testing.T, p string)
	}
	plain := func(t *testing.T, p string) { writesPut(t, p, "rewritten in place by another program\n", 0o644) }
	rename := func(t *testing.T, p string) {
		tmp := filepath.Join(filepath.Dir(p), ".editor-save.tmp")
		writesPut(t, tmp, "saved atomically by an editor\n", 0o644)
		if err := os.Rename(tmp, p); err != nil {
			t.Fatal(err)
		}
	}
	del := func(t *testing.T, p string) {
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
	}
	recreate := func(t *testing.T, p string) { writesPut(t, p, "recreated with new text\n", 0o644) }
	cases := []struct {
		name    string
		steps   []step
		gone    bool // the file is missing at the end
		content string
	}{
		{"plain write", []step{{"changed", plain}}, false, "rewritten in place by another program\n"},
		{"atomic rename over", []step{{"changed", rename}}, false, "saved atomically by an editor\n"},
		{"delete", []step{{"deleted", del}}, true, ""},
		{"delete then recreate", []step{{"deleted", del}, {"created", recreate}}, false, "recreated with new text\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ws := writesWS(t, map[string]string{"src/a.txt": "line one\nline two\n", "barrier.txt": "b\n"})
			p := filepath.Join(ws, "src/a.txt")
			uri := writesURI(p)
			c, ctx := writesStart(t, ws, writesOpts{})
			writesWant(t, "read", c.CallTool(ctx, "read", map[string]any{"path": "src/a.txt"}), false)
			writesWant(t, "read barrier", c.CallTool(ctx, "read", map[string]any{"path": "barrier.txt"}), false)
			var want []string
			for _, s := range tc.steps {
				s.do(t, p)
				if e := writesWaitExt(t, c, uri, s.kind); !e.ReadStale {
					t.Errorf("externalChange %s: readStale false, want true", s.kind)
				}
				want = append(want, s.kind)
			}
			writesBarrier(t, c, ws, 1)
			// Kinds in order; repeats of one kind are counted by the burst
			// test, and a "changed" may follow "created" (os.WriteFile creates
			// the file empty, then writes it: two states).
			var kinds []string
			for _, e := range writesExts(c, uri) {
				if len(kinds) == 0 || kinds[len(kinds)-1] != e.Kind {
					kinds = append(kinds, e.Kind)
				}
			}
			if n := len(kinds); n > 1 && kinds[n-1] == "changed" && kinds[n-2] == "created" {
				kinds = kinds[:n-1]
			}
			if !reflect.DeepEqual(kinds, want) {
				t.Errorf("externalChange kinds %q, want %q (all: %+v)", kinds, want, writesExts(c, uri))
			}
			r := c.CallTool(ctx, "edit", writesEditArgs("src/a.txt", "line", "LINE"))
			if !r.IsError {
				t.Fatalf("edit after an external %s succeeded: %q", tc.name, r.Text())
			}
			if !tc.gone {
				writesWant(t, "stale edit", r, true, "changed since you read it")
				writesWant(t, "stale write", c.CallTool(ctx, "write", writesWriteArgs("src/a.txt", "model\n")), true, "changed since you read it")
				if got := writesGet(t, p); got != tc.content {
					t.Errorf("external content lost: %q, want %q", got, tc.content)
				}
				writesSameNames(t, "after refused calls", filepath.Join(ws, "src"), "a.txt")
				writesWant(t, "re-read", c.CallTool(ctx, "read", map[string]any{"path": "src/a.txt"}), false)
				writesWant(t, "write after re-read", c.CallTool(ctx, "write", writesWriteArgs("src/a.txt", "model\n")), false)
				if got := writesGet(t, p); got != "model\n" {
					t.Errorf("disk after write: %q", got)
				}
			} else if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("refused edit recreated the deleted file (%v)", err)
			}
		})
	}
}

// Notes are for files the model has read; one it never read is not
// announced (or announced with readStale false), nor is a change in an
// ignored directory, and the model's own writes are not external.
func TestWriteExternalOnlyForReadFiles(t *testing.T) {
	ws := writesWS(t, map[string]string{
		"barrier.txt":                "barrier\n",
		"unread.txt":                 "never read\n",
		"own.txt":                    "own\n",
		".gitignore":                 "node_modules/\n",
		"node_modules/pkg/index.js":  "module.exports = 1\n",
		"node_modules/pkg/unread.js": "x\n",
	})
	c, ctx := writesStart(t, ws, writesOpts{})
	for _, rel := range []string{"barrier.txt", "own.txt", "node_modules/pkg/index.js"} {
		writesWant(t, "read "+rel, c.CallTool(ctx, "read", map[string]any{"path": rel}), false)
	}
	// The model's own write, edit and create.
	writesWant(t, "own write", c.CallTool(ctx, "write", writesWriteArgs("own.txt", "own 2\n")), false)
	writesWant(t, "own edit", c.CallTool(ctx, "edit", writesEditArgs("own.txt", "own 2", "own 3")), false)
	writesWant(t, "own create", c.CallTool(ctx, "write", writesWriteArgs("made/by/model.txt", "new\n")), false)
	// Outside changes to an unread file and inside node_modules.
	writesPut(t, filepath.Join(ws, "unread.txt"), "changed, never read\n", 0o644)
	writesPut(t, filepath.Join(ws, "node_modules/pkg/index.js"), "module.exports = 2 // changed\n", 0o644)
	writesPut(t, filepath.Join(ws, "node_modules/pkg/unread.js"), "y\n", 0o644)
	writesBarrier(t, c, ws, 1)
	for _, rel := range []string{"own.txt", "made/by/model.txt", "node_modules/pkg/index.js", "node_modules/pkg/unread.js"} {
		if got := writesExts(c, writesURI(filepath.Join(ws, rel))); len(got) != 0 {
			t.Errorf("%s: unexpected workspace/externalChange %+v", rel, got)
		}
	}
	for _, e := range writesExts(c, writesURI(filepath.Join(ws, "unread.txt"))) {
		if e.ReadStale {
			t.Errorf("unread.txt (never read): externalChange with readStale true: %+v", e)
		}
	}
	// The guard does not rest on the watcher: the ignored file is still stale.
	writesWant(t, "edit in node_modules after an unwatched change",
		c.CallTool(ctx, "edit", writesEditArgs("node_modules/pkg/index.js", "module.exports", "exports")), true, "changed since you read it")
	// The own writes left a fresh stamp.
	writesWant(t, "edit after own writes", c.CallTool(ctx, "edit", writesEditArgs("own.txt", "own 3", "own 4")), false)
}

// A burst of writes to one read file gives a bounded number of
// notifications, each changed/readStale, and the guard refuses the next
// write. The docs promise no coalescing, so the bound is two per
// os.WriteFile (its truncate and its write are two observable states);
// the count is logged.
func TestWriteExternalBurst(t *testing.T) {
	cases := []struct {
		name   string
		writes int
	}{
		{"one write", 1},
		{"burst of 100 writes", 100},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ws := writesWS(t, map[string]string{"barrier.txt": "barrier\n", "hot.txt": "hot\n"})
			p := filepath.Join(ws, "hot.txt")
			c, ctx := writesStart(t, ws, writesOpts{})
			writesWant(t, "read barrier", c.CallTool(ctx, "read", map[string]any{"path": "barrier.txt"}), false)
			writesWant(t, "read hot", c.CallTool(ctx, "read", map[string]any{"path": "hot.txt"}), false)
			for i := 0; i < tc.writes; i++ {
				if err := os.WriteFile(p, []byte(fmt.Sprintf("burst %d\n", i)), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			writesWaitExt(t, c, writesURI(p), "changed")
			writesBarrier(t, c, ws, 1)
			got := writesExts(c, writesURI(p))
			for _, e := range got {
				if e.Kind != "changed" || !e.ReadStale {
					t.Errorf("notification %+v, want kind changed, readStale true", e)
				}
			}
			t.Logf("%d os.WriteFile calls → %d workspace/externalChange notifications", tc.writes, len(got))
			if len(got) > 2*tc.writes {
				t.Errorf("%d writes (os.WriteFile: truncate + write) produced %d workspace/externalChange notifications for the file; want at most two per write", tc.writes, len(got))
			}
			writesWant(t, "write after the changes", c.CallTool(ctx, "write", writesWriteArgs("hot.txt", "model\n")), true, "changed since you read it")
			if got := writesGet(t, p); got != fmt.Sprintf("burst %d\n", tc.writes-1) {
				t.Errorf("external result lost: %q", got)
			}
		})
	}
}

// A token in written content never leaves the server in the tools/details
// notification. (The reply, the disk and masked placeholders are pinned by
// the write scripts.)
func TestWriteSecretsMaskedInDetailsNotification(t *testing.T) {
	tok := "ghp_" + strings.Repeat("A1b2C3d4E5", 3) + "abcdef"
	ws := writesWS(t, nil)
	c, ctx := writesStart(t, ws, writesOpts{})
	writesWant(t, "write with a token", c.CallTool(ctx, "write", writesWriteArgs("new.txt", "key "+tok+"\n")), false)
	notes := c.Notes("tools/details")
	if len(notes) == 0 {
		t.Fatal("no tools/details notification")
	}
	for _, n := range notes {
		if strings.Contains(string(n.Params), tok) {
			t.Errorf("the token leaves the server unmasked in tools/details: %s", n.Params)
		}
	}
}

// touch and a rewrite with identical bytes (format-on-save no-op) are not
// changes: no readStale notification, and the write goes through.
func TestWriteAfterTouchOrSameContentAllowed(t *testing.T) {
	cases := []struct {
		name string
		do   func(t *testing.T, p string)
	}{
		{"touch", func(t *testing.T, p string) {
			later := time.Now().Add(10 * time.Second)
			if err := os.Chtimes(p, later, later); err != nil {
				t.Fatal(err)
			}
		}},
		{"same bytes rewritten", func(t *testing.T, p string) { writesPut(t, p, "same\n", 0o644) }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ws := writesWS(t, map[string]string{"a.txt": "same\n", "barrier.txt": "b\n"})
			p := filepath.Join(ws, "a.txt")
			c, ctx := writesStart(t, ws, writesOpts{})
			writesWant(t, "read", c.CallTool(ctx, "read", map[string]any{"path": "a.txt"}), false)
			writesWant(t, "read barrier", c.CallTool(ctx, "read", map[string]any{"path": "barrier.txt"}), false)
			tc.do(t, p)
			writesBarrier(t, c, ws, 1)
			for _, e := range writesExts(c, writesURI(p)) {
				if e.ReadStale {
					t.Errorf("%s reported as readStale: %+v", tc.name, e)
				}
			}
			writesWant(t, "write", c.CallTool(ctx, "write", writesWriteArgs("a.txt", "model\n")), false)
			if got := writesGet(t, p); got != "model\n" {
				t.Errorf("disk %q", got)
			}
		})
	}
}

// A document open in an editor that cannot take edits, with unsaved
// changes, is not overwritten on disk.
func TestWriteOpenUnsavedDocumentRefused(t *testing.T) {
	ws := writesWS(t, map[string]string{"o.txt": "disk\n"})
	c, ctx := writesStart(t, ws, writesOpts{})
	if err := c.Conn.Notify(ctx, "textDocument/didOpen", map[string]any{"textDocument": map[string]any{
		"uri": writesURI(filepath.Join(ws, "o.txt")), "languageId": "plaintext", "version": 1, "text": "unsaved\n"}}); err != nil {
		t.Fatal(err)
	}
	writesWant(t, "read", c.CallTool(ctx, "read", map[string]any{"path": "o.txt"}), false, "unsaved")
	writesWant(t, "write", c.CallTool(ctx, "write", writesWriteArgs("o.txt", "model\n")), true, "save or revert it")
	if got := writesGet(t, filepath.Join(ws, "o.txt")); got != "disk\n" {
		t.Errorf("disk changed: %q", got)
	}
}

// The watcher follows directories created after the start (by the model or
// not) and directories renamed: changes to read files there are announced.
func TestWriteWatcherFollowsNewAndRenamedDirs(t *testing.T) {
	ws := writesWS(t, map[string]string{"old/dir/f.txt": "f\n"})
	c, ctx := writesStart(t, ws, writesOpts{})
	t.Run("directory made by the model's write", func(t *testing.T) {
		writesWant(t, "create", c.CallTool(ctx, "write", writesWriteArgs("m/n/o/made.txt", "made\n")), false)
		p := filepath.Join(ws, "m/n/o/made.txt")
		writesPut(t, p, "changed by someone else\n", 0o644)
		writesWaitExt(t, c, writesURI(p), "changed")
		writesWant(t, "stale", c.CallTool(ctx, "write", writesWriteArgs("m/n/o/made.txt", "x\n")), true, "changed since you read it")
	})
	t.Run("directory made outside (mkdir -p)", func(t *testing.T) {
		p := filepath.Join(ws, "x/y/z/f.txt")
		writesPut(t, p, "outside\n", 0o644)
		// The file may not be watched yet the instant it appears: wait until a
		// read sees it, then change it.
		writesWant(t, "read", c.CallTool(ctx, "read", map[string]any{"path": "x/y/z/f.txt"}), false)
		writesPut(t, p, "outside, changed later\n", 0o644)
		writesWaitExt(t, c, writesURI(p), "changed")
	})
	t.Run("renamed directory", func(t *testing.T) {
		if err := os.Rename(filepath.Join(ws, "old"), filepath.Join(ws, "new")); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(ws, "new/dir/f.txt")
		writesWant(t, "read", c.CallTool(ctx, "read", map[string]any{"path": "new/dir/f.txt"}), false)
		writesPut(t, p, "changed after the rename\n", 0o644)
		writesWaitExt(t, c, writesURI(p), "changed")
	})
}
