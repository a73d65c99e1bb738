package e2e

// The write tool over the wire: the details it sends, cancellation while it
// waits for the editor, atomicity for concurrent readers, large contents,
// and the size limit edit and write share. What write does to the bytes is
// pinned by the scripts in cmd/agentls/testdata/script/write; cancels at
// every moment of a write by TestStressCancelledOverwrites.

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentls/agentls/test/harness"
)

// A write that changes nothing sends no tools/details. (Its refusal and
// the untouched file are pinned by write/identical_content_no_change.txtar.)
func TestWriteNoChangeSendsNoDetails(t *testing.T) {
	c, _, ctx := start(t, map[string]string{"a.txt": "same\r\ncontent\n"})
	mustRead(t, c, ctx, "a.txt")
	wantRefused(t, "identical write", c.CallTool(ctx, "write", writeCall("a.txt", "same\r\ncontent\n")), "no change")
	if n := c.Notes("tools/details"); len(n) != 0 {
		t.Errorf("a no-change write sent tools/details: %s", n[0].Params)
	}
}

// sendCall sends tools/call on a context that is never cancelled, so the
// reply the server really sends (result or -32800) is what comes back; the
// test cancels with cancelCall. The JSON-RPC id is the client's sequence
// number: go.lsp.dev/jsonrpc2 numbers calls 1, 2, 3… (initialize is 1).
func sendCall(c *harness.Client, name string, args any) <-chan error {
	ch := make(chan error, 1)
	go func() {
		var r harness.Result
		_, err := c.Conn.Call(context.Background(), "tools/call", map[string]any{"name": name, "arguments": args}, &r)
		if err == nil && r.IsError {
			err = errors.New("isError: " + r.Text())
		}
		ch <- err
	}()
	return ch
}

// cancelCall sends $/cancelRequest for id and returns the call's outcome.
func cancelCall(t *testing.T, ctx context.Context, c *harness.Client, id int64, reply <-chan error) error {
	t.Helper()
	if err := c.Conn.Notify(ctx, "$/cancelRequest", map[string]any{"id": id}); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-reply:
		return err
	case <-time.After(3 * noteWait):
		t.Fatal("no reply to the cancelled call")
		return nil
	}
}

// A write cancelled while it waits for the editor is -32800 and changes
// nothing; no temp file remains, and the next call on the file runs.
func TestWriteCancelledLeavesNothing(t *testing.T) {
	ws := resolvedWorkspace(t, map[string]string{"a.txt": "original\n"})
	entered := make(chan struct{}, 4)
	release := make(chan struct{})
	c, ctx := startCaps(t, ws, map[string]any{"diagnostics": true}, func(ctx context.Context, method string, params json.RawMessage) (any, error) {
		entered <- struct{}{}
		select { // answer nothing until the call is cancelled
		case <-ctx.Done():
		case <-release:
		}
		return map[string]any{"items": []any{}}, nil
	})
	t.Cleanup(func() { close(release) }) // runs before the harness's cleanup
	mustRead(t, c, ctx, "a.txt")         // id 2
	reply := sendCall(c, "write", writeCall("a.txt", "model\n"))
	select {
	case <-entered:
	case <-time.After(noteWait):
		t.Fatal("write never asked tools/diagnostics")
	}
	if err := cancelCall(t, ctx, c, 3, reply); rpcCode(err) != -32800 {
		t.Fatalf("cancelled write: %v; want the -32800 RequestCancelled error", err)
	}
	// A dry-run edit of the same file queues behind the cancelled write.
	wantResult(t, "dry run after cancel", c.CallTool(ctx, "edit", map[string]any{"path": "a.txt", "dryRun": true,
		"edits": []any{map[string]any{"oldText": "original", "newText": "x"}}}), false)
	if got := readFile(t, filepath.Join(ws, "a.txt")); got != "original\n" {
		t.Errorf("-32800 but the file changed: %q", got)
	}
	wantNames(t, "cancelled write", ws, "a.txt")
}

