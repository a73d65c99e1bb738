package tools

import (
	"path"
	"path/filepath"
	"strings"

	"github.com/agentls/agentls/internal/ops"
)

// Results never show files the permission rules forbid reading: a denied
// file does not appear in a listing or a match.

func (e *Env) listAllowed(f *ops.Folder, rel string) bool {
	if e.Visible == nil {
		return true
	}
	return e.Visible.ListAllowed(rel, filepath.Join(f.Root, filepath.FromSlash(rel)))
}

// entryName is the file name of an ls entry ("d/", "l@ -> t", "l@").
func entryName(e string) string {
	if i := strings.Index(e, "@ -> "); i >= 0 {
		return e[:i]
	}
	e = strings.TrimSuffix(e, "/")
	return strings.TrimSuffix(e, "@")
}

// filterGrep drops output lines of files whose reading is not allowed and
// returns how many files were hidden.
func (e *Env) filterGrep(f *ops.Folder, text string) (string, int) {
	if e.Visible == nil {
		return text, 0
	}
	lines := strings.Split(text, "\n")
	out := lines[:0]
	verdict := map[string]bool{}
	hidden := 0
	for _, l := range lines {
		if m := grepLine().FindStringSubmatch(l); m != nil && m[2] == m[4] {
			file := m[1]
			ok, seen := verdict[file]
			if !seen {
				ok = e.Visible.ReadAllowed(file, filepath.Join(f.Root, filepath.FromSlash(path.Clean(file))))
				verdict[file] = ok
				if !ok {
					hidden++
				}
			}
			if !ok {
				continue
			}
		}
		out = append(out, l)
	}
	if hidden == 0 {
		return text, 0
	}
	// Drop group separators left dangling by removed lines.
	var clean []string
	for i, l := range out {
		if l == "--" && (i == 0 || i == len(out)-1 || out[i-1] == "--" || len(clean) == 0) {
			continue
		}
		clean = append(clean, l)
	}
	return strings.Join(clean, "\n"), hidden
}

// hideDeniedTarget keeps a symlink entry ("l@ -> t") in dir from naming a
// target inside the folder that a Read deny rule hides from listings.
func (e *Env) hideDeniedTarget(f *ops.Folder, dir, entry string) string {
	i := strings.Index(entry, "@ -> ")
	if i < 0 || e.Visible == nil {
		return entry
	}
	target := entry[i+len("@ -> "):]
	rel := path.Join(dir, target)
	if path.IsAbs(target) {
		r, err := filepath.Rel(f.Root, filepath.FromSlash(target))
		if err != nil {
			return entry
		}
		rel = filepath.ToSlash(r)
	}
	if rel == ".." || strings.HasPrefix(rel, "../") || e.listAllowed(f, rel) {
		return entry
	}
	return entry[:i] + "@ -> (target hidden by a permission rule)"
}
