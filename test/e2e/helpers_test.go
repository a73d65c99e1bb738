package e2e

// Helpers shared by the end-to-end tests: workspace files, contexts, text
// assertions and small argument builders. A helper lives here only when every
// caller wants the same behaviour; variants that differ (process scans,
// backend sets, raw clients) stay next to their tests.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf16"

	"go.lsp.dev/jsonrpc2"

	"github.com/agentls/agentls/test/harness"
)

// writeFiles writes files (slash path relative to root → content) under
// root, creating directories as needed.
func writeFiles(t testing.TB, root string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		writeFile(t, filepath.Join(root, filepath.FromSlash(name)), content)
	}
}

// writeFile writes body to p, creating its directory.
func writeFile(t testing.TB, p, body string) {
	t.Helper()
	writeBytes(t, p, []byte(body))
}

// writeBytes writes b to p, creating its directory.
func writeBytes(t testing.TB, p string, b []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// readFile returns p's content and fails the test when it cannot be read.
func readFile(t testing.TB, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// symlink creates link pointing at target.
func symlink(t testing.TB, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

// newWorkspace writes files into a fresh temp dir and returns it.
func newWorkspace(t testing.TB, files map[string]string) string {
	t.Helper()
	ws := t.TempDir()
	writeFiles(t, ws, files)
	return ws
}

// resolvedWorkspace is newWorkspace with symlinks in the dir's path
// resolved, so absolute paths the server reports compare cleanly.
func resolvedWorkspace(t testing.TB, files map[string]string) string {
	t.Helper()
	ws, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	writeFiles(t, ws, files)
	return ws
}

// testCtx is a context that ends after d or with the test.
func testCtx(t testing.TB, d time.Duration) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// bypassOptions is initializationOptions selecting the bypass permission
// mode, for tests that are not about permissions.
func bypassOptions() map[string]any { return map[string]any{"mode": "bypass"} }

// bypass is initialize params selecting the bypass permission mode.
func bypass() map[string]any {
	return map[string]any{"initializationOptions": bypassOptions()}
}

// fileURI is p as a file:// URI.
func fileURI(p string) string { return (&url.URL{Scheme: "file", Path: p}).String() }

// compactJSON is v as compact JSON ("" when it cannot be encoded).
func compactJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// numberedLines joins f(1)…f(n), each followed by a newline.
func numberedLines(n int, f func(i int) string) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		b.WriteString(f(i))
		b.WriteByte('\n')
	}
	return b.String()
}

// rpcCode is the JSON-RPC error code of a harness call's error (0: none).
func rpcCode(err error) int64 {
	var je *jsonrpc2.Error
	if errors.As(err, &je) {
		return int64(je.Code)
	}
	return 0
}

// replyCode is the JSON-RPC error code of a raw reply frame (0: none).
func replyCode(f map[string]any) int {
	e, _ := f["error"].(map[string]any)
	c, _ := e["code"].(float64)
	return int(c)
}

// waitUntil polls cond every 20 ms until it holds or d has passed, and
// reports whether it held.
func waitUntil(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if cond() {
			return true
		}
		time.Sleep(20 * time.Millisecond)
	}
	return cond()
}

// wantContains fails when text lacks any of wants (case-sensitive).
func wantContains(t testing.TB, what, text string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(text, w) {
			t.Errorf("%s: want %q in:\n%s", what, w, text)
		}
	}
}

// wantLacks fails when text holds any of nots (case-sensitive).
func wantLacks(t testing.TB, what, text string, nots ...string) {
	t.Helper()
	for _, n := range nots {
		if strings.Contains(text, n) {
			t.Errorf("%s: unexpected %q in:\n%s", what, n, text)
		}
	}
}

// wantResult checks r's isError and that its text holds every want,
// ignoring case.
func wantResult(t testing.TB, what string, r harness.Result, isError bool, wants ...string) {
	t.Helper()
	if r.IsError != isError {
		t.Errorf("%s: isError = %v, want %v; text:\n%s", what, r.IsError, isError, r.Text())
	}
	low := strings.ToLower(r.Text())
	for _, w := range wants {
		if !strings.Contains(low, strings.ToLower(w)) {
			t.Errorf("%s: text lacks %q; text:\n%s", what, w, r.Text())
		}
	}
}

// logMessages is the message of every window/logMessage so far whose type
// is typ (0: any type).
func logMessages(c *harness.Client, typ float64) []string {
	var out []string
	for _, n := range c.Notes("window/logMessage") {
		var p struct {
			Type    float64 `json:"type"`
			Message string  `json:"message"`
		}
		json.Unmarshal(n.Params, &p)
		if typ == 0 || p.Type == typ {
			out = append(out, p.Message)
		}
	}
	return out
}

// errNoContentLength is readFrame's error for a header block without a
// Content-Length; the header is consumed, so the next frame can be read.
var errNoContentLength = errors.New("frame without Content-Length")

