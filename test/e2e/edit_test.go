package e2e

// Edits and writes under concurrency (a crash mid-write is crash_test.go's),
// and the helpers every edit/write test (edit_*, staleness, text_encodings,
// write) shares.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/agentls/agentls/test/harness"
)

const bom = "\ufeff"

// noteWait bounds a wait for a notification: generous for a loaded 2-core
// machine, far below a session's timeout.
const noteWait = 8 * time.Second

// mustRead calls read and fails the test on an error result.
func mustRead(t testing.TB, c *harness.Client, ctx context.Context, path string) harness.Result {
	t.Helper()
	r := c.CallTool(ctx, "read", map[string]any{"path": path})
	if r.IsError {
		t.Fatalf("read %s: %s", path, r.Text())
	}
	return r
}

// wantRefused fails unless r is an error result whose text holds every
// want (case-sensitive).
func wantRefused(t testing.TB, what string, r harness.Result, wants ...string) {
	t.Helper()
	if !r.IsError {
		t.Errorf("%s: not refused: %s", what, r.Text())
	}
	wantContains(t, what, r.Text(), wants...)
}

func writeCall(path, content string) map[string]any {
	return map[string]any{"path": path, "content": content}
}

// startCaps is start with experimental.agentls capabilities (applyEdit,
// diagnostics, confirm) and an OnRequest handler set before initialize.
func startCaps(t *testing.T, ws string, caps map[string]any, onRequest func(context.Context, string, json.RawMessage) (any, error)) (*harness.Client, context.Context) {
	t.Helper()
	c := harness.Start(t, harness.Options{Root: ws})
	c.OnRequest = onRequest
	ctx := testCtx(t, sessionTimeout)
	c.Initialize(ctx, map[string]any{"initializationOptions": bypassOptions(),
		"capabilities": map[string]any{"experimental": map[string]any{"agentls": caps}}})
	return c, ctx
}

// dirNames lists dir's entries, sorted: temp files left behind show here.
func dirNames(t testing.TB, dir string) []string {
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

// wantNames checks dir ends up holding exactly want: a cancelled call
// removes its temp file as it winds down, so a temp file counts as left
// behind only if it is still there after 2 s.
func wantNames(t testing.TB, what, dir string, want ...string) {
	t.Helper()
	sort.Strings(want)
	var got []string
	if !waitUntil(2*time.Second, func() bool { got = dirNames(t, dir); return reflect.DeepEqual(got, want) }) {
		t.Errorf("%s: %s holds %q, want exactly %q (temp file left behind?)", what, dir, got, want)
	}
}

// lspEdit is an LSP TextEdit as agentls sends it.
type lspEdit struct {
	Range struct {
		Start struct{ Line, Character int } `json:"start"`
		End   struct{ Line, Character int } `json:"end"`
	} `json:"range"`
	NewText string `json:"newText"`
}

func (e lspEdit) String() string {
	return fmt.Sprintf("%d:%d-%d:%d %q", e.Range.Start.Line, e.Range.Start.Character, e.Range.End.Line, e.Range.End.Character, e.NewText)
}

// lspEdits decodes details.edits.
func lspEdits(t testing.TB, v any) []lspEdit {
	t.Helper()
	raw, _ := json.Marshal(v)
	var out []lspEdit
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("edits %s: %v", raw, err)
	}
	return out
}

// lspOffset turns an LSP position into a byte offset of text. Lines end at
// \r\n, \n or \r (LSP 3.17); character counts units of enc ("utf-16",
// "utf-8", "utf-32"). A character past the line's end or inside a
// multi-unit character is an error: a server must not send one.
func lspOffset(text string, line, char int, enc string) (int, error) {
	off := 0
	for l := 0; l < line; l++ {
		i := strings.IndexAny(text[off:], "\r\n")
		if i < 0 {
			return 0, fmt.Errorf("line %d past the end (%d lines)", line, l+1)
		}
		off += i + 1
		if strings.HasPrefix(text[off-1:], "\r\n") {
			off++
		}
	}
	end := len(text)
	if i := strings.IndexAny(text[off:], "\r\n"); i >= 0 {
		end = off + i
	}
	for units := 0; units < char; {
		if off >= end {
			return 0, fmt.Errorf("character %d past the end of line %d (%d units)", char, line, units)
		}
		r, size := utf8.DecodeRuneInString(text[off:])
		switch enc {
		case "utf-8":
			units += size
		case "utf-32":
			units++
		default:
			units += utf16.RuneLen(r)
		}
		off += size
		if units > char {
			return 0, fmt.Errorf("character %d splits a character on line %d", char, line)
		}
	}
	return off, nil
}

