package e2e

// The editor's open documents beside the tools (docs/protocol.md "Text
// document sync", workspace/applyEdit): what is not pinned by
// text_encodings_test.go (UTF-16 ranges, a bad change dropping the
// document, a write through the editor).

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
// VS Code and Neovim do, and approves every tools/confirm, keeping its
// preview.
type editorDoc struct {
	c        *harness.Client
	uri      string
	mu       sync.Mutex
	version  int32
	text     string
	edits    int              // applyEdit requests received
	previews []map[string]any // tools/confirm previews received
	refuse   string           // when set, applyEdit answers applied:false with it
}

// set opens the document with text, or (when open) changes it to text.
func (d *editorDoc) set(ctx context.Context, t *testing.T, text string) {
	d.mu.Lock()
	d.version++
	d.text = text
	method, params := "textDocument/didOpen", map[string]any{"textDocument": map[string]any{"uri": d.uri, "languageId": "go", "version": d.version, "text": text}}
	if d.version > 1 {
		method, params = "textDocument/didChange", map[string]any{"textDocument": map[string]any{"uri": d.uri, "version": d.version}, "contentChanges": []any{map[string]any{"text": text}}}
	}
	d.mu.Unlock()
	if err := d.c.Conn.Notify(ctx, method, params); err != nil {
		t.Fatal(err)
	}
}

func (d *editorDoc) answer(ctx context.Context, method string, params json.RawMessage) (any, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if method == "tools/confirm" {
		var p struct{ Preview map[string]any }
		json.Unmarshal(params, &p)
		d.previews = append(d.previews, p.Preview)
		return map[string]any{"decision": "allowOnce"}, nil
	}
	var p struct {
		Edit struct {
			DocumentChanges []struct {
				TextDocument struct {
					URI     string
					Version int32
				}
				Edits []textedit.TextEdit
			}
		}
	}
	if err := json.Unmarshal(params, &p); err != nil || method != "workspace/applyEdit" || len(p.Edit.DocumentChanges) != 1 {
		return map[string]any{"applied": false, "failureReason": "test editor: unexpected edit"}, nil
	}
	dc := p.Edit.DocumentChanges[0]
	d.edits++
	if d.refuse != "" {
		return map[string]any{"applied": false, "failureReason": d.refuse}, nil
	}
	if dc.TextDocument.URI != d.uri || dc.TextDocument.Version != d.version {
		return map[string]any{"applied": false, "failureReason": "version mismatch"}, nil
	}
	next, err := textedit.ApplyTextEdits([]byte(d.text), dc.Edits)
	if err != nil {
		return map[string]any{"applied": false, "failureReason": err.Error()}, nil
	}
	d.version++
	d.text = string(next)
	d.c.Conn.Notify(ctx, "textDocument/didChange", map[string]any{
		"textDocument":   map[string]any{"uri": d.uri, "version": d.version},
		"contentChanges": []any{map[string]any{"text": d.text}},
	})
	return map[string]any{"applied": true}, nil
}

// syncStart starts agentls on a workspace holding a.go with disk as its
// content, the editor side of a.go answering its requests; it initializes
// with the experimental agentls capabilities caps and initializationOptions
// opts (bypass mode when nil).
func syncStart(t *testing.T, disk string, caps, opts map[string]any) (*harness.Client, *editorDoc, string, context.Context) {
	t.Helper()
	ws := resolvedWorkspace(t, map[string]string{"a.go": disk})
	c := harness.Start(t, harness.Options{Root: ws})
	ctx := testCtx(t, 30*time.Second)
	d := &editorDoc{c: c, uri: fileURI(filepath.Join(ws, "a.go"))}
	c.OnRequest = d.answer
	if opts == nil {
		opts = bypassOptions()
	}
	c.Initialize(ctx, map[string]any{"initializationOptions": opts, "capabilities": map[string]any{"experimental": map[string]any{"agentls": caps}}})
	return c, d, ws, ctx
}

