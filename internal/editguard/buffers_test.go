package editguard

import (
	"strings"
	"testing"

	"github.com/agentls/agentls/internal/overlay"
)

// With buffers in use, an open document's text is what a stamp must match;
// the file on disk decides again once the document is closed.
func TestCheckOpenDocument(t *testing.T) {
	e := newEnv(t, map[string]string{"a.txt": orig})
	docs := overlay.New()
	e.g.UseBuffers(docs)
	p := e.path("a.txt")
	unsaved := "one\nTWO (unsaved)\nthree\n"
	docs.Open(p.OS(), "file://"+p.OS(), 1, unsaved)

	if _, err := e.g.Check(p); err == nil || !strings.Contains(err.Error(), "read a.txt first") {
		t.Fatalf("no stamp: err = %v, want read first", err)
	}
	e.g.RecordBufferRead(p, []byte(unsaved))
	got, err := e.g.CheckRead(p)
	if err != nil || string(got) != unsaved {
		t.Fatalf("CheckRead = %q, %v; want the document's text", got, err)
	}

	// The disk changing (the editor saving, another process) does not block
	// an edit of the unchanged document.
	e.external("a.txt", "something else\n")
	e.g.Observe(p, KindChanged)
	if _, err := e.g.CheckRead(p); err != nil {
		t.Fatalf("disk change blocked an edit of the open document: %v", err)
	}

	// The user typing in the document does.
	if err := docs.Change(p.OS(), 2, []overlay.Change{{Text: "one\nTWO (unsaved)\nthree\nfour\n"}}); err != nil {
		t.Fatal(err)
	}
	_, err = e.g.CheckRead(p)
	if err == nil || !strings.Contains(err.Error(), "changed in the editor since you read it") || !strings.Contains(err.Error(), "line 4 is new") {
		t.Fatalf("typed-in document: err = %v, want a stale error naming line 4", err)
	}

	// An edit applied in the editor refreshes the stamp.
	e.g.WroteBuffer(p, []byte("one\nTWO (unsaved)\nthree\nfour\n"))
	if _, err := e.g.CheckRead(p); err != nil {
		t.Fatalf("after WroteBuffer: %v", err)
	}

	// Closed without saving: the disk holds other content than was read.
	docs.Close(p.OS())
	if _, err := e.g.CheckRead(p); err == nil || !strings.Contains(err.Error(), "changed since you read it") {
		t.Fatalf("closed unsaved: err = %v, want stale", err)
	}
	// Saved, then closed: the disk holds what was read.
	e.external("a.txt", "one\nTWO (unsaved)\nthree\nfour\n")
	if got, err := e.g.CheckRead(p); err != nil || !strings.Contains(string(got), "four") {
		t.Fatalf("closed after save: %q, %v; want the saved text", got, err)
	}
}
