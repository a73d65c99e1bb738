package e2e

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentls/agentls/internal/textedit"
	"github.com/agentls/agentls/test/harness"
)

// editorDoc is the test's editor side of one open document: it applies
// workspace/applyEdit to its text and reports the result with didChange, as
// VS Code and Neovim do.
type editorDoc struct {
	c       *harness.Client
	uri     string
	mu      sync.Mutex
	version int32
	text    string
	edits   []json.RawMessage // the applyEdit params received
	refuse  string            // when set, applyEdit answers applied:false with it
	saved   func(text string) // when set, called after an applied edit (the editor saves)
}

func (d *editorDoc) open(ctx context.Context, t *testing.T, text string) {
	d.mu.Lock()
	d.version, d.text = 1, text
	d.mu.Unlock()
	if err := d.c.Conn.Notify(ctx, "textDocument/didOpen", map[string]any{"textDocument": map[string]any{
		"uri": d.uri, "languageId": "go", "version": 1, "text": text}}); err != nil {
		t.Fatal(err)
	}
}

// typeAt inserts s at line:char with an incremental didChange.
func (d *editorDoc) typeAt(ctx context.Context, t *testing.T, line, char int, s string) {
	d.mu.Lock()
	next, err := textedit.ApplyTextEdits([]byte(d.text), []textedit.TextEdit{{Range: textedit.Range{
		Start: textedit.Position{Line: line, Character: char}, End: textedit.Position{Line: line, Character: char}}, NewText: s}})
	if err != nil {
		t.Fatal(err)
	}
	d.version++
	d.text = string(next)
	v := d.version
	d.mu.Unlock()
	pos := map[string]any{"line": line, "character": char}
	if err := d.c.Conn.Notify(ctx, "textDocument/didChange", map[string]any{
		"textDocument":   map[string]any{"uri": d.uri, "version": v},
		"contentChanges": []any{map[string]any{"range": map[string]any{"start": pos, "end": pos}, "text": s}},
	}); err != nil {
		t.Fatal(err)
	}
}

func (d *editorDoc) applyEdit(ctx context.Context, method string, params json.RawMessage) (any, error) {
	if method != "workspace/applyEdit" {
		return nil, nil
	}
	var p struct {
		Edit struct {
			DocumentChanges []struct {
				TextDocument struct {
					URI     string `json:"uri"`
					Version int32  `json:"version"`
				} `json:"textDocument"`
				Edits []textedit.TextEdit `json:"edits"`
			} `json:"documentChanges"`
		} `json:"edit"`
	}
	if err := json.Unmarshal(params, &p); err != nil || len(p.Edit.DocumentChanges) != 1 {
		return map[string]any{"applied": false, "failureReason": "test editor: unexpected edit"}, nil
	}
	dc := p.Edit.DocumentChanges[0]
	d.mu.Lock()
	d.edits = append(d.edits, params)
	if d.refuse != "" {
		d.mu.Unlock()
		return map[string]any{"applied": false, "failureReason": d.refuse}, nil
	}
	if dc.TextDocument.URI != d.uri || dc.TextDocument.Version != d.version {
		d.mu.Unlock()
		return map[string]any{"applied": false, "failureReason": "version mismatch"}, nil
	}
	next, err := textedit.ApplyTextEdits([]byte(d.text), dc.Edits)
	if err != nil {
		d.mu.Unlock()
		return map[string]any{"applied": false, "failureReason": err.Error()}, nil
	}
	d.version++
	d.text = string(next)
	v := d.version
	d.mu.Unlock()
	d.c.Conn.Notify(ctx, "textDocument/didChange", map[string]any{
		"textDocument":   map[string]any{"uri": d.uri, "version": v},
		"contentChanges": []any{map[string]any{"text": string(next)}},
	})
	if d.saved != nil {
		d.saved(string(next))
	}
	return map[string]any{"applied": true}, nil
}

// newSyncClient starts agentls on a workspace holding a.go with disk as its
// content and returns the editor side of a.go; the caller initializes.
func newSyncClient(t *testing.T, disk string) (*harness.Client, *editorDoc, string, context.Context) {
	t.Helper()
	ws := t.TempDir()
	writeFiles(t, ws, map[string]string{"a.go": disk})
	c := harness.Start(t, harness.Options{Root: ws})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	real, err := filepath.EvalSymlinks(ws)
	if err != nil {
		t.Fatal(err)
	}
	return c, &editorDoc{c: c, uri: "file://" + filepath.ToSlash(filepath.Join(real, "a.go"))}, ws, ctx
}

