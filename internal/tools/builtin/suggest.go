package builtin

import (
	"encoding/json"
	"io/fs"
	"path"
	"sort"
	"strings"

	"github.com/agentls/agentls/internal/ignore"
	"github.com/agentls/agentls/internal/ops"
	"github.com/agentls/agentls/internal/tools"
)

// notFound is read's answer for a missing file: up to three similarly
// named files, then how to look for it.
func notFound(e *tools.Env, p ops.Path) tools.Result {
	return tools.ErrorIn(e.Names, "%s not found.%s Use {{find}} to locate the file by name (e.g. {{find}} %s) or {{ls}} to look at the directory.",
		p.Display(), didYouMean(e, p, suggestFiles), exampleJSON("pattern", "*"+path.Ext(p.Rel)))
}

// exampleJSON is an argument object for a hint from key, value pairs (in
// order), always valid JSON whatever the values hold (a quote, a backslash).
func exampleJSON(kv ...string) string {
	var parts []string
	for i := 0; i+1 < len(kv); i += 2 {
		k, _ := json.Marshal(kv[i])
		v, _ := json.Marshal(kv[i+1])
		parts = append(parts, string(k)+": "+string(v))
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// suggestKind says which entries may be suggested for a missing path.
type suggestKind int

const (
	suggestFiles suggestKind = iota // read, edit: a file was meant
	suggestDirs                     // ls, find, bash's cwd: a directory was meant
	suggestAny                      // grep's path: either
)

// didYouMean is " Did you mean: a, b?" with up to maxSuggestions paths
// whose names are near p's, or "" when none is. A mistyped name is the
// usual cause of a missing path, and the model otherwise guesses again
// (or, for edit, may write a new file beside the one it meant). Paths the
// permission rules do not let the model list are never named.
func didYouMean(e *tools.Env, p ops.Path, kind suggestKind) string {
	if s := suggest(e, p, kind); len(s) > 0 {
		return " Did you mean: " + strings.Join(s, ", ") + "?"
	}
	return ""
}

// suggestWalkLimit bounds the entries looked at, over all folders.
const suggestWalkLimit = 20000

// suggest ranks the entries of every workspace folder, p's first, by how
// near their names are to p's; the same directory as p ranks first. Each
// is written as it is to be sent back (ops.Path.Display).
func suggest(e *tools.Env, p ops.Path, kind suggestKind) []string {
	base := strings.ToLower(path.Base(p.Rel))
	type cand struct {
		path  string
		score int
	}
	var cands []cand
	seen := 0
	folders := []*ops.Folder{p.Folder}
	for _, f := range e.FS.Folders() {
		if f != p.Folder {
			folders = append(folders, f)
		}
	}
	for _, f := range folders {
		fs.WalkDir(e.FS.FolderFS(f), ".", func(rel string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			if seen++; seen > suggestWalkLimit {
				return fs.SkipAll
			}
			if d.IsDir() {
				if n := d.Name(); n == ".git" || n == "node_modules" || strings.Count(rel, "/") >= ignore.MaxWalkDepth {
					return fs.SkipDir // deeper costs the square of the depth
				}
				if kind == suggestFiles || rel == "." {
					return nil
				}
			} else if kind == suggestDirs {
				return nil
			}
			if f == p.Folder && rel == p.Rel {
				return nil
			}
			// A path that is the requested one with leading directories
			// too many (src/net/http/server.go for net/http/server.go) or
			// too few is almost surely the file meant: it comes first.
			if shown := (ops.Path{Folder: f, Rel: rel}).Display(); rel != "." && (strings.HasSuffix(p.Rel, "/"+rel) || strings.HasSuffix(rel, "/"+p.Rel)) && listAllowed(e, f, rel) {
				cands = append(cands, cand{shown, -1})
				return nil
			}
			name := strings.ToLower(d.Name())
			score := tools.EditDistance(base, name)
			if strings.TrimSuffix(name, path.Ext(name)) == strings.TrimSuffix(base, path.Ext(base)) {
				score = min(score, 1)
			}
			if score > max(2, len(base)/3) || !listAllowed(e, f, rel) {
				return nil
			}
			if f != p.Folder || path.Dir(rel) != path.Dir(p.Rel) {
				score++ // prefer candidates in the same directory
			}
			cands = append(cands, cand{ops.Path{Folder: f, Rel: rel}.Display(), score})
			return nil
		})
	}
	sort.Slice(cands, func(i, j int) bool {
		if cands[i].score != cands[j].score {
			return cands[i].score < cands[j].score
		}
		return cands[i].path < cands[j].path
	})
	var out []string
	for i := 0; i < len(cands) && i < maxSuggestions; i++ {
		out = append(out, cands[i].path)
	}
	return out
}
