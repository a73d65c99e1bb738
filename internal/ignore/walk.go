package ignore

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
)

// WalkOptions tunes Walk.
type WalkOptions struct {
	IncludeIgnored bool // visit ignored entries too (.git is still never visited)
	SkipHidden     bool // skip dot-entries (default: hidden entries ARE visited)
}

// ctxCheckEvery is how many entries Walk visits between context checks
// inside one large directory (it also checks once per directory).
const ctxCheckEvery = 256

// Walk visits rel (a directory, or a single file) and everything below,
// skipping ignored entries and never entering .git; symlinks are reported
// (d.Type()&fs.ModeSymlink) but never followed. fn receives the slash path
// relative to the folder root ("." for the root itself).
//
// Order: byte order of the full paths (a directory's name sorts as if it
// ended in "/"), so a walk that stops early has seen exactly the first
// paths in sorted order. fn is called for rel itself first. If rel is
// ignored (and opts.IncludeIgnored is false), nothing is visited.
//
// Returning fs.SkipDir from fn skips a directory (or, for a file, the rest
// of its directory), fs.SkipAll ends the walk without error, any other error
// ends it with that error. ctx cancellation stops the walk with ctx.Err().
// An unreadable directory below rel is skipped; an unreadable rel is an
// error.
func (m *Matcher) Walk(ctx context.Context, rel string, opts WalkOptions, fn func(rel string, d fs.DirEntry) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	clean, ok := cleanRel(rel)
	if !ok {
		return fmt.Errorf("walk %q: path leaves the workspace folder", rel)
	}
	if hasGitComponent(clean) {
		return nil
	}
	info, err := fs.Lstat(m.fsys, fsPath(clean))
	if err != nil {
		return fmt.Errorf("walk %q: %w", rel, err)
	}
	isDir := info.IsDir()
	var parent *dirState
	if !opts.IncludeIgnored && clean != "" {
		parent = m.dir(parentOf(clean))
		if parent.ignores(clean, isDir) {
			return nil
		}
	}
	err = fn(fsPath(clean), fs.FileInfoToDirEntry(info))
	if !isDir || err != nil {
		if errors.Is(err, fs.SkipDir) || errors.Is(err, fs.SkipAll) {
			return nil
		}
		return err
	}
	w := walker{m: m, ctx: ctx, opts: opts, fn: fn}
	err = w.dir(clean, parent, true)
	if errors.Is(err, fs.SkipAll) {
		return nil
	}
	return err
}

type walker struct {
	m     *Matcher
	ctx   context.Context
	opts  WalkOptions
	fn    func(rel string, d fs.DirEntry) error
	count int
}

// dir walks the entries of directory dir, which is not ignored; parent is
// the state of its parent (nil for the root or when ignore rules are off).
func (w *walker) dir(dir string, parent *dirState, top bool) error {
	if err := w.ctx.Err(); err != nil {
		return err
	}
	entries, err := fs.ReadDir(w.m.fsys, fsPath(dir))
	if err != nil {
		if top {
			return fmt.Errorf("walk %q: %w", fsPath(dir), err)
		}
		return nil // vanished or unreadable below the start: skip, as rg does
	}
	var state *dirState
	if !w.opts.IncludeIgnored {
		state = w.m.dirFromListing(dir, parent, entries)
	}
	slices.SortFunc(entries, comparePathOrder)
	for _, e := range entries {
		name := e.Name()
		if name == gitDirName || (w.opts.SkipHidden && name[0] == '.') {
			continue
		}
		if w.count++; w.count%ctxCheckEvery == 0 {
			if err := w.ctx.Err(); err != nil {
				return err
			}
		}
		p := join(dir, name)
		isDir := e.IsDir()
		if state != nil && state.ignores(p, isDir) {
			continue
		}
		err := w.fn(p, e)
		if !isDir {
			if errors.Is(err, fs.SkipDir) {
				return nil
			}
			if err != nil {
				return err
			}
			continue
		}
		if errors.Is(err, fs.SkipDir) {
			continue
		}
		if err != nil {
			return err
		}
		if err := w.dir(p, state, false); err != nil {
			return err
		}
	}
	return nil
}

// dirFromListing returns the cached state of dir when its rule files are
// unchanged, or loads it from the listing.
func (m *Matcher) dirFromListing(dir string, parent *dirState, entries []fs.DirEntry) *dirState {
	s, gen := m.cached(dir)
	if s != nil && !s.ignored && m.fresh(s, entries) {
		return s
	}
	if s != nil {
		m.Invalidate(dir)
		_, gen = m.cached(dir)
	}
	if parent == nil && dir != "" {
		parent = m.dir(parentOf(dir))
	}
	return m.store(dir, m.load(dir, parent, entries), gen)
}

// fresh reports whether s still describes its directory's rule files, judged by the
// listing plus a stat of each rule file (size and mtime).
func (m *Matcher) fresh(s *dirState, entries []fs.DirEntry) bool {
	var seen [kindCount]fs.DirEntry
	gitEntry := false
	for _, e := range entries {
		name := e.Name()
		if name == "" || name[0] != '.' {
			continue
		}
		for k := range kindExclude {
			if name == k.fileName() && e.Type().IsRegular() {
				seen[k] = e
			}
		}
		if name == gitDirName {
			gitEntry = true
		}
	}
	if gitEntry != s.gitEntry {
		return false
	}
	for k := range kindExclude {
		own := s.own[k]
		if (seen[k] == nil) != (own == nil) {
			return false
		}
		if own == nil {
			continue
		}
		info, err := seen[k].Info()
		if err != nil || info.Size() != own.size || !info.ModTime().Equal(own.mod) {
			return false
		}
	}
	if s.excludeAt != "" {
		own := s.own[kindExclude]
		info, err := fs.Stat(m.fsys, s.excludeAt)
		if (err == nil) != (own != nil) {
			return false
		}
		if own != nil && (info.Size() != own.size || !info.ModTime().Equal(own.mod)) {
			return false
		}
	}
	return true
}

// comparePathOrder orders entries by name, a directory's name as if it
// ended in "/", which makes a depth-first walk visit full paths in byte
// order ("a.txt" < "a/b" because '.' < '/').
func comparePathOrder(a, b fs.DirEntry) int {
	an, bn := a.Name(), b.Name()
	n := min(len(an), len(bn))
	if c := cmp.Compare(an[:n], bn[:n]); c != 0 {
		return c
	}
	return cmp.Compare(nextByte(an, n, a.IsDir()), nextByte(bn, n, b.IsDir()))
}

// nextByte is the byte at i of name+"/" (dirs) or name, -1 past the end.
func nextByte(name string, i int, isDir bool) int {
	switch {
	case i < len(name):
		return int(name[i])
	case i == len(name) && isDir:
		return '/'
	}
	return -1
}
