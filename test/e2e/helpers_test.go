package e2e

// Helpers shared by the end-to-end tests: workspace files, contexts, text
// assertions and small argument builders. A helper lives here only when every
// caller wants the same behaviour; variants that differ (process scans,
// backend sets, frame types) stay next to their tests.

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
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
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
// slow skips, in the inner loop (go test -short), a test that takes more
// than half a second on its own: it waits out a timeout, a grace period
// or a backoff, measures an idle or a latency over seconds, or loads the
// machine. Without -short (CI, scripts/test-all.sh) it runs.
func slow(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("slow: over half a second on its own; runs without -short")
	}
}

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

// sessionTimeout bounds a session started by startIn: its initialize and
// the calls made with the context it returns.
const sessionTimeout = 30 * time.Second

// startIn runs agentls on ws with env added, initializes it with params
// (nil: defaults) and returns the client and a context for its calls.
func startIn(t *testing.T, ws string, params map[string]any, env ...string) (*harness.Client, context.Context) {
	t.Helper()
	return startOpts(t, harness.Options{Root: ws, Env: env}, params)
}

// startOpts starts agentls with opts and initializes it with params (nil:
// defaults).
func startOpts(t *testing.T, opts harness.Options, params map[string]any) (*harness.Client, context.Context) {
	t.Helper()
	c := harness.Start(t, opts)
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

// startProcess is start with agentls as a spawned process, for a test
// whose point is the process (its pid, memory, signals, orphans).
func startProcess(t *testing.T, files map[string]string) (*harness.Client, string, context.Context) {
	t.Helper()
	ws := newWorkspace(t, files)
	c, ctx := startOpts(t, harness.Options{Root: ws, Process: true}, bypass())
	return c, ws, ctx
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

// lockedBuffer is a bytes.Buffer safe for a process's writes and a test's
// reads at the same time (a child's stderr).
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// rawStopGrace is how long a raw client's process may take to exit after its
// stdin closes before close kills it.
const rawStopGrace = 5 * time.Second

// rawClient runs agentls on raw pipes and logs every frame it writes to
// stdout, decoded as T, in wire order: for tests that send what no client
// library would, or must see the wire exactly (order, -32800 replies, the
// server's own requests). Each test file keeps its frame type T and its
// protocol helpers; rawClient owns the process, the writes and the log.
type rawClient[T any] struct {
	t      *testing.T
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stderr *lockedBuffer
	lines  bool       // frames are newline-terminated (MCP stdio), not Content-Length
	wmu    sync.Mutex // one frame at a time on stdin

	mu     sync.Mutex
	log    []T
	bad    []string      // stdout bytes that are not well-formed frames
	wake   chan struct{} // closed and replaced on every change to the log
	exited chan struct{} // closed once stdout ended and the process is reaped

	stopOnce sync.Once
}

// rawReader parses r's stdout until it ends, handing frames to r.add and
// framing violations to r.noteBad. It runs on the reader goroutine only, so
// it may keep state (sequence numbers) without locks.
type rawReader[T any] func(br *bufio.Reader, r *rawClient[T])

// lenientFrames is a rawReader that decodes each Content-Length frame's body
// with decode, skips header blocks without a length and stops at the first
// read error.
func lenientFrames[T any](decode func(body []byte) []T) rawReader[T] {
	return func(br *bufio.Reader, r *rawClient[T]) {
		for {
			body, err := readFrame(br)
			if errors.Is(err, errNoContentLength) {
				continue
			}
			if err != nil {
				return
			}
			r.add(decode(body)...)
		}
	}
}

// startRaw spawns agentls with args and env, reads its stdout with read, and
// closes it when the test ends. It writes Content-Length frames.
func startRaw[T any](t *testing.T, args, env []string, read rawReader[T]) *rawClient[T] {
	t.Helper()
	return spawnRaw(t, args, env, false, read)
}

// spawnRaw is startRaw writing newline-terminated frames when lines is set.
func spawnRaw[T any](t *testing.T, args, env []string, lines bool, read rawReader[T]) *rawClient[T] {
	t.Helper()
	return spawnRawCmd(t, harness.Command(t, args, env...), lines, read)
}

// spawnRawCmd is spawnRaw for a command the caller prepared (its working
// directory, say); cmd.Stderr is replaced.
func spawnRawCmd[T any](t *testing.T, cmd *exec.Cmd, lines bool, read rawReader[T]) *rawClient[T] {
	t.Helper()
	r := &rawClient[T]{t: t, cmd: cmd, stderr: &lockedBuffer{}, lines: lines, wake: make(chan struct{}), exited: make(chan struct{})}
	cmd.Stderr = r.stderr
	stdin, stdout := harness.StartPiped(t, cmd)
	r.stdin = stdin
	// The reader owns stdout; Wait closes it, so it runs only after EOF.
	go func() {
		read(bufio.NewReaderSize(stdout, 1<<20), r)
		cmd.Wait()
		close(r.exited)
	}()
	t.Cleanup(r.close)
	return r
}

// close closes stdin (the server's EOF exit) and waits for the process,
// killing it after rawStopGrace. Later calls do nothing.
func (r *rawClient[T]) close() {
	r.stopOnce.Do(func() {
		r.stdin.Close()
		select {
		case <-r.exited:
		case <-time.After(rawStopGrace):
			r.cmd.Process.Kill()
			<-r.exited
		}
	})
}

// bump wakes the waiters; r.mu is held.
func (r *rawClient[T]) bump() {
	close(r.wake)
	r.wake = make(chan struct{})
}

// add appends frames to the log.
func (r *rawClient[T]) add(frames ...T) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.log = append(r.log, frames...)
	r.bump()
}

// noteBad records a framing violation seen on stdout.
func (r *rawClient[T]) noteBad(s string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.bad = append(r.bad, s)
}

// badFrames is every framing violation so far.
func (r *rawClient[T]) badFrames() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.bad...)
}