// An open document is what read shows and edit changes (through the
// editor, the disk untouched); the user typing after the read makes the
// edit stale, an editor refusing it (applied:false) makes it an error with
// the editor's reason, an applied edit keeps the guard fresh for the next
// one, and once closed the disk is the truth again, edited without asking
// the editor.
func TestOpenDocumentsAreTheTruth(t *testing.T) {
	t.Parallel()
	const disk = "package a\n\nfunc A() {}\n"
	c, d, ws, ctx := syncStart(t, disk, map[string]any{"applyEdit": true}, nil)
	d.set(ctx, t, "package a\n\nfunc A() {}\n\nfunc B() {} // unsaved\n")
	wantResult(t, "read", c.CallTool(ctx, "read", map[string]any{"path": "a.go"}), false, "// unsaved", "unsaved text from the editor")

	d.set(ctx, t, "// typed\npackage a\n\nfunc A() {}\n\nfunc B() {} // unsaved\n")
	edit := map[string]any{"path": "a.go", "oldText": "func B() {}", "newText": "func B() int { return 2 }"}
	wantResult(t, "edit after typing", c.CallTool(ctx, "edit", edit), true, "changed in the editor since you read it")
	wantResult(t, "read after typing", c.CallTool(ctx, "read", map[string]any{"path": "a.go"}), false, "// typed")
	wantResult(t, "edit", c.CallTool(ctx, "edit", edit), false, "in the editor (unsaved")
	d.mu.Lock()
	text, n := d.text, d.edits
	d.refuse = "the user undid it"
	d.mu.Unlock()
	if n != 1 || !strings.Contains(text, "func B() int { return 2 } // unsaved") || !strings.HasPrefix(text, "// typed\n") {
		t.Fatalf("editor got %d applyEdit requests, document %q", n, text)
	}
	wantResult(t, "edit the editor refuses (applied:false)", c.CallTool(ctx, "edit", map[string]any{"path": "a.go", "oldText": "return 2", "newText": "return 3"}), true, "the user undid it")
	if got := readFile(t, filepath.Join(ws, "a.go")); got != disk {
		t.Fatalf("the file on disk changed: %q", got)
	}
	d.mu.Lock()
	d.refuse = ""
	d.mu.Unlock()
	wantResult(t, "chained edit with no re-read", c.CallTool(ctx, "edit", map[string]any{"path": "a.go", "oldText": "return 2", "newText": "return 3"}), false)
	c.Conn.Notify(ctx, "textDocument/didClose", map[string]any{"textDocument": map[string]any{"uri": d.uri}})
	r := c.CallTool(ctx, "read", map[string]any{"path": "a.go"})
	wantLacks(t, "read after close", r.Text(), "unsaved", "typed")
	if _, ok := r.Details["editorVersion"]; ok {
		t.Errorf("details.editorVersion after didClose: %v", r.Details["editorVersion"])
	}
	wantResult(t, "edit after close", c.CallTool(ctx, "edit", map[string]any{"path": "a.go", "oldText": "A()", "newText": "B()"}), false)
	d.mu.Lock()
	defer d.mu.Unlock()
	if got := readFile(t, filepath.Join(ws, "a.go")); got != "package a\n\nfunc B() {}\n" || d.edits != 3 {
		t.Errorf("after close: disk %q and %d applyEdit requests, want the edit on disk and no request for it", got, d.edits)
	}
}

// Without the applyEdit capability a document with unsaved changes is not
// edited nor written (the model is told to have it saved or reverted);
// once saved it is edited on disk.
func TestUnsavedDocumentWithoutApplyEditIsNotEdited(t *testing.T) {
	t.Parallel()
	c, d, ws, ctx := syncStart(t, "package a\n\nfunc A() {}\n", map[string]any{}, nil)
	d.set(ctx, t, "package a\n\nfunc A() {} // unsaved\n")
	c.CallTool(ctx, "read", map[string]any{"path": "a.go"})
	for tool, args := range map[string]map[string]any{
		"edit":  {"path": "a.go", "oldText": "func A() {}", "newText": "func A() { panic(0) }"},
		"write": {"path": "a.go", "content": "replaced\n"},
	} {
		wantResult(t, tool, c.CallTool(ctx, tool, args), true, "unsaved changes", "save", "revert")
		if got := readFile(t, filepath.Join(ws, "a.go")); got != "package a\n\nfunc A() {}\n" {
			t.Fatalf("%s changed the file on disk under an unsaved document: %q", tool, got)
		}
	}
	writeFile(t, filepath.Join(ws, "a.go"), "package a\n\nfunc A() {} // unsaved\n") // saved: the buffer equals the disk
	c.Conn.Notify(ctx, "textDocument/didSave", map[string]any{"textDocument": map[string]any{"uri": d.uri}})
	c.CallTool(ctx, "read", map[string]any{"path": "a.go"})
	wantResult(t, "edit after save", c.CallTool(ctx, "edit", map[string]any{"path": "a.go", "oldText": "// unsaved", "newText": "// saved"}), false)
	if got := readFile(t, filepath.Join(ws, "a.go")); got != "package a\n\nfunc A() {} // saved\n" {
		t.Errorf("disk after save and edit: %q", got)
	}
	if d.edits != 0 {
		t.Fatalf("workspace/applyEdit sent to a client without the capability")
	}
}

// The user asked to approve an edit of an open document sees the diff
// against the document, which is what the edit will change.
func TestConfirmPreviewOfAnOpenDocument(t *testing.T) {
	t.Parallel()
	c, d, _, ctx := syncStart(t, "package a\n", map[string]any{"confirm": true, "applyEdit": true}, map[string]any{"mode": "default"})
	d.set(ctx, t, "package a\n\nvar unsaved = 1\n")
	c.CallTool(ctx, "read", map[string]any{"path": "a.go"})
	wantResult(t, "edit", c.CallTool(ctx, "edit", map[string]any{"path": "a.go", "oldText": "unsaved = 1", "newText": "unsaved = 2"}), false)
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.previews) != 1 {
		t.Fatalf("%d confirm requests, want 1", len(d.previews))
	}
	if diff, _ := d.previews[0]["unifiedDiff"].(string); !strings.Contains(diff, "+var unsaved = 2") {
		t.Fatalf("preview = %v, want the diff against the open document", d.previews[0])
	}
}

// didChange ranges count UTF-16 code units; a change that cannot be
// applied drops the document (reported) and the disk is used again.
func TestIncrementalChangesCountUTF16AndABadRangeDropsTheDocument(t *testing.T) {
	t.Parallel()
	disk := "héllo 😀 world\nsecond\n"
	c, d, _, ctx := syncStart(t, disk, nil, nil)
	d.set(ctx, t, disk)
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
