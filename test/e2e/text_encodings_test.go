package e2e

// Text document sync: the editor's open documents (didOpen, incremental
// didChange in UTF-16 positions, didClose) are what read shows and edit
// changes, through workspace/applyEdit or, for a document equal to the
// disk, on disk; BOM and UTF-16 files compare by their text. What read and
// grep show of encodings is in the scripts under cmd/agentls/testdata/script.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentls/agentls/test/harness"
)

// encodingsNumbered renders lines as read's `%6d→text` body.
func encodingsNumbered(from int, lines ...string) string {
	var b strings.Builder
	for i, l := range lines {
		fmt.Fprintf(&b, "%6d→%s\n", from+i, l)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// Text document sync: incremental changes in UTF-16 positions around emoji;
// read shows the document; a change outside the text drops the document
// with a window/logMessage warning and read goes back to the disk.
func TestTextSyncIncrementalUTF16(t *testing.T) {
	disk := "disk 1\r\ndisk 2\r\n"
	c, ws, ctx := start(t, map[string]string{"doc.txt": disk})
	uri := fileURI(filepath.Join(ws, "doc.txt"))
	notify := func(method string, params any) {
		t.Helper()
		if err := c.Conn.Notify(ctx, method, params); err != nil {
			t.Fatal(err)
		}
	}
	rng := func(sl, sc, el, ec int) map[string]any {
		return map[string]any{"start": map[string]any{"line": sl, "character": sc}, "end": map[string]any{"line": el, "character": ec}}
	}
	notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{"uri": uri, "languageId": "plaintext", "version": 1,
		"text": "a😀b 中\r\n👍🏽 end\r\n"}})
	notify("textDocument/didChange", map[string]any{"textDocument": map[string]any{"uri": uri, "version": 2}, "contentChanges": []any{
		// After "a😀" (1 + 2 units): insert X.
		map[string]any{"range": rng(0, 3, 0, 3), "text": "X"},
		// Line 1 "👍🏽 end": 👍 (2) + 🏽 (2) + space = 5; replace "end" (5-8).
		map[string]any{"range": rng(1, 5, 1, 8), "text": "fin😀"},
		// Replace "中" on line 0: "a😀Xb " is 1+2+1+1+1 = 6 units.
		map[string]any{"range": rng(0, 6, 0, 7), "text": "文\r\nnew"},
	}})
	r := c.CallTool(ctx, "read", map[string]any{"path": "doc.txt"})
	wantResult(t, "read", r, false)
	want := encodingsNumbered(1, "a😀Xb 文", "new", "👍🏽 fin😀")
	if !strings.Contains(r.Text(), want) {
		t.Errorf("read of the open document:\n%q\nwant lines\n%q", r.Text(), want)
	}
	if !strings.Contains(r.Text(), "unsaved text from the editor") {
		t.Errorf("no note that the editor's text differs from the disk: %q", r.Text())
	}
	if v, _ := r.Details["editorVersion"].(float64); v != 2 {
		t.Errorf("details.editorVersion %v, want 2", r.Details["editorVersion"])
	}
	// A range past the end of the text.
	notify("textDocument/didChange", map[string]any{"textDocument": map[string]any{"uri": uri, "version": 3}, "contentChanges": []any{
		map[string]any{"range": rng(40, 0, 40, 1), "text": "zzz"},
	}})
	if _, ok := c.WaitNote(5*time.Second, func(n harness.Note) bool {
		if n.Method != "window/logMessage" {
			return false
		}
		var m struct {
			Type    int    `json:"type"`
			Message string `json:"message"`
		}
		json.Unmarshal(n.Params, &m)
		return m.Type == 2 && strings.Contains(m.Message, "doc.txt")
	}); !ok {
		var all []string
		for _, n := range c.Notes("window/logMessage") {
			all = append(all, string(n.Params))
		}
		t.Errorf("no window/logMessage warning naming doc.txt after an impossible change; logs: %v", all)
	}
	r = c.CallTool(ctx, "read", map[string]any{"path": "doc.txt"})
	wantResult(t, "read after drop", r, false)
	if !strings.Contains(r.Text(), encodingsNumbered(1, "disk 1", "disk 2")) || strings.Contains(r.Text(), "zzz") || strings.Contains(r.Text(), "unsaved") {
		t.Errorf("after the drop read must show the disk: %q", r.Text())
	}
}

