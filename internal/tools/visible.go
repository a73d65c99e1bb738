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
func (e *Env) filterGrep(text string) (string, int) {
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
				f, rel := displayedFolder(e.FS, file)
				ok = f != nil && e.Visible.ReadAllowed(rel, filepath.Join(f.Root, filepath.FromSlash(rel)))
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

// workspaceFolders are the folders a search without a path covers: the
// workspace folders, not the read-only roots (spill files).
func workspaceFolders(fsys ops.FS) []*ops.Folder {
	var out []*ops.Folder
	for _, f := range fsys.Folders() {
		if !f.ReadOnly {
			out = append(out, f)
		}
	}
	return out
}

// searchFolders are the folders a search without a path walks: the
// workspace folders, less any inside another (its files are walked with
// the outer one; walking both would list them twice).
func searchFolders(fsys ops.FS) []*ops.Folder {
	all := workspaceFolders(fsys)
	var out []*ops.Folder
	for _, f := range all {
		nested := false
		for _, g := range all {
			if _, in := ops.Within(g.Root, f.Root); in && g != f && g.Root != f.Root {
				nested = true
				break
			}
		}
		if !nested {
			out = append(out, f)
		}
	}
	return out
}

// beyondFirst reports whether a search of the whole workspace must walk
// folders (the result of searchFolders) other than the first folder alone.
func beyondFirst(folders []*ops.Folder) bool {
	return len(folders) > 1 || len(folders) == 1 && !folders[0].Primary
}

// displayedFolder finds the folder of a path as a tool output names it
// (ops.Path.Display): relative to the first folder, or absolute inside
// another. It returns nil when no folder holds it.
func displayedFolder(fsys ops.FS, shown string) (*ops.Folder, string) {
	folders := fsys.Folders()
	if !path.IsAbs(shown) {
		for _, f := range folders {
			if f.Primary {
				return f, path.Clean(shown)
			}
		}
		return nil, ""
	}
	for _, f := range folders {
		if rel, ok := ops.Within(f.Root, filepath.FromSlash(shown)); ok {
			return f, rel
		}
	}
	return nil, ""
}
