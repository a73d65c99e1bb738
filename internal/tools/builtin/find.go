package builtin

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"
	"time"

	"github.com/agentls/agentls/internal/finder"
	"github.com/agentls/agentls/internal/ignore"
	"github.com/agentls/agentls/internal/ops"
	"github.com/agentls/agentls/internal/tools"
)

// FindMaxLimit is the most paths one find call may ask for.
const FindMaxLimit = 10000

// findMax is l's per-call maximum: a configured default above
// FindMaxLimit raises the maximum with it.
func findMax(l tools.Limits) int { return max(FindMaxLimit, l.FindPaths) }

type findInput struct {
	Pattern string `json:"pattern" jsonschema:"glob: *.ts (a name at any depth), src/**/*.spec.ts, **/parent/child/*, {a,b}"`
	Path    string `json:"path,omitzero" jsonschema:"directory to search, relative to the workspace root (default: the root)"`
	Limit   int    `json:"limit,omitzero" jsonschema:"maximum number of paths"`
	// IncludeIgnored lists files ignore rules hide (.git still never).
	IncludeIgnored bool `json:"includeIgnored,omitzero" jsonschema:"also list files ignored by .gitignore/.ignore/.agentlsignore (.git is never searched)"`
}

func findDescription(l tools.Limits) string {
	return fmt.Sprintf(`Find files by name or path pattern (glob) in the workspace.

When to use: to locate files when you know (part of) the name, e.g. all *_test.go files or a config file. To search file contents use {{grep}}; to see one directory use {{ls}}; do not use {{bash}} find.

Parameters: pattern is a glob with ** for any depth: a pattern without "/" matches file names at any depth ("*.ts", "*.spec.ts"); a pattern with "/" matches the path relative to path ("src/**/*.spec.ts", "**/parent/child/*"); {a,b}, ?, [a-z] work. path is the directory to search (default the workspace root). includeIgnored lists ignored files too.

Output: matching file paths relative to the workspace root (absolute for another workspace folder's files, which a search without path covers too), one per line, sorted. Files ignored by .gitignore, .ignore or .agentlsignore are skipped (unless includeIgnored; a path that is itself ignored is named as such, and when only ignored files match, a few are named), hidden files are included, .git is never searched, symlinks are not followed. At most %d paths by default (maximum %d); when the limit is hit the notice says so and gives the call for more. The whole result, notices included, is at most %s; beyond that the list is cut and the notice says where.

Errors: an invalid glob explains the problem with valid examples; a missing directory says so.`, l.FindPaths, findMax(l), l.ResultSize(tools.DefaultMaxResultBytes))
}

// NewFind returns the find tool enforcing l.
func NewFind(l tools.Limits) *tools.Tool {
	l = l.WithDefaults()
	return tools.Define(tools.Spec[findInput]{
		Name:        "find",
		Title:       "Find files",
		Description: findDescription(l),
		Static:      tools.Labels{ReadOnly: true, ConcurrencySafe: true},
		Idempotent:  true,
		Aliases:     map[string]string{"glob": "pattern", "name": "pattern"},
		PrepareRaw: func(args map[string]any, n *tools.Normalization) {
			if v, ok := args["case_sensitive"]; ok && tools.Falsy(v) {
				n.Refuse("case_sensitive: false is not supported: {{find}} matches names case-sensitively. Put both cases in the pattern instead, e.g. \"*.{go,GO}\" or \"[Rr]eadme*\".")
			}
		},
		Tweak: func(s map[string]any) {
			prop(s, "limit")["minimum"] = 1.0
			prop(s, "limit")["maximum"] = float64(findMax(l))
			prop(s, "limit")["description"] = fmt.Sprintf("maximum number of paths (default %d, maximum %d)", l.FindPaths, findMax(l))
		},
		Run: func(ctx context.Context, c *tools.Call, in findInput) (tools.Result, error) {
			return runFind(ctx, c, in, l)
		},
	})
}