// all is the frames received so far.
func (r *rawClient[T]) all() []T {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]T(nil), r.log...)
}

// count is the number of frames received so far.
func (r *rawClient[T]) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.log)
}

// watch calls look with the log, again on every change, until look
// reports a find, stdout has ended or timeout fires.
func (r *rawClient[T]) watch(timeout <-chan time.Time, look func(log []T) bool) bool {
	for {
		ended := r.isExited() // before the snapshot: then it holds every frame
		r.mu.Lock()
		log, wake := r.log, r.wake
		r.mu.Unlock()
		if look(log) {
			return true
		}
		if ended {
			return false
		}
		select {
		case <-wake:
		case <-r.exited:
		case <-timeout:
			return false
		}
	}
}

// wait returns the first frame in wire order satisfying pred, waiting up to
// timeout; once stdout has ended no frame can come, so it stops early.
func (r *rawClient[T]) wait(timeout time.Duration, pred func(T) bool) (T, bool) {
	return r.waitFrom(0, timeout, pred)
}

// waitFrom is wait over the frames after the first n: what came after a
// point the test noted with count.
func (r *rawClient[T]) waitFrom(n int, timeout time.Duration, pred func(T) bool) (T, bool) {
	var hit T
	ok := r.watch(time.After(timeout), func(log []T) bool {
		for _, f := range log[min(n, len(log)):] {
			if pred(f) {
				hit = f
				return true
			}
		}
		return false
	})
	return hit, ok
}

// writeFrame writes body as one frame: a Content-Length frame, or body and a
// newline for a line-framed client.
func (r *rawClient[T]) writeFrame(body []byte) error {
	r.wmu.Lock()
	defer r.wmu.Unlock()
	if r.lines {
		_, err := r.stdin.Write(append(body[:len(body):len(body)], '\n'))
		return err
	}
	_, err := fmt.Fprintf(r.stdin, "Content-Length: %d\r\n\r\n%s", len(body), body)
	return err
}

// writeRaw writes b as it is, framing included.
func (r *rawClient[T]) writeRaw(b []byte) error {
	r.wmu.Lock()
	defer r.wmu.Unlock()
	_, err := r.stdin.Write(b)
	return err
}

// sendJSON writes v, JSON-encoded, as one frame; a dead server shows up in
// the assertions, not here.
func (r *rawClient[T]) sendJSON(v any) {
	r.t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		r.t.Fatal(err)
	}
	r.writeFrame(b)
}

// isExited reports whether the process has ended and its stdout is read.
func (r *rawClient[T]) isExited() bool {
	select {
	case <-r.exited:
		return true
	default:
		return false
	}
}

// exitCode waits up to timeout for the process to end and returns its exit
// code, or -1 when it is still running.
func (r *rawClient[T]) exitCode(timeout time.Duration) int {
	select {
	case <-r.exited:
		return r.cmd.ProcessState.ExitCode()
	case <-time.After(timeout):
		return -1
	}
}