// applyLSP applies TextEdits (ranges in old, positions in enc) to old and
// fails on invalid or overlapping ranges.
func applyLSP(old string, edits []lspEdit, enc string) (string, error) {
	type span struct {
		s, e int
		text string
	}
	var spans []span
	for _, e := range edits {
		s, err := lspOffset(old, e.Range.Start.Line, e.Range.Start.Character, enc)
		if err != nil {
			return "", fmt.Errorf("start: %w", err)
		}
		en, err := lspOffset(old, e.Range.End.Line, e.Range.End.Character, enc)
		if err != nil {
			return "", fmt.Errorf("end: %w", err)
		}
		if en < s {
			return "", fmt.Errorf("range end before start: %v", e)
		}
		spans = append(spans, span{s, en, e.NewText})
	}
	sort.SliceStable(spans, func(i, j int) bool { return spans[i].s > spans[j].s })
	out := old
	for i, sp := range spans {
		if i > 0 && sp.e > spans[i-1].s {
			return "", fmt.Errorf("overlapping edits")
		}
		out = out[:sp.s] + sp.text + out[sp.e:]
	}
	return out, nil
}

// checkEdits applies details.edits to old (a BOM is not part of the
// editor's text, docs/tools.md) and compares with want.
func checkEdits(t testing.TB, details map[string]any, old, want, enc string) {
	t.Helper()
	edits := lspEdits(t, details["edits"])
	if len(edits) == 0 {
		t.Fatalf("details.edits empty: %v", details)
	}
	got, err := applyLSP(strings.TrimPrefix(old, bom), edits, enc)
	if err != nil {
		t.Fatalf("applying details.edits (%s) %v to %q: %v", enc, edits, old, err)
	}
	if got != strings.TrimPrefix(want, bom) {
		t.Errorf("details.edits (%s) %v applied to the old text give\n%q\nwant (new file without BOM)\n%q", enc, edits, got, strings.TrimPrefix(want, bom))
	}
}

// extChange is one workspace/externalChange notification.
type extChange struct {
	URI       string `json:"uri"`
	Kind      string `json:"kind"`
	ReadStale bool   `json:"readStale"`
}

// waitExt waits up to d for a workspace/externalChange received after since
// that match accepts. (WaitNote holds the client's lock while it calls the
// predicate: it parses, it does not call Notes.)
func waitExt(c *harness.Client, d time.Duration, since time.Time, match func(extChange) bool) (extChange, time.Time, bool) {
	var got extChange
	n, ok := c.WaitNote(d, func(n harness.Note) bool {
		var e extChange
		if n.Method != "workspace/externalChange" || n.At.Before(since) || json.Unmarshal(n.Params, &e) != nil || !match(e) {
			return false
		}
		got = e
		return true
	})
	return got, n.At, ok
}

// extOf matches a change of p (any kind when kind is "").
func extOf(p, kind string) func(extChange) bool {
	return func(e extChange) bool { return e.URI == fileURI(p) && (kind == "" || e.Kind == kind) }
}

// staleOf matches a readStale change of any of paths.
func staleOf(paths ...string) func(extChange) bool {
	return func(e extChange) bool {
		for _, p := range paths {
			if e.ReadStale && e.URI == fileURI(p) {
				return true
			}
		}
		return false
	}
}

// extChanges is every workspace/externalChange so far for p ("": all).
func extChanges(c *harness.Client, p string) []extChange {
	var out []extChange
	for _, n := range c.Notes("workspace/externalChange") {
		var e extChange
		if json.Unmarshal(n.Params, &e) == nil && (p == "" || e.URI == fileURI(p)) {
			out = append(out, e)
		}
	}
	return out
}

// barrier changes barrier.txt (read beforehand) and waits for its
// notification: events caused earlier have been handled by then, so the
// absence of a notification can be asserted.
func barrier(t testing.TB, c *harness.Client, ws string) {
	t.Helper()
	p := filepath.Join(ws, "barrier.txt")
	mark := time.Now()
	writeFile(t, p, fmt.Sprintf("barrier %d, a longer line\n", mark.UnixNano()))
	if _, _, ok := waitExt(c, noteWait, mark, extOf(p, "")); !ok {
		t.Fatalf("barrier: no workspace/externalChange for %s within %v", p, noteWait)
	}
}