// edit of an open document through workspace/applyEdit: the edits carry
// UTF-16 ranges into the editor's text (no BOM, the editor's line endings),
// in documentChanges (versioned) and changes alike.
func TestTextSyncApplyEditRanges(t *testing.T) {
	disk := "top\r\n😀😀 中 target 👍🏽\r\nbottom\r\n"
	ws := newWorkspace(t, map[string]string{"doc.txt": disk})
	uri := fileURI(filepath.Join(ws, "doc.txt"))
	c := harness.Start(t, harness.Options{Root: ws})
	var mu sync.Mutex
	doc := "top\r\n😀😀 中 target 👍🏽 unsaved\r\nbottom\r\n" // differs from the disk
	version := 1
	var applied []string
	var applyErr []string
	ctx := testCtx(t, sessionTimeout)
	c.OnRequest = func(rctx context.Context, method string, params json.RawMessage) (any, error) {
		if method != "workspace/applyEdit" {
			return nil, fmt.Errorf("unexpected %s", method)
		}
		var p struct {
			Edit struct {
				DocumentChanges []struct {
					TextDocument struct {
						URI     string `json:"uri"`
						Version int    `json:"version"`
					} `json:"textDocument"`
					Edits []lspEdit `json:"edits"`
				} `json:"documentChanges"`
				Changes map[string][]lspEdit `json:"changes"`
			} `json:"edit"`
		}
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, err
		}
		mu.Lock()
		defer mu.Unlock()
		if len(p.Edit.DocumentChanges) != 1 || p.Edit.DocumentChanges[0].TextDocument.Version != version {
			applyErr = append(applyErr, fmt.Sprintf("documentChanges %s, want one at version %d", params, version))
			return map[string]any{"applied": false, "failureReason": "bad"}, nil
		}
		dc := p.Edit.DocumentChanges[0]
		next, err := applyLSP(doc, dc.Edits, "utf-16")
		if err != nil {
			applyErr = append(applyErr, err.Error())
			return map[string]any{"applied": false, "failureReason": err.Error()}, nil
		}
		for u, ch := range p.Edit.Changes {
			alt, err := applyLSP(doc, ch, "utf-16")
			if err != nil || alt != next {
				applyErr = append(applyErr, fmt.Sprintf("changes[%s] give %q (%v), documentChanges %q", u, alt, err, next))
			}
		}
		doc = next
		version++
		applied = append(applied, next)
		c.Conn.Notify(ctx, "textDocument/didChange", map[string]any{"textDocument": map[string]any{"uri": uri, "version": version},
			"contentChanges": []any{map[string]any{"text": next}}})
		return map[string]any{"applied": true}, nil
	}
	c.Initialize(ctx, map[string]any{
		"initializationOptions": bypassOptions(),
		"capabilities":          map[string]any{"experimental": map[string]any{"agentls": map[string]any{"applyEdit": true}}},
	})
	c.Conn.Notify(ctx, "textDocument/didOpen", map[string]any{"textDocument": map[string]any{"uri": uri, "languageId": "plaintext", "version": 1, "text": doc}})
	mustRead(t, c, ctx, "doc.txt")
	r := c.CallTool(ctx, "edit", map[string]any{"path": "doc.txt", "edits": []any{map[string]any{"oldText": "target 👍🏽 unsaved\nbottom", "newText": "hit 🎯\nlast"}}})
	wantResult(t, "edit", r, false)
	mu.Lock()
	defer mu.Unlock()
	for _, e := range applyErr {
		t.Error(e)
	}
	want := "top\r\n😀😀 中 hit 🎯\r\nlast\r\n"
	if len(applied) != 1 || applied[0] != want {
		t.Errorf("the editor's document after applyEdit: %q, want %q", applied, want)
	}
	if !strings.Contains(r.Text(), "in the editor") {
		t.Errorf("result does not say the change is in the editor: %q", r.Text())
	}
	if got := readFile(t, filepath.Join(ws, "doc.txt")); got != disk {
		t.Errorf("disk changed: %q", got)
	}
	if r.Details["inEditor"] != true {
		t.Errorf("details.inEditor %v", r.Details["inEditor"])
	}
	checkEdits(t, r.Details, "top\r\n😀😀 中 target 👍🏽 unsaved\r\nbottom\r\n", want, "utf-16")
	// A write of the open document replaces the editor's text the same way.
	mu.Unlock()
	r = c.CallTool(ctx, "write", writeCall("doc.txt", "whole\nnew\n"))
	mu.Lock()
	wantResult(t, "write", r, false, "in the editor")
	if len(applied) != 2 || applied[1] != "whole\r\nnew\r\n" && applied[1] != "whole\nnew\n" || readFile(t, filepath.Join(ws, "doc.txt")) != disk {
		t.Errorf("after the write the editor holds %q, the disk %q", applied[len(applied)-1], readFile(t, filepath.Join(ws, "doc.txt")))
	}
	// Once the editor closes it, read shows the disk again.
	c.Conn.Notify(ctx, "textDocument/didClose", map[string]any{"textDocument": map[string]any{"uri": uri}})
	wantResult(t, "read after didClose", c.CallTool(ctx, "read", map[string]any{"path": "doc.txt"}), false, "target")
}