func startSync(t *testing.T, applyEdit bool) (*harness.Client, *editorDoc, string, context.Context, map[string]any) {
	t.Helper()
	c, d, ws, ctx := newSyncClient(t, "package a\n\nfunc A() {}\n")
	c.OnRequest = d.applyEdit
	params := bypass()
	params["capabilities"] = map[string]any{"experimental": map[string]any{"agentls": map[string]any{"applyEdit": applyEdit}}}
	res := c.Initialize(ctx, params)
	return c, d, ws, ctx, res
}

func TestOpenDocumentsAreTheTruth(t *testing.T) {
	t.Parallel()
	c, d, ws, ctx, res := startSync(t, true)
	sync, _ := res["capabilities"].(map[string]any)["textDocumentSync"].(map[string]any)
	if sync["openClose"] != true || sync["change"] != float64(2) {
		t.Fatalf("capabilities.textDocumentSync = %v, want openClose and incremental changes", sync)
	}
	d.open(ctx, t, "package a\n\nfunc A() {}\n\nfunc B() {} // unsaved\n")

	r := c.CallTool(ctx, "read", map[string]any{"path": "a.go"})
	if r.IsError || !strings.Contains(r.Text(), "// unsaved") || !strings.Contains(r.Text(), "unsaved text from the editor") {
		t.Fatalf("read = %q, want the unsaved document", r.Text())
	}

	// The user types after the read: the model must read again.
	d.typeAt(ctx, t, 0, 0, "// typed\n")
	edit := map[string]any{"path": "a.go", "oldText": "func B() {}", "newText": "func B() int { return 2 }"}
	if r := c.CallTool(ctx, "edit", edit); !r.IsError || !strings.Contains(r.Text(), "changed in the editor since you read it") {
		t.Fatalf("edit after typing = %q, want a stale error", r.Text())
	}
	if r := c.CallTool(ctx, "read", map[string]any{"path": "a.go"}); !strings.Contains(r.Text(), "// typed") {
		t.Fatalf("read after typing = %q, want the typed line (incremental didChange)", r.Text())
	}

	r = c.CallTool(ctx, "edit", edit)
	if r.IsError || !strings.Contains(r.Text(), "in the editor (unsaved") {
		t.Fatalf("edit = %q, want it applied in the editor", r.Text())
	}
	d.mu.Lock()
	text, n := d.text, len(d.edits)
	d.mu.Unlock()
	if n != 1 || !strings.Contains(text, "func B() int { return 2 } // unsaved") || !strings.HasPrefix(text, "// typed\n") {
		t.Fatalf("editor got %d applyEdit requests, document %q", n, text)
	}
	if got := readFile(t, filepath.Join(ws, "a.go")); got != "package a\n\nfunc A() {}\n" {
		t.Fatalf("the file on disk changed: %q", got)
	}
	// The next edit needs no re-read: the guard follows the document.
	if r := c.CallTool(ctx, "edit", map[string]any{"path": "a.go", "oldText": "return 2", "newText": "return 3"}); r.IsError {
		t.Fatalf("chained edit = %q", r.Text())
	}

	// Closed: the disk is the truth again.
	c.Conn.Notify(ctx, "textDocument/didClose", map[string]any{"textDocument": map[string]any{"uri": d.uri}})
	if r := c.CallTool(ctx, "read", map[string]any{"path": "a.go"}); strings.Contains(r.Text(), "unsaved") || strings.Contains(r.Text(), "typed") {
		t.Fatalf("read after close = %q, want the file on disk", r.Text())
	}
}