// editAll runs the edits as one callBatch or as parallel tools/calls and
// fails the test for each one that does not go through.
func editAll(t *testing.T, ctx context.Context, c *harness.Client, parallel bool, edits []map[string]any) {
	t.Helper()
	errs := make([]string, len(edits))
	if parallel {
		var wg sync.WaitGroup
		for i, e := range edits {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if r, err := c.TryCallTool(ctx, "edit", e); err != nil {
					errs[i] = err.Error()
				} else if r.IsError {
					errs[i] = r.Text()
				}
			}()
		}
		wg.Wait()
	} else {
		var calls []map[string]any
		for _, e := range edits {
			calls = append(calls, batchCall("edit", e, ""))
		}
		for i, r := range callBatch(t, ctx, c, calls...) {
			if r.IsError {
				errs[i] = r.Text()
			}
		}
	}
	for i, e := range errs {
		if e != "" {
			t.Errorf("edit %d (parallel %v): %s", i, parallel, e)
		}
	}
}

// 50 edits of distinct lines of one file, in one batch and as 50 parallel
// calls (half of them through a symlink to it): every one lands, the link
// stays a link and no temp file is left.
func TestConcurrentEditsOfOneFileLandAll(t *testing.T) {
	const n = 50
	orig := numberedLines(n, func(i int) string { return fmt.Sprintf("slot %02d — ü😀: old", i) })
	want := strings.ReplaceAll(orig, ": old", ": new")
	c, ws, ctx := start(t, map[string]string{"batch/c.txt": orig, "par/c.txt": orig})
	symlink(t, "c.txt", filepath.Join(ws, "par/alias.txt"))
	for _, p := range []string{"batch/c.txt", "par/c.txt", "par/alias.txt"} {
		mustRead(t, c, ctx, p)
	}
	var batch, par []map[string]any
	for i := range n {
		old, new := fmt.Sprintf("slot %02d — ü😀: old", i+1), fmt.Sprintf("slot %02d — ü😀: new", i+1)
		batch = append(batch, editCall("batch/c.txt", old, new))
		par = append(par, editCall([]string{"par/c.txt", "par/alias.txt"}[i%2], old, new))
	}
	editAll(t, ctx, c, false, batch)
	editAll(t, ctx, c, true, par)
	for _, f := range []string{"batch/c.txt", "par/c.txt"} {
		if got := readFile(t, filepath.Join(ws, f)); got != want {
			t.Errorf("%s lost updates:\n%s", f, got)
		}
	}
	if fi, err := os.Lstat(filepath.Join(ws, "par/alias.txt")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the symlink alias was replaced by a file")
	}
	wantNames(t, "after the edits", filepath.Join(ws, "par"), "alias.txt", "c.txt")
	wantNames(t, "after the batch", filepath.Join(ws, "batch"), "c.txt")
}

// parallelProbe answers tools/diagnostics requests and records how many
// were outstanding at once; each waits (up to hold) for a second to arrive,
// so two calls that really run at the same time are both seen in flight.
type parallelProbe struct {
	hold              time.Duration
	mu                sync.Mutex
	inFlight, maxSeen int
	arrived           chan struct{} // closed when two are in flight at once
	once              sync.Once
}

func (b *parallelProbe) answer(ctx context.Context, method string, params json.RawMessage) (any, error) {
	if method != "tools/diagnostics" {
		return nil, nil
	}
	b.mu.Lock()
	b.inFlight++
	b.maxSeen = max(b.maxSeen, b.inFlight)
	if b.inFlight >= 2 {
		b.once.Do(func() { close(b.arrived) })
	}
	b.mu.Unlock()
	select {
	case <-b.arrived:
	case <-time.After(b.hold):
	case <-ctx.Done():
	}
	b.mu.Lock()
	b.inFlight--
	b.mu.Unlock()
	return map[string]any{"items": []any{}}, nil
}

