package overlay

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/agentls/agentls/internal/textedit"
)

func rng(l1, c1, l2, c2 int) *textedit.Range {
	return &textedit.Range{Start: textedit.Position{Line: l1, Character: c1}, End: textedit.Position{Line: l2, Character: c2}}
}

func text(t *testing.T, s *Store, path string) string {
	t.Helper()
	d, ok := s.Get(path)
	if !ok {
		t.Fatalf("%s is not open", path)
	}
	return string(d.Text)
}

func TestChangesApplyInOrderWithUTF16Positions(t *testing.T) {
	s := New()
	s.Open("/w/a.go", "file:///w/a.go", 1, "x := \"😀\" + y\nsecond\n")
	// The emoji is two UTF-16 code units: "y" is at character 12 of line 0.
	// The second change's range is in the text after the first.
	err := s.Change("/w/a.go", 2, []Change{
		{Range: rng(0, 12, 0, 13), Text: "z"},
		{Range: rng(1, 0, 1, 6), Text: "2nd"},
		{Range: rng(2, 0, 2, 0), Text: "third\n"}, // at the very end
	})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := text(t, s, "/w/a.go"), "x := \"😀\" + z\n2nd\nthird\n"; got != want {
		t.Fatalf("text = %q, want %q", got, want)
	}
	if d, _ := s.Get("/w/a.go"); d.Version != 2 || d.URI != "file:///w/a.go" {
		t.Fatalf("doc = %+v, want version 2 and the editor's URI", d)
	}
}

func TestFullReplacementAndClose(t *testing.T) {
	s := New()
	s.Open("/w/a", "file:///w/a", 1, "old")
	if err := s.Change("/w/a", 2, []Change{{Text: "new"}}); err != nil {
		t.Fatal(err)
	}
	if got := text(t, s, "/w/a"); got != "new" {
		t.Fatalf("text = %q", got)
	}
	s.Close("/w/a")
	if _, ok := s.Get("/w/a"); ok {
		t.Fatal("closed document still open")
	}
}

func TestBadChangeDropsTheDocument(t *testing.T) {
	s := New()
	s.Open("/w/a", "file:///w/a", 1, "one line\n")
	before, _ := s.Get("/w/a")
	err := s.Change("/w/a", 2, []Change{{Range: rng(0, 0, 0, 3), Text: "ONE"}, {Range: rng(7, 0, 7, 1), Text: "x"}})
	if err == nil || !strings.Contains(err.Error(), "dropped") {
		t.Fatalf("err = %v, want an error saying the document is dropped", err)
	}
	if _, ok := s.Get("/w/a"); ok {
		t.Fatal("a document that lost sync is still served")
	}
	if string(before.Text) != "one line\n" {
		t.Fatalf("a Doc handed out earlier changed: %q", before.Text)
	}
	if err := s.Change("/w/b", 1, []Change{{Text: "x"}}); err == nil {
		t.Fatal("didChange of a document never opened succeeded")
	}
}

func TestWaitFor(t *testing.T) {
	s := New()
	s.Open("/w/a", "file:///w/a", 1, "old")
	go func() {
		time.Sleep(10 * time.Millisecond)
		s.Change("/w/a", 2, []Change{{Text: "new"}})
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if !s.WaitFor(ctx, "/w/a", func(b []byte) bool { return string(b) == "new" }) {
		t.Fatal("WaitFor did not see the change")
	}

	short, cancel2 := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel2()
	if s.WaitFor(short, "/w/a", func(b []byte) bool { return string(b) == "never" }) {
		t.Fatal("WaitFor satisfied by a text that never came")
	}

	go func() {
		time.Sleep(10 * time.Millisecond)
		s.Close("/w/a")
	}()
	if s.WaitFor(ctx, "/w/a", func(b []byte) bool { return false }) {
		t.Fatal("WaitFor satisfied by a closed document")
	}
	if ctx.Err() != nil {
		t.Fatal("WaitFor did not return when the document closed")
	}
}

func TestNilStoreIsEmpty(t *testing.T) {
	var s *Store
	if _, ok := s.Get("/w/a"); ok {
		t.Fatal("nil store has a document")
	}
	if s.WaitFor(context.Background(), "/w/a", func([]byte) bool { return true }) {
		t.Fatal("nil store satisfied WaitFor")
	}
}

// Notifications after didOpen find a document by its URI; closing, dropping
// or reopening under another URI forgets the old one.
func TestPathOf(t *testing.T) {
	s := New()
	s.Open("/w/a", "file:///w/a", 1, "x")
	if p, ok := s.PathOf("file:///w/a"); !ok || p != "/w/a" {
		t.Fatalf("PathOf = %q, %v", p, ok)
	}
	s.Open("/w/a", "file:///w/link/a", 2, "x")
	if _, ok := s.PathOf("file:///w/a"); ok {
		t.Fatal("a URI replaced by a reopen is still known")
	}
	s.Change("/w/a", 3, []Change{{Range: rng(9, 0, 9, 0), Text: "!"}}) // dropped
	if _, ok := s.PathOf("file:///w/link/a"); ok {
		t.Fatal("a dropped document's URI is still known")
	}
	s.Open("/w/b", "file:///w/b", 1, "y")
	s.Close("/w/b")
	if _, ok := s.PathOf("file:///w/b"); ok {
		t.Fatal("a closed document's URI is still known")
	}
}

// Positions at the very ends are inside the text: the end of a line before
// its CRLF, the end of a last line without a newline, and the empty line
// after a final newline.
func TestChangesAtTheEndsOfLines(t *testing.T) {
	for _, tc := range []struct {
		name, open string
		line, char int
		want       string
	}{
		{"end of a CRLF line", "ab\r\ncd\r\n", 0, 2, "abX\r\ncd\r\n"},
		{"end of text without final newline", "ab\r\n😀", 1, 2, "ab\r\n😀X"},
		{"line after the final newline", "ab\ncd\n", 2, 0, "ab\ncd\nX"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := New()
			s.Open("/w/a", "file:///w/a", 1, tc.open)
			if err := s.Change("/w/a", 2, []Change{{Range: rng(tc.line, tc.char, tc.line, tc.char), Text: "X"}}); err != nil {
				t.Fatal(err)
			}
			if got := text(t, s, "/w/a"); got != tc.want {
				t.Errorf("text = %q, want %q", got, tc.want)
			}
		})
	}
}
