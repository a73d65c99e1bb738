package overlay

import (
	"context"
	"fmt"
	"sync"

	"github.com/agentls/agentls/internal/textedit"
)

// Doc is one open document.
type Doc struct {
	// URI is the document's URI exactly as the editor sent it: edits sent
	// back must name the document the same way.
	URI     string
	Version int32
	// Text is the document's content. A change replaces the slice, never
	// writes into it, so a Doc stays valid after the store moves on; callers
	// must not modify it either.
	Text []byte
}

// Change is one LSP TextDocumentContentChangeEvent: Range nil replaces the
// whole text; otherwise Range (UTF-16 positions in the text as it is after
// the changes before this one) is replaced by Text.
type Change struct {
	Range *textedit.Range
	Text  string
}

// Store is the set of open documents, keyed by the file's real path (the
// key the edit guard uses). The zero value is not usable; a nil *Store is
// an empty store.
type Store struct {
	mu   sync.Mutex
	docs map[string]*Doc
	// paths maps an open document's URI to its key, so a didChange (every
	// keystroke) needs no path resolution.
	paths map[string]string
	// changed is closed and replaced at every change: WaitFor's broadcast.
	changed chan struct{}
}

// New returns an empty store.
func New() *Store {
	return &Store{docs: map[string]*Doc{}, paths: map[string]string{}, changed: make(chan struct{})}
}

// Open records that the editor opened path with text (didOpen). Opening an
// open document replaces it.
func (s *Store) Open(path, uri string, version int32, text string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if old := s.docs[path]; old != nil {
		delete(s.paths, old.URI)
	}
	s.docs[path] = &Doc{URI: uri, Version: version, Text: []byte(text)}
	s.paths[uri] = path
	s.notifyLocked()
}

// Change applies didChange's content changes in order. On an error the
// document is dropped, not left half-changed: a text that may differ from
// the editor's must never be shown or edited; the file on disk is used
// again until the editor opens the document anew.
func (s *Store) Change(path string, version int32, changes []Change) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	d := s.docs[path]
	if d == nil {
		return fmt.Errorf("didChange for a document that is not open: %s", path)
	}
	text := d.Text
	for i, c := range changes {
		if c.Range == nil {
			text = []byte(c.Text)
			continue
		}
		next, err := textedit.ApplyTextEdits(text, []textedit.TextEdit{{Range: *c.Range, NewText: c.Text}})
		if err != nil {
			s.dropLocked(path)
			return fmt.Errorf("change %d of %s (version %d): %w; the document is dropped until it is opened again", i, path, version, err)
		}
		text = next
	}
	s.docs[path] = &Doc{URI: d.URI, Version: version, Text: text}
	s.notifyLocked()
	return nil
}

// Close forgets path (didClose): the file on disk is the truth again.
func (s *Store) Close(path string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.dropLocked(path)
}

func (s *Store) dropLocked(path string) {
	if d := s.docs[path]; d != nil {
		delete(s.paths, d.URI)
		delete(s.docs, path)
		s.notifyLocked()
	}
}

// PathOf returns the key of the open document with this URI.
func (s *Store) PathOf(uri string) (string, bool) {
	if s == nil {
		return "", false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.paths[uri]
	return p, ok
}

// Get returns the open document at path.
func (s *Store) Get(path string) (Doc, bool) {
	if s == nil {
		return Doc{}, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	d := s.docs[path]
	if d == nil {
		return Doc{}, false
	}
	return *d, true
}

// Text returns the text of the open document at path (the edit guard's
// view of the store).
func (s *Store) Text(path string) ([]byte, bool) {
	d, ok := s.Get(path)
	return d.Text, ok
}

// WaitFor waits until the document at path is closed or its text satisfies
// done, or ctx ends; it reports whether done was satisfied. An edit sent to
// the editor waits here for the didChange that reports it, so the next
// edit checks against the text the editor now has.
func (s *Store) WaitFor(ctx context.Context, path string, done func(text []byte) bool) bool {
	if s == nil {
		return false
	}
	for {
		s.mu.Lock()
		d := s.docs[path]
		ch := s.changed
		s.mu.Unlock()
		if d == nil {
			return false
		}
		if done(d.Text) {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-ch:
		}
	}
}

func (s *Store) notifyLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}
