package finder

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"slices"
	"strings"

	"github.com/agentls/agentls/internal/ignore"
)

// DefaultListLimit is how many entries List returns when limit is ≤ 0.
const DefaultListLimit = 500

// ErrNotDir is returned (wrapped) by List when dir is not a directory.
var ErrNotDir = errors.New("not a directory")

// ListResult is one directory's visible entries.
type ListResult struct {
	// Entries: "name", "dir/", "link@ -> target" (or "link@" when the
	// target cannot be read), sorted by name in byte order, at most limit.
	Entries []string
	// Total counts the visible entries (before the limit).
	Total int
	// IgnoredHidden counts entries hidden by ignore rules (.git excluded).
	IgnoredHidden int
	// Truncated: Total > len(Entries).
	Truncated bool
}

// List returns the entries of directory dir (slash path relative to the
// root of fsys, "" or "." = root): dotfiles included, .git omitted (not
// counted), entries m ignores hidden and counted (m nil: none hidden).
// visible, when set, is asked about each entry (its path relative to the
// root) before it is counted: one it refuses is left out of Entries and
// Total alike and takes no place in the limit.
func List(ctx context.Context, fsys fs.FS, m *ignore.Matcher, dir string, limit int, visible func(rel string) bool) (ListResult, error) {
	if limit <= 0 {
		limit = DefaultListLimit
	}
	dir, err := cleanDir(dir)
	if err != nil {
		return ListResult{}, fmt.Errorf("list: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return ListResult{}, err
	}
	info, err := fs.Stat(fsys, fsPath(dir))
	if err != nil {
		return ListResult{}, fmt.Errorf("list %s: %w", fsPath(dir), err)
	}
	if !info.IsDir() {
		return ListResult{}, fmt.Errorf("list %s: %w", fsPath(dir), ErrNotDir)
	}
	var res ListResult
	// The first limit names in byte order are kept as the directory is
	// read in batches, so a directory of 100,000 entries costs the memory
	// of limit of them, not of all (fs.ReadDir reads and sorts all).
	kept := &firstNames{limit: limit}
	seen := 0
	err = readDir(fsys, fsPath(dir), func(batch []fs.DirEntry) error {
		for _, e := range batch {
			if seen++; seen%ctxCheckEvery == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			name := e.Name()
			if name == ".git" {
				continue
			}
			rel := join(dir, name)
			if m != nil && m.Ignored(rel, e.IsDir()) {
				res.IgnoredHidden++
				continue
			}
			if visible != nil && !visible(rel) {
				continue
			}
			res.Total++
			kept.add(e)
		}
		return nil
	})
	if err != nil {
		if ctx.Err() != nil {
			return ListResult{}, ctx.Err()
		}
		return ListResult{}, fmt.Errorf("list %s: %w", fsPath(dir), err)
	}
	for _, e := range kept.sorted() {
		res.Entries = append(res.Entries, display(fsys, join(dir, e.Name()), e))
	}
	res.Truncated = res.Total > len(res.Entries)
	return res, nil
}

// readDirBatch is how many entries readDir hands over at a time.
const readDirBatch = 1024

// readDir calls f with the entries of name, in batches in no particular
// order; an fs.FS whose directories cannot be read in parts is read whole.
func readDir(fsys fs.FS, name string, f func([]fs.DirEntry) error) error {
	d, err := fsys.Open(name)
	if err != nil {
		return err
	}
	defer d.Close()
	rd, ok := d.(fs.ReadDirFile)
	if !ok {
		entries, err := fs.ReadDir(fsys, name)
		if err != nil {
			return err
		}
		return f(entries)
	}
	for {
		batch, err := rd.ReadDir(readDirBatch)
		if len(batch) > 0 {
			if ferr := f(batch); ferr != nil {
				return ferr
			}
		}
		if errors.Is(err, io.EOF) || err == nil && len(batch) == 0 {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// firstNames keeps the limit entries with the smallest names: a max-heap
// by name, whose top is the one to drop when a smaller name comes.
type firstNames struct {
	limit int
	es    []fs.DirEntry
}

func (h *firstNames) Len() int           { return len(h.es) }
func (h *firstNames) Less(i, j int) bool { return h.es[i].Name() > h.es[j].Name() }
func (h *firstNames) Swap(i, j int)      { h.es[i], h.es[j] = h.es[j], h.es[i] }
func (h *firstNames) Push(x any)         { h.es = append(h.es, x.(fs.DirEntry)) }
func (h *firstNames) Pop() any {
	e := h.es[len(h.es)-1]
	h.es = h.es[:len(h.es)-1]
	return e
}

func (h *firstNames) add(e fs.DirEntry) {
	switch {
	case len(h.es) < h.limit:
		heap.Push(h, e)
	case e.Name() < h.es[0].Name():
		h.es[0] = e
		heap.Fix(h, 0)
	}
}

// sorted is the kept entries by name, in byte order.
func (h *firstNames) sorted() []fs.DirEntry {
	slices.SortFunc(h.es, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return h.es
}

// display formats one entry: "dir/", "link@ -> target", or the name.
func display(fsys fs.FS, rel string, e fs.DirEntry) string {
	name := e.Name()
	switch {
	case e.IsDir():
		return name + "/"
	case e.Type()&fs.ModeSymlink != 0:
		target, err := fs.ReadLink(fsys, rel)
		if err != nil {
			return name + "@"
		}
		return name + "@ -> " + target
	}
	return name
}

// ctxCheckEvery is how many entries pass between context checks.
const ctxCheckEvery = 256

// cleanDir normalizes a directory argument to "" (root) or a clean slash
// path, refusing paths that leave the root.
func cleanDir(dir string) (string, error) {
	d := strings.TrimLeft(dir, "/")
	if d == "" {
		return "", nil
	}
	d = path.Clean(d)
	if d == "." {
		return "", nil
	}
	if !fs.ValidPath(d) {
		return "", fmt.Errorf("path %q leaves the workspace folder", dir)
	}
	return d, nil
}

func fsPath(rel string) string {
	if rel == "" {
		return "."
	}
	return rel
}

func join(dir, name string) string {
	if dir == "" {
		return name
	}
	return dir + "/" + name
}