func TestUnsavedDocumentWithoutApplyEditIsNotEdited(t *testing.T) {
	t.Parallel()
	c, d, ws, ctx, _ := startSync(t, false)
	d.open(ctx, t, "package a\n\nfunc A() {} // unsaved\n")
	c.CallTool(ctx, "read", map[string]any{"path": "a.go"})
	for _, args := range []map[string]any{
		{"path": "a.go", "oldText": "func A() {}", "newText": "func A() { panic(0) }"},
		{"path": "a.go", "content": "replaced\n"},
	} {
		tool := map[bool]string{true: "write", false: "edit"}[args["content"] != nil]
		r := c.CallTool(ctx, tool, args)
		wantResult(t, tool, r, true, "unsaved changes", "save", "revert")
		if got := readFile(t, filepath.Join(ws, "a.go")); got != "package a\n\nfunc A() {}\n" {
			t.Fatalf("%s changed the file on disk under an unsaved document: %q", tool, got)
		}
	}
	// Saved (the buffer now equals the disk), the document is edited on disk.
	writeFile(t, filepath.Join(ws, "a.go"), "package a\n\nfunc A() {} // unsaved\n")
	c.Conn.Notify(ctx, "textDocument/didSave", map[string]any{"textDocument": map[string]any{"uri": d.uri}})
	c.CallTool(ctx, "read", map[string]any{"path": "a.go"})
	wantResult(t, "edit after save", c.CallTool(ctx, "edit", map[string]any{"path": "a.go", "oldText": "// unsaved", "newText": "// saved"}), false)
	if got := readFile(t, filepath.Join(ws, "a.go")); got != "package a\n\nfunc A() {} // saved\n" {
		t.Errorf("disk after save and edit: %q", got)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.edits) != 0 {
		t.Fatalf("workspace/applyEdit sent to a client without the capability")
	}
}

// An editor refusing the edit (applied:false) makes it an error carrying
// the editor's reason, with document and disk untouched; once the document
// is closed, read and edit use the disk again without asking the editor.
func TestRefusedApplyEditAndClosedDocument(t *testing.T) {
	t.Parallel()
	c, d, ws, ctx, _ := startSync(t, true)
	d.open(ctx, t, "package a\n\nfunc A() {} // unsaved\n")
	c.CallTool(ctx, "read", map[string]any{"path": "a.go"})
	d.mu.Lock()
	d.refuse = "the user undid it"
	d.mu.Unlock()
	r := c.CallTool(ctx, "edit", map[string]any{"path": "a.go", "oldText": "unsaved", "newText": "refused"})
	wantResult(t, "applied:false", r, true, "the user undid it")
	if got := readFile(t, filepath.Join(ws, "a.go")); got != "package a\n\nfunc A() {}\n" {
		t.Errorf("disk written after applied:false: %q", got)
	}
	c.Conn.Notify(ctx, "textDocument/didClose", map[string]any{"textDocument": map[string]any{"uri": d.uri}})
	r = c.CallTool(ctx, "read", map[string]any{"path": "a.go"})
	wantLacks(t, "read after didClose", r.Text(), "unsaved")
	if _, ok := r.Details["editorVersion"]; ok {
		t.Errorf("details.editorVersion after didClose: %v", r.Details["editorVersion"])
	}
	wantResult(t, "edit after didClose", c.CallTool(ctx, "edit", map[string]any{"path": "a.go", "oldText": "A()", "newText": "B()"}), false)
	if got := readFile(t, filepath.Join(ws, "a.go")); got != "package a\n\nfunc B() {}\n" {
		t.Errorf("disk after an edit of a closed document: %q", got)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.edits) != 1 {
		t.Errorf("%d applyEdit requests, want only the refused one", len(d.edits))
	}
}

// An editor that saves what it applied: the result says "in the editor
// (saved)"; a write of an open document goes through the editor too.
func TestSavedApplyEditAndWriteGoThroughTheEditor(t *testing.T) {
	t.Parallel()
	c, d, ws, ctx := newSyncClient(t, "red\ngreen\n")
	path := filepath.Join(ws, "a.go")
	d.saved = func(text string) {
		writeFile(t, path, text)
		c.Conn.Notify(ctx, "textDocument/didSave", map[string]any{"textDocument": map[string]any{"uri": d.uri}})
	}
	c.OnRequest = d.applyEdit
	c.Initialize(ctx, map[string]any{"initializationOptions": bypassOptions(),
		"capabilities": map[string]any{"experimental": map[string]any{"agentls": map[string]any{"applyEdit": true}}}})
	d.open(ctx, t, "red\ngreen\n")
	c.CallTool(ctx, "read", map[string]any{"path": "a.go"})
	r := c.CallTool(ctx, "edit", map[string]any{"path": "a.go", "oldText": "green", "newText": "blue"})
	wantResult(t, "saved edit", r, false, "in the editor (saved)")
	if r.Details["inEditor"] != true || r.Details["saved"] != true {
		t.Errorf("details.inEditor=%v saved=%v, want true/true", r.Details["inEditor"], r.Details["saved"])
	}
	if got := readFile(t, path); got != "red\nblue\n" {
		t.Errorf("disk after a saved edit: %q", got)
	}
	wantResult(t, "write of an open document", c.CallTool(ctx, "write", map[string]any{"path": "a.go", "content": "all new\n"}), false, "in the editor")
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.edits) != 2 || d.text != "all new\n" {
		t.Errorf("%d applyEdit requests, document %q; want the write applied by the editor", len(d.edits), d.text)
	}
}