// A concurrent reader polling the file during a 5 MB write sees only the
// whole old or the whole new content (for a new file: absent or whole).
func TestWriteConcurrentReaderNeverSeesHalf(t *testing.T) {
	slow(t)
	const size = 5 << 20
	old := strings.Repeat("a", size-1) + "\n"
	next := strings.Repeat("b", size-1) + "\n"
	c, ws, ctx := start(t, map[string]string{"big.txt": old})
	mustRead(t, c, ctx, "big.txt")
	for _, tc := range []struct {
		name, rel string
		before    *string
	}{{"overwrite", "big.txt", &old}, {"create", "fresh.txt", nil}} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(ws, tc.rel)
			stop := make(chan struct{})
			var wg sync.WaitGroup
			var reads, bad, badLen atomic.Int64
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
						if tc.before != nil || !errors.Is(err, os.ErrNotExist) {
							bad.Add(1)
						}
						continue
					}
					reads.Add(1)
					if s := string(b); s != next && (tc.before == nil || s != *tc.before) {
						bad.Add(1)
						badLen.Store(int64(len(b)))
					}
				}
			}()
			r := c.CallTool(ctx, "write", writeCall(tc.rel, next))
			close(stop)
			wg.Wait()
			wantResult(t, tc.name, r, false)
			if bad.Load() > 0 {
				t.Errorf("a concurrent reader saw %d partial/odd versions (e.g. %d bytes) in %d reads", bad.Load(), badLen.Load(), reads.Load())
			}
			if got := readFile(t, p); got != next {
				t.Errorf("final content wrong (len %d)", len(got))
			}
		})
	}
}

// A 10 MB write and an edit of the file it made are exact and leave no temp
// file. (Content this large cannot go through `agentls call`'s command
// line.)
func TestWriteAndEditOfALargeFileAreExact(t *testing.T) {
	slow(t)
	c, ws, ctx := start(t, nil)
	line := "0123456789 abcdefghij ü 😀 klmnopqrstuvwxyz\n"
	body := strings.Repeat(line, 10<<20/len(line)) + "the end\n"
	t0 := time.Now()
	wantResult(t, "10 MB write", c.CallTool(ctx, "write", writeCall("big/large.txt", body)), false)
	t.Logf("10 MB write: %v", time.Since(t0))
	p := filepath.Join(ws, "big/large.txt")
	if got := readFile(t, p); got != body {
		t.Fatalf("large file differs: %d bytes, want %d", len(got), len(body))
	}
	t0 = time.Now()
	wantResult(t, "edit of the 10 MB file", c.CallTool(ctx, "edit", editCall("big/large.txt", "the end", "THE END")), false)
	t.Logf("one edit of the 10 MB file: %v", time.Since(t0))
	if readFile(t, p) != strings.Replace(body, "the end", "THE END", 1) {
		t.Fatalf("edit of the large file went wrong")
	}
	wantNames(t, "10 MB", filepath.Join(ws, "big"), "large.txt")
}

// edit and write refuse files over 64 MiB (the limit their descriptions
// state) without reading them: an edit of a 500 MB file used to take 3 GiB
// and kill the server. The file is sparse, so nothing is written to disk.
// (The refusals' text and the stated limit are pinned by
// edit/file_over_64mib_refused, write/content_over_64mib_refused and
// governance/description_numbers_are_limits.)
func TestEditAndWriteRefuseFilesOver64MiB(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("huge input: files over 64 MiB")
	}
	if runtime.GOOS != "linux" {
		t.Skip("peak memory is read from /proc (Linux only)")
	}
	ws := t.TempDir()
	p := filepath.Join(ws, "huge.txt")
	writeFile(t, p, "needle\n")
	if err := os.Truncate(p, 500<<20); err != nil {
		t.Fatal(err)
	}
	s := hugeStart(t, ws)
	for tool, args := range map[string]map[string]any{
		"edit":  editCall("huge.txt", "needle", "pin"),
		"write": writeCall("huge.txt", "small\n"),
	} {
		wantRefused(t, tool+" of a 500 MB file", s.c.CallTool(s.ctx, tool, args), "500.0 MiB", "up to 64 MiB", "sed -i")
	}
	s.checkMem(t, "edit and write of a 500 MB file", hugePeakGrowth)
	if fi, err := os.Stat(p); err != nil || fi.Size() != 500<<20 {
		t.Errorf("the refused file changed: %v, %v", fi.Size(), err)
	}
	r := s.c.CallTool(s.ctx, "write", writeCall("new.txt", strings.Repeat("x", 64<<20+1)))
	wantRefused(t, "write of 64 MiB + 1 byte", r, "the content for new.txt is 67108865 bytes (64.0 MiB)")
	if _, err := os.Stat(filepath.Join(ws, "new.txt")); err == nil {
		t.Error("the refused write created new.txt")
	}
}
