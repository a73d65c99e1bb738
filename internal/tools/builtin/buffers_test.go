package builtin

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentls/agentls/internal/editguard"
	"github.com/agentls/agentls/internal/ops"
	"github.com/agentls/agentls/internal/overlay"
	"github.com/agentls/agentls/internal/textedit"
	"github.com/agentls/agentls/internal/tools"
)

// fakeEditor plays the editor's side of workspace/applyEdit: it applies the
// edits to the document it has and reports the new text with a didChange,
// as VS Code and Neovim do.
type fakeEditor struct {
	docs   *overlay.Store
	path   string
	refuse string // non-empty: answer applied=false with this reason
	save   bool   // save the document after applying, as editors do for a clean one
	got    []overlay.Doc
}

func (f *fakeEditor) ApplyEdit(ctx context.Context, label string, doc overlay.Doc, edits []textedit.TextEdit) (bool, string, error) {
	f.got = append(f.got, doc)
	if f.refuse != "" {
		return false, f.refuse, nil
	}
	next, err := textedit.ApplyTextEdits(doc.Text, edits)
	if err != nil {
		return false, "", errors.New("bad edits: " + err.Error())
	}
	if f.save {
		if err := os.WriteFile(f.path, next, 0o644); err != nil {
			return false, "", err
		}
	}
	go f.docs.Change(f.path, doc.Version+1, []overlay.Change{{Text: string(next)}})
	return true, "", nil
}

type bufferEnv struct {
	x    *tools.Executor
	dir  string
	docs *overlay.Store
	ed   *fakeEditor
	path string // real path of a.go
}

// newBufferEnv is a workspace with a.go on disk ("disk") and open in the
// editor ("unsaved"); withEditor says whether the client takes edits.
func newBufferEnv(t *testing.T, disk, unsaved string, withEditor bool) *bufferEnv {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.go"), []byte(disk), 0o644); err != nil {
		t.Fatal(err)
	}
	fsys, err := ops.NewLocal([]ops.FolderSpec{{Path: dir}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fsys.Close() })
	p, err := fsys.Resolve("a.go")
	if err != nil {
		t.Fatal(err)
	}
	docs := overlay.New()
	docs.Open(p.OS(), "file://"+p.OS(), 7, unsaved)
	guard := editguard.New(fsys)
	env := &tools.Env{FS: fsys, Guard: guard, Buffers: docs}
	e := &bufferEnv{dir: dir, docs: docs, path: p.OS()}
	if withEditor {
		e.ed = &fakeEditor{docs: docs, path: p.OS()}
		env.Editor = e.ed
		guard.UseBuffers(docs)
	}
	reg := tools.NewRegistry()
	reg.MustRegister(Builtins(tools.DefaultLimits())...)
	e.x = &tools.Executor{Registry: reg, Env: env}
	return e
}