// Editors keep a UTF-8 BOM out of the document text (docs/tools.md: "as
// editors keep it out of the document"). An open document equal to the
// disk but for the BOM is not "unsaved", is edited on disk with the BOM
// kept, and TextEdits do not count the BOM.
func TestTextSyncBOMDocumentEqualsDisk(t *testing.T) {
	disk := bom + "first 😀\r\nsecond\r\n"
	c, ws, ctx := start(t, map[string]string{"doc.txt": disk})
	c.Conn.Notify(ctx, "textDocument/didOpen", map[string]any{"textDocument": map[string]any{"uri": fileURI(filepath.Join(ws, "doc.txt")), "languageId": "plaintext", "version": 1,
		"text": strings.TrimPrefix(disk, bom)}})
	r := c.CallTool(ctx, "read", map[string]any{"path": "doc.txt"})
	wantResult(t, "read", r, false)
	if strings.Contains(r.Text(), "unsaved") {
		t.Errorf("document equal to the disk (BOM aside) reported as unsaved: %q", r.Text())
	}
	e := c.CallTool(ctx, "edit", map[string]any{"path": "doc.txt", "edits": []any{map[string]any{"oldText": "first", "newText": "1st"}}})
	wantResult(t, "edit", e, false)
	want := bom + "1st 😀\r\nsecond\r\n"
	if got := readFile(t, filepath.Join(ws, "doc.txt")); got != want {
		t.Errorf("file %q, want %q", got, want)
	}
	// The edit is minimal ("fir" -> "1", the "st" kept) and starts at
	// 0:0: the BOM is not counted.
	edits := lspEdits(t, e.Details["edits"])
	if len(edits) != 1 || edits[0].Range.Start.Line != 0 || edits[0].Range.Start.Character != 0 {
		t.Errorf("edits %+v, want one edit starting at 0:0 (BOM not counted)", edits)
	}
	checkEdits(t, e.Details, disk, want, "utf-16")

	// The editor reloads the changed file (the BOM again left out); the
	// next edit needs no new read and keeps the BOM too.
	c.Conn.Notify(ctx, "textDocument/didChange", map[string]any{"textDocument": map[string]any{"uri": fileURI(filepath.Join(ws, "doc.txt")), "version": 2},
		"contentChanges": []any{map[string]any{"text": strings.TrimPrefix(want, bom)}}})
	wantResult(t, "second edit", c.CallTool(ctx, "edit", map[string]any{"path": "doc.txt", "edits": []any{map[string]any{"oldText": "second", "newText": "2nd"}}}), false)
	if got, want := readFile(t, filepath.Join(ws, "doc.txt")), bom+"1st 😀\r\n2nd\r\n"; got != want {
		t.Errorf("after the second edit: file %q, want %q", got, want)
	}
}

// A Latin-1 file's invalid UTF-8 reaches the client as U+FFFD and the
// connection survives (the default json/v2 codec would fail the reply).
func TestInvalidUTF8SurvivesTheWire(t *testing.T) {
	t.Parallel()
	c, ws, ctx := start(t, nil)
	if err := os.WriteFile(filepath.Join(ws, "latin1.txt"), []byte("caf\xe9 cr\xe8me\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := c.CallTool(ctx, "read", map[string]any{"path": "latin1.txt"})
	if r.IsError || !strings.Contains(r.Text(), "caf\uFFFD cr\uFFFDme") || !strings.Contains(r.Text(), "not valid UTF-8") {
		t.Fatalf("read latin1 = %q", r.Text())
	}
	if r := c.CallTool(ctx, "read", map[string]any{"path": "latin1.txt"}); r.IsError {
		t.Fatal("connection did not survive")
	}
}