func runFind(ctx context.Context, c *tools.Call, in findInput, l tools.Limits) (tools.Result, error) {
	if strings.TrimSpace(in.Pattern) == "" {
		return tools.Errorf("pattern is empty; give a glob such as \"*.go\" or \"src/**/*.spec.ts\"."), nil
	}
	if in.Path == "" {
		in.Path = "."
	}
	p, err := c.Resolve(in.Path)
	if err != nil {
		return tools.Errorf("%v", err), nil
	}
	if err := finder.ValidatePattern(in.Pattern); err != nil {
		return tools.Errorf("%v", err), nil
	}
	// The plan first: it opens again a folder created anew at its path,
	// before p's folder is read.
	plan, missing := searchPlan(c.Env)
	whole := in.Path == "." && beyondFirst(plan, missing)
	// The folder's open directory may have been moved away: search what
	// is at its path now, or say it is gone (as read and ls do).
	if !whole && refresh(c.Env, p.Folder) == ops.FolderGone {
		return tools.Errorf("%s does not exist: %s", p.Display(), folderGone(p)), nil
	}
	fsys := c.Env.FS.FolderFS(p.Folder)
	limit := in.Limit
	if limit <= 0 {
		limit = l.FindPaths
	}
	m := matcher(c.Env, p.Folder, fsys)
	switch {
	case p.Rel == ".git" || strings.HasPrefix(p.Rel, ".git/"):
		return tools.Text(c.Hintf("%s is inside .git, which is never searched (it is git's database, not project files; includeIgnored does not change that). Use git through {{bash}} instead, e.g. git ls-files or git ls-tree -r HEAD.", p.Display())), nil
	case !in.IncludeIgnored && p.Rel != "." && p.Rel != "" && m.Ignored(p.Rel, true):
		return tools.Text(fmt.Sprintf("%s is ignored by .gitignore/.ignore/.agentlsignore rules, so nothing was searched. Call again with includeIgnored: true to search it.", p.Display())), nil
	}
	var res finder.FindResult
	gone := ""
	if whole {
		// No path: the whole workspace, every folder of it, in order.
		if len(plan) == 0 {
			return tools.Errorf("no workspace folder is left to search:%s", goneNote(missing)), nil
		}
		res, err = findFolders(ctx, c, plan, in, limit)
		gone = goneNote(missing)
	} else {
		res, err = findIn(ctx, c, ops.Share{Folder: p.Folder}, fsys, m, p.Rel, in, limit)
	}
	if err != nil {
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return c.Errorf("%s does not exist.%s Use {{ls}} to look at its parent directory.", p.Display(), didYouMean(c.Env, p, suggestDirs)), nil
		case errors.Is(err, finder.ErrNotDir):
			return c.Errorf("%s is a file; {{find}} searches directories (use {{read}} for the file).", p.Display()), nil
		case ctx.Err() != nil:
			return tools.Result{}, err
		case errors.Is(err, fs.ErrPermission):
			// Worded as grep's refusal of the same directory.
			return c.Errorf("{{find}} %q: cannot search %s: %s", in.Pattern, p.Display(), ignore.ErrReason(err)), nil
		}
		return c.Errorf("{{find}} %q: %v", in.Pattern, err), nil
	}
	where := p.Display()
	if where == "." {
		where = "the workspace"
	}
	if len(res.Paths) == 0 {
		if !in.IncludeIgnored {
			if hidden := ignoredMatches(ctx, c, p, in.Path == ".", in.Pattern); len(hidden) > 0 {
				return tools.Text(fmt.Sprintf("No files match %q in %s, but ignored files do (%s): they are hidden by .gitignore/.ignore/.agentlsignore rules. Call again with includeIgnored: true to include them.", in.Pattern, where, strings.Join(hidden, ", "))), nil
			}
		}
		hint := ""
		if !strings.Contains(in.Pattern, "/") && !strings.ContainsAny(in.Pattern, "*?[{") {
			hint = fmt.Sprintf(" The pattern has no wildcard: it matches the exact name only; try \"*%s*\".", strings.TrimSuffix(in.Pattern, path.Ext(in.Pattern)))
		}
		return tools.Text(fmt.Sprintf("No files match %q in %s.%s%s%s", in.Pattern, where, hint, unreadableNote(c.Env, res.Unreadable), gone)), nil
	}
	var b strings.Builder
	for _, f := range res.Paths {
		b.WriteString(ops.ShowName(f))
		b.WriteByte('\n')
	}
	switch {
	case res.Truncated && limit >= findMax(l):
		fmt.Fprintf(&b, "[Showing the first %d matching paths (limit %d, the maximum); more files match. Narrow the pattern or path to see others.]", len(res.Paths), limit)
	case res.Truncated:
		fmt.Fprintf(&b, "[Showing the first %d matching paths (limit %d); more files match. Narrow the pattern or path, or call again with limit=%d.]", len(res.Paths), limit, min(2*limit, findMax(l)))
	}
	r := tools.Text(strings.TrimRight(b.String(), "\n") + unreadableNote(c.Env, res.Unreadable) + gone)
	r.SetDetail("count", len(res.Paths))
	r.SetDetail("truncated", res.Truncated)
	return r, nil
}