func (e *bufferEnv) disk(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(e.dir, "a.go"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func (e *bufferEnv) doc(t *testing.T) string {
	t.Helper()
	d, ok := e.docs.Get(e.path)
	if !ok {
		t.Fatal("a.go is not open")
	}
	return string(d.Text)
}

const (
	diskText    = "package a\n\nfunc A() {}\n"
	unsavedText = "package a\n\nfunc A() {}\n\nfunc B() {} // unsaved\n"
)

func TestReadShowsTheOpenDocument(t *testing.T) {
	e := newBufferEnv(t, diskText, unsavedText, false)
	r := call(t, e.x, "read", `{"path":"a.go"}`)
	if r.IsError || !strings.Contains(r.TextOf(), "func B() {} // unsaved") {
		t.Fatalf("read = %q, want the editor's unsaved text", r.TextOf())
	}
	if !strings.Contains(r.TextOf(), "unsaved text from the editor") {
		t.Fatalf("read = %q, want a note that the disk differs", r.TextOf())
	}
	if v := r.Details["editorVersion"]; v != int32(7) {
		t.Fatalf("details.editorVersion = %v, want 7", v)
	}

	same := newBufferEnv(t, diskText, diskText, false)
	if r := call(t, same.x, "read", `{"path":"a.go"}`); strings.Contains(r.TextOf(), "unsaved") {
		t.Fatalf("a document equal to the disk is called unsaved: %q", r.TextOf())
	}
}

func TestEditOfAnOpenDocumentGoesToTheEditor(t *testing.T) {
	e := newBufferEnv(t, diskText, unsavedText, true)
	call(t, e.x, "read", `{"path":"a.go"}`)
	r := call(t, e.x, "edit", `{"path":"a.go","oldText":"func B() {}","newText":"func B() int { return 1 }"}`)
	if r.IsError || !strings.Contains(r.TextOf(), "in the editor (unsaved") || r.Details["saved"] != false {
		t.Fatalf("edit = %q, want success in the editor, unsaved", r.TextOf())
	}
	if len(e.ed.got) != 1 || e.ed.got[0].Version != 7 || !strings.HasPrefix(e.ed.got[0].URI, "file://") {
		t.Fatalf("editor got %+v, want one edit of version 7 by the editor's URI", e.ed.got)
	}
	if got := e.doc(t); got != strings.Replace(unsavedText, "func B() {}", "func B() int { return 1 }", 1) {
		t.Fatalf("document = %q", got)
	}
	if got := e.disk(t); got != diskText {
		t.Fatalf("the disk changed: %q", got)
	}
	if r.Details["inEditor"] != true || r.Details["unifiedDiff"] == nil {
		t.Fatalf("details = %v, want inEditor and a diff", r.Details)
	}
	// A chain of edits needs no re-read.
	r = call(t, e.x, "edit", `{"path":"a.go","oldText":"return 1","newText":"return 2"}`)
	if r.IsError || !strings.Contains(e.doc(t), "return 2") {
		t.Fatalf("second edit = %q, document %q", r.TextOf(), e.doc(t))
	}
	// write replaces the whole document, also in the editor.
	r = call(t, e.x, "write", `{"path":"a.go","content":"package a\n"}`)
	if r.IsError || e.doc(t) != "package a\n" || e.disk(t) != diskText {
		t.Fatalf("write = %q, document %q, disk %q", r.TextOf(), e.doc(t), e.disk(t))
	}
}

func TestEditOfAnOpenDocumentRefused(t *testing.T) {
	t.Run("the user typed since the read", func(t *testing.T) {
		e := newBufferEnv(t, diskText, unsavedText, true)
		call(t, e.x, "read", `{"path":"a.go"}`)
		e.docs.Change(e.path, 8, []overlay.Change{{Text: unsavedText + "// more typing\n"}})
		r := call(t, e.x, "edit", `{"path":"a.go","oldText":"func A() {}","newText":"func A() {}\n"}`)
		if !r.IsError || !strings.Contains(r.TextOf(), "changed in the editor since you read it") || len(e.ed.got) != 0 {
			t.Fatalf("edit = %q (editor got %d edits), want a stale error and nothing sent", r.TextOf(), len(e.ed.got))
		}
	})
	t.Run("the editor refuses", func(t *testing.T) {
		e := newBufferEnv(t, diskText, unsavedText, true)
		e.ed.refuse = "document version mismatch"
		call(t, e.x, "read", `{"path":"a.go"}`)
		r := call(t, e.x, "edit", `{"path":"a.go","oldText":"func A() {}","newText":"func A() { panic(1) }"}`)
		if !r.IsError || !strings.Contains(r.TextOf(), "document version mismatch") || e.doc(t) != unsavedText || e.disk(t) != diskText {
			t.Fatalf("edit = %q; want the editor's reason and nothing changed", r.TextOf())
		}
	})
	t.Run("unsaved changes and an editor that cannot take edits", func(t *testing.T) {
		e := newBufferEnv(t, diskText, unsavedText, false)
		call(t, e.x, "read", `{"path":"a.go"}`)
		for _, args := range []string{
			`{"path":"a.go","oldText":"func A() {}","newText":"func A() { panic(1) }"}`,
		} {
			r := call(t, e.x, "edit", args)
			if !r.IsError || !strings.Contains(r.TextOf(), "unsaved changes") || e.disk(t) != diskText {
				t.Fatalf("edit = %q, disk %q; want a refusal naming the unsaved changes", r.TextOf(), e.disk(t))
			}
		}
		r := call(t, e.x, "write", `{"path":"a.go","content":"x\n"}`)
		if !r.IsError || !strings.Contains(r.TextOf(), "unsaved changes") || e.disk(t) != diskText {
			t.Fatalf("write = %q; want a refusal naming the unsaved changes", r.TextOf())
		}
	})
}

// A client that syncs documents but cannot take edits still gets edits on
// disk while the open document has no unsaved changes.
func TestEditOfACleanDocumentWithoutApplyEdit(t *testing.T) {
	e := newBufferEnv(t, diskText, diskText, false)
	call(t, e.x, "read", `{"path":"a.go"}`)
	r := call(t, e.x, "edit", `{"path":"a.go","oldText":"func A() {}","newText":"func A() { panic(1) }"}`)
	if r.IsError || strings.Contains(r.TextOf(), "in the editor") || !strings.Contains(e.disk(t), "panic(1)") {
		t.Fatalf("edit = %q, disk %q; want the edit on disk", r.TextOf(), e.disk(t))
	}
}

// An editor that saves the document it changed (the clients do for a
// document the edit found clean): the result says the change is saved.
func TestEditInTheEditorThatSaves(t *testing.T) {
	e := newBufferEnv(t, diskText, diskText, true)
	e.ed.save = true
	call(t, e.x, "read", `{"path":"a.go"}`)
	r := call(t, e.x, "edit", `{"path":"a.go","oldText":"func A() {}","newText":"func A() { panic(1) }"}`)
	if r.IsError || !strings.Contains(r.TextOf(), "in the editor (saved)") || r.Details["saved"] != true {
		t.Fatalf("edit = %q, details %v; want it saved", r.TextOf(), r.Details)
	}
	if !strings.Contains(e.disk(t), "panic(1)") {
		t.Fatalf("disk = %q", e.disk(t))
	}
}