// readFrame reads one LSP-framed message body from br; the Content-Length
// header name matches in any case.
func readFrame(br *bufio.Reader) ([]byte, error) {
	n := -1
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return nil, err
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			break
		}
		if v, ok := strings.CutPrefix(strings.ToLower(line), "content-length:"); ok {
			n, _ = strconv.Atoi(strings.TrimSpace(v))
		}
	}
	if n < 0 {
		return nil, errNoContentLength
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(br, body); err != nil {
		return nil, fmt.Errorf("frame body: %w", err)
	}
	return body, nil
}

// editCall is the edit tool's arguments for path with oldText/newText pairs.
func editCall(path string, pairs ...string) map[string]any {
	var edits []any
	for i := 0; i+1 < len(pairs); i += 2 {
		edits = append(edits, map[string]any{"oldText": pairs[i], "newText": pairs[i+1]})
	}
	return map[string]any{"path": path, "edits": edits}
}

// applyTextEdits applies LSP TextEdits (decoded JSON: 0-based lines, UTF-16
// characters, non-overlapping ranges in old) to old. A position outside old
// or inside a surrogate pair fails the test.
func applyTextEdits(t testing.TB, old string, edits []any) string {
	t.Helper()
	lineStart := []int{0}
	for i := 0; i < len(old); i++ {
		if old[i] == '\n' {
			lineStart = append(lineStart, i+1)
		}
	}
	offset := func(pos map[string]any) int {
		line, char := int(pos["line"].(float64)), int(pos["character"].(float64))
		if line >= len(lineStart) {
			t.Fatalf("line %d out of range", line)
		}
		i, units := lineStart[line], 0
		for units < char {
			if i >= len(old) {
				t.Fatalf("character %d past end of line %d", char, line)
			}
			r, size := []rune(old[i:])[0], len(string([]rune(old[i:])[0]))
			units += len(utf16.Encode([]rune{r}))
			i += size
		}
		if units != char {
			t.Fatalf("character %d splits a surrogate pair on line %d", char, line)
		}
		return i
	}
	type span struct {
		start, end int
		text       string
	}
	var spans []span
	for _, e := range edits {
		m := e.(map[string]any)
		rg := m["range"].(map[string]any)
		spans = append(spans, span{offset(rg["start"].(map[string]any)), offset(rg["end"].(map[string]any)), m["newText"].(string)})
	}
	sort.Slice(spans, func(i, j int) bool { return spans[i].start > spans[j].start })
	out := old
	for _, s := range spans {
		out = out[:s.start] + s.text + out[s.end:]
	}
	return out
}

// stopOnCleanup ends a hand-started agentls when the test ends: stdin
// closed (its EOF exit), then killed if still running after 3 s.
func stopOnCleanup(t testing.TB, cmd *exec.Cmd, stdin io.Closer) {
	t.Helper()
	t.Cleanup(func() {
		stdin.Close()
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(3 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
}

// sessionTimeout bounds a session started by startIn: its initialize and
// the calls made with the context it returns.
const sessionTimeout = 30 * time.Second

// startIn runs agentls on ws with env added, initializes it with params
// (nil: defaults) and returns the client and a context for its calls.
func startIn(t *testing.T, ws string, params map[string]any, env ...string) (*harness.Client, context.Context) {
	t.Helper()
	c := harness.Start(t, harness.Options{Root: ws, Env: env})
	ctx := testCtx(t, sessionTimeout)
	c.Initialize(ctx, params)
	return c, ctx
}

// start runs agentls on a fresh workspace holding files, in bypass mode:
// tests of tool behaviour should not depend on the permission policy, which
// permission_test.go covers on its own.
func start(t *testing.T, files map[string]string, env ...string) (*harness.Client, string, context.Context) {
	t.Helper()
	return startWith(t, files, bypass(), env...)
}

// startWith is start with explicit initialize params.
func startWith(t *testing.T, files map[string]string, params map[string]any, env ...string) (*harness.Client, string, context.Context) {
	t.Helper()
	ws := newWorkspace(t, files)
	c, ctx := startIn(t, ws, params, env...)
	return c, ws, ctx
}

// processesWithArg lists pids whose command line contains arg as a whole word.
func processesWithArg(arg string) []int {
	var out []int
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		b, err := os.ReadFile(filepath.Join(d, "cmdline"))
		if err != nil {
			continue
		}
		for _, w := range bytes.Split(b, []byte{0}) {
			if string(w) == arg {
				pid, _ := strconv.Atoi(filepath.Base(d))
				stat, _ := os.ReadFile(filepath.Join(d, "stat"))
				if !bytes.Contains(stat, []byte(") Z ")) {
					out = append(out, pid)
				}
			}
		}
	}
	return out
}

// reapProcessesWithArg kills whatever a test left behind, so one finding does not leak
// sleeping processes into the machine.
func reapProcessesWithArg(t *testing.T, marker string) {
	t.Cleanup(func() {
		for _, pid := range processesWithArg(marker) {
			if p, err := os.FindProcess(pid); err == nil {
				p.Kill()
			}
		}
	})
}