// Bounds of the second look find takes, for the notice, when ignore rules
// hid every match: a few names, found within a short time.
const (
	findIgnoredShown   = 3
	findIgnoredTimeout = 2 * time.Second
)

// findIn runs find in one folder and returns the paths the permission
// rules let it list (and sh owns, in a whole-workspace search), as the
// model passes them back (ops.Path.Display).
func findIn(ctx context.Context, c *tools.Call, sh ops.Share, fsys fs.FS, m *ignore.Matcher, rel string, in findInput, limit int) (finder.FindResult, error) {
	f := sh.Folder
	allowed := visibleIn(c.Env, f, false)
	visible := func(p string) bool { return sh.Owns(p) && (allowed == nil || allowed(p)) }
	res, err := finder.Find(ctx, fsys, m, in.Pattern, rel, limit, in.IncludeIgnored, visible)
	if err != nil {
		return res, err
	}
	for i, p := range res.Paths {
		res.Paths[i] = f.DisplayPrefix() + p
	}
	for i, p := range res.Unreadable.Paths {
		res.Unreadable.Paths[i] = f.DisplayPrefix() + p
	}
	return res, nil
}

// findFolders runs find in every folder of plan, in order, within one
// limit: a folder is searched for what the limit leaves, and once it is
// reached one more match anywhere makes the result truncated.
func findFolders(ctx context.Context, c *tools.Call, plan []ops.Share, in findInput, limit int) (finder.FindResult, error) {
	var all finder.FindResult
	for _, sh := range plan {
		f := sh.Folder
		fsys := c.Env.FS.FolderFS(f)
		left := limit - len(all.Paths)
		res, err := findIn(ctx, c, sh, fsys, matcher(c.Env, f, fsys), ".", in, max(left, 1))
		if err != nil {
			return all, err
		}
		if left <= 0 {
			if len(res.Paths) > 0 {
				all.Truncated = true
				break
			}
			continue
		}
		all.Paths = append(all.Paths, res.Paths...)
		all.Unreadable.Merge(res.Unreadable)
		all.Total += res.Total
		if res.Truncated {
			all.Truncated = true
			break
		}
	}
	return all, nil
}

// ignoredMatches returns up to findIgnoredShown paths matching pattern that
// the ignore rules hid (and the permission rules would list), so a find
// for a name the caller knows says why it came back empty. everywhere
// looks in every workspace folder instead of p alone.
func ignoredMatches(ctx context.Context, c *tools.Call, p ops.Path, everywhere bool, pattern string) []string {
	ctx, cancel := context.WithTimeout(ctx, findIgnoredTimeout)
	defer cancel()
	type place struct {
		sh  ops.Share
		rel string
	}
	places := []place{{ops.Share{Folder: p.Folder}, p.Rel}}
	if plan, missing := searchPlan(c.Env); everywhere && beyondFirst(plan, missing) {
		places = places[:0]
		for _, sh := range plan {
			places = append(places, place{sh, "."})
		}
	}
	var out []string
	for _, pl := range places {
		fsys := c.Env.FS.FolderFS(pl.sh.Folder)
		res, err := findIn(ctx, c, pl.sh, fsys, matcher(c.Env, pl.sh.Folder, fsys), pl.rel, findInput{Pattern: pattern, IncludeIgnored: true}, findIgnoredShown-len(out))
		if err != nil {
			continue
		}
		if out = append(out, res.Paths...); len(out) >= findIgnoredShown {
			break
		}
	}
	return out
}
