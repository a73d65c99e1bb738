package finder

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
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
	entries, err := fs.ReadDir(fsys, fsPath(dir))
	if err != nil {
		return ListResult{}, fmt.Errorf("list %s: %w", fsPath(dir), err)
	}
	var res ListResult
	for i, e := range entries {
		if i%ctxCheckEvery == 0 {
			if err := ctx.Err(); err != nil {
				return ListResult{}, err
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
		if len(res.Entries) >= limit {
			res.Truncated = true
			continue
		}
		res.Entries = append(res.Entries, display(fsys, rel, e))
	}
	return res, nil
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