// docs/tools.md: edit and write are "not concurrency-safe for the same path
// only": edits of 50 different files run in parallel. The editor's
// diagnostics question, asked inside each edit, shows whether two edits
// were running at once.
func TestEditsOfDifferentFilesRunInParallel(t *testing.T) {
	t.Parallel()
	const files = 50
	for _, mode := range []string{"callBatch", "parallel tools/call"} {
		t.Run(mode, func(t *testing.T) {
			ws := t.TempDir()
			for i := range files {
				writeFile(t, filepath.Join(ws, fmt.Sprintf("f%02d.txt", i)), fmt.Sprintf("file %02d: old\n", i))
			}
			b := &parallelProbe{hold: 200 * time.Millisecond, arrived: make(chan struct{})}
			c, ctx := startCaps(t, ws, map[string]any{"diagnostics": true}, b.answer)
			for i := range files {
				mustRead(t, c, ctx, fmt.Sprintf("f%02d.txt", i))
			}
			var edits []map[string]any
			for i := range files {
				edits = append(edits, editCall(fmt.Sprintf("f%02d.txt", i), fmt.Sprintf("file %02d: old", i), fmt.Sprintf("file %02d: new", i)))
			}
			editAll(t, ctx, c, mode != "callBatch", edits)
			for i := range files {
				if got, want := readFile(t, filepath.Join(ws, fmt.Sprintf("f%02d.txt", i))), fmt.Sprintf("file %02d: new\n", i); got != want {
					t.Errorf("f%02d.txt = %q, want %q", i, got, want)
				}
			}
			if b.maxSeen < 2 {
				t.Errorf("edits of %d different files never ran at the same time: they were serialized", files)
			}
		})
	}
}

// The model reads and rewrites race.txt while an external writer keeps
// saving it atomically with numbered contents: every state of the file is
// whole, and a model write based on version k never replaces a version > k
// saved after its read (no lost update).
func TestWriteRacingAnExternalWriterLosesNoUpdate(t *testing.T) {
	slow(t)
	ext := func(k int) string { return fmt.Sprintf("external %04d\n%s", k, strings.Repeat("payload line\n", 200)) }
	c, ws, ctx := start(t, map[string]string{"race/race.txt": ext(0)})
	p := filepath.Join(ws, "race", "race.txt")
	valid := regexp.MustCompile(`^(external (\d{4})\n(payload line\n){200}|model based on (\d{4}) try (\d+)\n(model line\n){300})$`)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	lastExt := 0
	var torn []string
	wg.Add(2)
	go func() { // external writer: atomic saves through its own temp name
		defer wg.Done()
		for k := 1; k <= 400; k++ {
			select {
			case <-stop:
				return
			default:
			}
			tmp := filepath.Join(ws, "race", ".ext.tmp.txt")
			if os.WriteFile(tmp, []byte(ext(k)), 0o644) == nil && os.Rename(tmp, p) == nil {
				mu.Lock()
				lastExt = k
				mu.Unlock()
			}
			time.Sleep(2 * time.Millisecond)
		}
	}()
	go func() { // reader: every state of the file is whole
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			if b, err := os.ReadFile(p); err == nil && !valid.Match(b) {
				mu.Lock()
				torn = append(torn, fmt.Sprintf("%.60q… (%d bytes)", b, len(b)))
				mu.Unlock()
			}
		}
	}()
	wrote := 0
	version := regexp.MustCompile(`(external|based on) (\d{4})`)
	for try, deadline := 0, time.Now().Add(2*time.Second); time.Now().Before(deadline); try++ {
		r := c.CallTool(ctx, "read", map[string]any{"path": "race/race.txt", "limit": 1})
		m := version.FindStringSubmatch(r.Text())
		if r.IsError || m == nil {
			continue
		}
		body := fmt.Sprintf("model based on %s try %d\n%s", m[2], try, strings.Repeat("model line\n", 300))
		if w := c.CallTool(ctx, "write", writeCall("race/race.txt", body)); !w.IsError {
			wrote++
		}
	}
	close(stop)
	wg.Wait()
	for _, s := range torn {
		t.Errorf("torn file state: %s", s)
	}
	final := readFile(t, p)
	if m := valid.FindStringSubmatch(final); m == nil {
		t.Errorf("final file not whole: %.80q", final)
	} else if k, _ := strconv.Atoi(m[4]); m[4] != "" && k < lastExt {
		t.Errorf("lost update: final file is the model's write based on version %d, external version %d was saved after that read", k, lastExt)
	}
	for _, n := range dirNames(t, filepath.Join(ws, "race")) {
		if n != "race.txt" && n != ".ext.tmp.txt" {
			t.Errorf("temp file left: %s", n)
		}
	}
	t.Logf("model writes that went through: %d, external saves: %d", wrote, lastExt)
}