// didChange ranges count UTF-16 code units; a change that cannot be
// applied drops the document (reported) and the disk is used again.
func TestIncrementalChangesCountUTF16AndABadRangeDropsTheDocument(t *testing.T) {
	t.Parallel()
	disk := "héllo 😀 world\nsecond\n"
	c, d, _, ctx := newSyncClient(t, disk)
	c.Initialize(ctx, bypass())
	d.open(ctx, t, disk)
	rng := func(l1, c1, l2, c2 int) map[string]any {
		return map[string]any{"start": map[string]any{"line": l1, "character": c1}, "end": map[string]any{"line": l2, "character": c2}}
	}
	change := func(v int, changes ...any) {
		c.Conn.Notify(ctx, "textDocument/didChange", map[string]any{"textDocument": map[string]any{"uri": d.uri, "version": v}, "contentChanges": changes})
	}
	// "world" starts at UTF-16 column 9 (h é l l o ␠ = 6, 😀 = 2 units, ␠ = 1).
	change(2, map[string]any{"range": rng(0, 9, 0, 14), "text": "there"}, map[string]any{"range": rng(1, 0, 1, 6), "text": "2nd"})
	r := c.CallTool(ctx, "read", map[string]any{"path": "a.go"})
	wantContains(t, "read after incremental changes", r.Text(), "héllo 😀 there", "2nd", "unsaved text from the editor")
	if v, _ := r.Details["editorVersion"].(float64); v != 2 {
		t.Errorf("details.editorVersion = %v, want 2", r.Details["editorVersion"])
	}
	change(3, map[string]any{"range": rng(40, 0, 40, 1), "text": "x"})
	r = c.CallTool(ctx, "read", map[string]any{"path": "a.go"})
	wantContains(t, "read after a bad didChange", r.Text(), "héllo 😀 world", "second")
	wantLacks(t, "read after a bad didChange", r.Text(), "there", "unsaved text")
	if _, ok := c.WaitNote(5*time.Second, func(n harness.Note) bool {
		return n.Method == "window/logMessage" && strings.Contains(string(n.Params), "a.go")
	}); !ok {
		t.Errorf("no window/logMessage for an unappliable didChange; logs: %q", logMessages(c, 0))
	}
}

// The user asked to approve an edit of an open document sees the diff
// against the document, which is what the edit will change.
func TestConfirmPreviewOfAnOpenDocument(t *testing.T) {
	t.Parallel()
	c, d, _, ctx := newSyncClient(t, "package a\n")
	var previews []map[string]any
	var mu sync.Mutex
	c.OnRequest = func(ctx context.Context, method string, params json.RawMessage) (any, error) {
		if method == "tools/confirm" {
			var p struct {
				Preview map[string]any `json:"preview"`
			}
			json.Unmarshal(params, &p)
			mu.Lock()
			previews = append(previews, p.Preview)
			mu.Unlock()
			return map[string]any{"decision": "allowOnce"}, nil
		}
		return d.applyEdit(ctx, method, params)
	}
	c.Initialize(ctx, map[string]any{
		"initializationOptions": map[string]any{"mode": "default"},
		"capabilities":          map[string]any{"experimental": map[string]any{"agentls": map[string]any{"confirm": true, "applyEdit": true}}},
	})
	d.open(ctx, t, "package a\n\nvar unsaved = 1\n")
	c.CallTool(ctx, "read", map[string]any{"path": "a.go"})
	r := c.CallTool(ctx, "edit", map[string]any{"path": "a.go", "oldText": "unsaved = 1", "newText": "unsaved = 2"})
	if r.IsError {
		t.Fatalf("edit = %q", r.Text())
	}
	mu.Lock()
	defer mu.Unlock()
	if len(previews) != 1 {
		t.Fatalf("%d confirm requests, want 1", len(previews))
	}
	if diff, _ := previews[0]["unifiedDiff"].(string); !strings.Contains(diff, "+var unsaved = 2") {
		t.Fatalf("preview = %v, want the diff against the open document", previews[0])
	}
}