// mcpMsg is one line of an MCP server's stdout that is a JSON object.
type mcpMsg struct {
	Raw    string          `json:"-"` // the line without its line end
	Obj    map[string]any  `json:"-"` // Raw decoded, for tests that look at it as a map
	ID     json.RawMessage // as written; nil when absent
	HasID  bool            `json:"-"`
	Method string
	Params json.RawMessage
	Result json.RawMessage
	Error  *struct {
		Code    int             `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	}
}

// isResponse reports whether m answers a request (it has an id, no method).
func (m mcpMsg) isResponse() bool { return m.Method == "" && m.HasID }

// isReplyTo reports whether m is a reply (no method member) whose id equals
// id as JSON; a reply without an id counts as id null.
func (m mcpMsg) isReplyTo(id any) bool {
	if _, isReq := m.Obj["method"]; isReq {
		return false
	}
	return sameJSON(m.Obj["id"], id)
}

// sameJSON reports whether a and b encode to the same JSON: an id decoded
// as float64 1 is the same as int 1.
func sameJSON(a, b any) bool { return compactJSON(a) == compactJSON(b) }

// mcpMethod matches a notification or server request with method.
func mcpMethod(method string) func(mcpMsg) bool {
	return func(m mcpMsg) bool { return m.Method == method }
}

// mcpHandler answers a server→client request with a result, or with a
// JSON-RPC error when errCode is not 0.
type mcpHandler func(req mcpMsg) (result any, errCode int)

// mcpRawClient speaks newline-delimited JSON-RPC (MCP's stdio transport) to
// a process on raw pipes: every line is kept in wire order, lines that are
// not JSON objects apart (badFrames), and server requests are answered by
// the handler set with setHandler (none: left unanswered).
type mcpRawClient struct {
	*rawClient[mcpMsg]

	mu      sync.Mutex
	handler mcpHandler
	taken   map[int]bool // log indices reply handed out
}

// startMCPRaw spawns agentls with args and env and reads its stdout as
// MCP lines. When the test fails, the tail of the process's stderr is logged.
func startMCPRaw(t *testing.T, args, env []string) *mcpRawClient {
	t.Helper()
	return startMCPRawCmd(t, harness.Command(t, args, env...))
}

// startMCPRawCmd is startMCPRaw for a command the caller prepared.
func startMCPRawCmd(t *testing.T, cmd *exec.Cmd) *mcpRawClient {
	t.Helper()
	c := &mcpRawClient{taken: map[int]bool{}}
	c.rawClient = spawnRawCmd(t, cmd, true, c.readLines)
	t.Cleanup(func() {
		c.close() // first, so stderr is complete
		if t.Failed() {
			t.Logf("agentls stderr:\n%s", lastBytes(c.stderr.String(), 4000))
		}
	})
	return c
}

// readLines is the rawReader of an MCP client. A final line without a
// newline still counts.
func (c *mcpRawClient) readLines(br *bufio.Reader, r *rawClient[mcpMsg]) {
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			c.record(r, bytes.TrimRight(line, "\r\n"))
		}
		if err != nil {
			return
		}
	}
}

// record logs one line and hands a server request to the handler. r is the
// reader's own client: c.rawClient may not be set yet.
func (c *mcpRawClient) record(r *rawClient[mcpMsg], line []byte) {
	var probe map[string]json.RawMessage
	if err := json.Unmarshal(line, &probe); err != nil {
		r.noteBad(string(line))
		return
	}
	m := mcpMsg{Raw: string(line)}
	json.Unmarshal(line, &m)
	json.Unmarshal(line, &m.Obj)
	m.ID, m.HasID = probe["id"]
	r.add(m)
	c.mu.Lock()
	h := c.handler
	c.mu.Unlock()
	if h != nil && m.Method != "" && m.HasID {
		// Off the reader: a write may block until the server reads, and
		// the server may be waiting for its stdout to drain. It ends with
		// its one write, which fails once stdin is closed.
		go c.answer(r, m, h)
	}
}

// answer writes h's answer to req.
func (c *mcpRawClient) answer(r *rawClient[mcpMsg], req mcpMsg, h mcpHandler) {
	res, code := h(req)
	if code != 0 {
		r.sendJSON(map[string]any{"jsonrpc": "2.0", "id": req.ID, "error": map[string]any{"code": code, "message": "test client refuses " + req.Method}})
		return
	}
	r.sendJSON(map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": res})
}

// setHandler makes h answer the server requests that come from now on.
func (c *mcpRawClient) setHandler(h mcpHandler) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.handler = h
}

// refuseRequests is a handler answering every server request -32601.
func refuseRequests(mcpMsg) (any, int) { return nil, -32601 }

// reply waits up to timeout for the first reply to id (see isReplyTo) not
// handed out before: ids may repeat (null for lines the server could not
// parse).
func (c *mcpRawClient) reply(id any, timeout time.Duration) (mcpMsg, bool) {
	var hit mcpMsg
	ok := c.watch(time.After(timeout), func(log []mcpMsg) bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		for i, m := range log {
			if !c.taken[i] && m.isReplyTo(id) {
				c.taken[i] = true
				hit = m
				return true
			}
		}
		return false
	})
	return hit, ok
}

// mustReply is reply failing the test when none comes or when stdout
// carried a line that is not a JSON object.
func (c *mcpRawClient) mustReply(id any, timeout time.Duration) mcpMsg {
	c.t.Helper()
	m, ok := c.reply(id, timeout)
	if bad := c.badFrames(); len(bad) > 0 {
		c.t.Fatalf("MCP stdout line is not a JSON object: %q", bad[0])
	}
	if !ok {
		c.t.Fatalf("no reply to MCP request %s in %v; got:\n%s", compactJSON(id), timeout, lastBytes(c.dump(), 4000))
	}
	return m
}

// matching is every message so far satisfying pred.
func (c *mcpRawClient) matching(pred func(mcpMsg) bool) []mcpMsg {
	var out []mcpMsg
	for _, m := range c.all() {
		if pred(m) {
			out = append(out, m)
		}
	}
	return out
}

// dump is every line so far, long ones cut, for a failure message.
func (c *mcpRawClient) dump() string {
	var b strings.Builder
	for _, m := range c.all() {
		b.WriteString(lastBytes(m.Raw, 600))
		b.WriteByte('\n')
	}
	for _, l := range c.badFrames() {
		fmt.Fprintf(&b, "NOT JSON: %s\n", lastBytes(l, 300))
	}
	return b.String()
}

// lastBytes is the last n bytes of s, marked when cut.
func lastBytes(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

// cliResult is what one agentls command printed and its exit code.
type cliResult struct {
	stdout, stderr string
	code           int
}

// runAgentls runs agentls with args in dir (stdin at EOF) to completion,
// killing it and failing the test after 20 s.
func runAgentls(t *testing.T, dir string, env []string, args ...string) cliResult {
	t.Helper()
	cmd := harness.Command(t, args, env...)
	cmd.Dir = dir
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatalf("agentls %q did not finish in 20 s; stdout %q stderr %q", args, o.String(), e.String())
	}
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("agentls %q: %v", args, err)
	}
	return cliResult{o.String(), e.String(), cmd.ProcessState.ExitCode()}
}

// watcherModes are the watch modes agentls/watcherReady reports
// (docs/protocol.md); fsevents and polling are reserved and never sent.
var watcherModes = []string{"inotify", "kqueue", "windows", "degraded"}

// checkWatcherStart checks an initialize result's capability "watcher" says
// the watchers are starting, and that mode, the one agentls/watcherReady
// reported after it, is a documented watch mode.
func checkWatcherStart(t *testing.T, agentlsCaps map[string]any, mode string) {
	t.Helper()
	if agentlsCaps["watcher"] != "starting" {
		t.Errorf("initialize capability watcher = %#v, want \"starting\" (the watchers arm after initialize)", agentlsCaps["watcher"])
	}
	if !slices.Contains(watcherModes, mode) {
		t.Errorf("agentls/watcherReady watcher = %q, want one of %v", mode, watcherModes)
	}
}

// watcherReadyMode is the watch mode of an agentls/watcherReady message.
func watcherReadyMode(msg map[string]any) string {
	p, _ := msg["params"].(map[string]any)
	mode, _ := p["watcher"].(string)
	return mode
}

// callWithID runs tools/call with an explicit callId (empty: none sent) and
// returns the result and the time the reply arrived.
func callWithID(t *testing.T, c *harness.Client, ctx context.Context, name, callID string, args any) (harness.Result, time.Time) {
	t.Helper()
	p := map[string]any{"name": name, "arguments": args}
	if callID != "" {
		p["callId"] = callID
	}
	var r harness.Result
	if err := c.Call(ctx, "tools/call", p, &r); err != nil {
		t.Fatalf("tools/call %s: %v", name, err)
	}
	return r, time.Now()
}
