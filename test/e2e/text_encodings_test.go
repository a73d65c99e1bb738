package e2e

// Text document sync in UTF-16 ranges around emoji, CRLF and BOMs: what
// edit sends through workspace/applyEdit, and an open document equal to
// the disk but for the BOM. Incremental didChange and the rest of document
// sync: textsync_test.go; what read and grep show of encodings: the scripts.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/agentls/agentls/test/harness"
)

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
