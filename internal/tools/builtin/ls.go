package builtin

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"

	"github.com/agentls/agentls/internal/finder"
	"github.com/agentls/agentls/internal/ignore"
	"github.com/agentls/agentls/internal/ops"
	"github.com/agentls/agentls/internal/tools"
)

// LsMaxLimit is the most entries one ls call may ask for.
const LsMaxLimit = 5000

// lsMax is l's per-call maximum: a configured default above LsMaxLimit
// raises the maximum with it.
func lsMax(l tools.Limits) int { return max(LsMaxLimit, l.LsEntries) }

type lsInput struct {
	Path  string `json:"path,omitzero" jsonschema:"directory to list, relative to the workspace root (default: the root)"`
	Limit int    `json:"limit,omitzero" jsonschema:"maximum number of entries"`
	// IncludeIgnored lists entries ignore rules hide (.git still never).
	IncludeIgnored bool `json:"includeIgnored,omitzero" jsonschema:"also list entries ignored by .gitignore/.ignore/.agentlsignore (.git is never listed)"`
}

func lsDescription(l tools.Limits) string {
	return fmt.Sprintf(`List one directory of the workspace.

When to use: to see what a directory holds before reading files in it. To find files by name anywhere below a directory use {{find}}; to search file contents use {{grep}}; do not use {{bash}} ls.

Parameters: path (a directory, relative to the workspace root; default the root); limit (default %d, maximum %d); includeIgnored lists ignored entries too.

Output: one entry per line, sorted by name; directories end in "/", symlinks show "name@ -> target"; dotfiles are included and .git is omitted. Entries ignored by .gitignore, .ignore, .agentlsignore or git's exclude files are hidden and counted ("N ignored entries hidden"), unless includeIgnored. At most %d entries by default; the notice says how many were left out and which limit to ask for (at the maximum: how to narrow). The whole result, notices included, is at most %s; beyond that the list is cut and the notice says where.

Errors: a missing directory or a file path says so (use {{read}} for files).`, l.LsEntries, lsMax(l), l.LsEntries, l.ResultSize(tools.DefaultMaxResultBytes))
}

// NewLs returns the ls tool enforcing l.
func NewLs(l tools.Limits) *tools.Tool {
	l = l.WithDefaults()
	return tools.Define(tools.Spec[lsInput]{
		Name:        "ls",
		Title:       "List directory",
		Description: lsDescription(l),
		Static:      tools.Labels{ReadOnly: true, ConcurrencySafe: true},
		Idempotent:  true,
		PrepareRaw: func(args map[string]any, n *tools.Normalization) {
			for _, k := range []string{"recursive", "-R", "-r", "depth", "max_depth", "maxDepth"} {
				v, ok := args[k]
				if !ok {
					continue
				}
				delete(args, k)
				n.Add("dropped unknown field %q", k)
				if tools.Falsy(v) {
					continue
				}
				ex := exampleJSON("pattern", "*")
				if dir, _ := args["path"].(string); dir != "" && dir != "." {
					ex = exampleJSON("pattern", "*", "path", dir)
				}
				n.Notice("ignored `%s`: {{ls}} lists one directory; {{find}} lists a whole tree, e.g. {{find}} %s", k, ex)
			}
		},
		Tweak: func(s map[string]any) {
			prop(s, "limit")["minimum"] = 1.0
			prop(s, "limit")["maximum"] = float64(lsMax(l))
			prop(s, "limit")["description"] = fmt.Sprintf("maximum number of entries (default %d, maximum %d)", l.LsEntries, lsMax(l))
		},
		Run: func(ctx context.Context, c *tools.Call, in lsInput) (tools.Result, error) {
			return runLs(ctx, c, in, l)
		},
	})
}

func runLs(ctx context.Context, c *tools.Call, in lsInput, l tools.Limits) (tools.Result, error) {
	if in.Path == "" {
		in.Path = "."
	}
	p, err := c.Resolve(in.Path)
	if err != nil {
		return tools.Errorf("%v", err), nil
	}
	// The folder's open directory may have been moved away or replaced:
	// list what is at its path now, or say it is gone.
	if refresh(c.Env, p.Folder) == ops.FolderGone {
		return tools.Errorf("%s does not exist: %s", p.Display(), folderGone(p)), nil
	}
	fsys := c.Env.FS.FolderFS(p.Folder)
	m := matcher(c.Env, p.Folder, fsys)
	limit := in.Limit
	if limit <= 0 {
		limit = l.LsEntries
	}
	hide := m
	if in.IncludeIgnored {
		hide = nil
	}
	res, err := finder.List(ctx, fsys, hide, p.Rel, limit, visibleIn(c.Env, p.Folder, false))
	if err != nil {
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return c.Errorf("%s does not exist.%s Use {{find}} to locate it, or {{ls}} the parent directory.", p.Display(), didYouMean(c.Env, p, suggestDirs)), nil
		case errors.Is(err, finder.ErrNotDir):
			return c.Errorf("%s is a file, not a directory; use {{read}} to see its content.", p.Display()), nil
		}
		return tools.Result{}, err
	}
	for i, e := range res.Entries {
		res.Entries[i] = hideDeniedTarget(c.Env, p.Folder, p.Rel, e)
	}
	var b strings.Builder
	dir := p.Display()
	if dir == "." {
		dir = "workspace root"
	}
	if res.Total == 1 {
		fmt.Fprintf(&b, "%s: 1 entry\n", dir)
	} else {
		fmt.Fprintf(&b, "%s: %d entries\n", dir, res.Total)
	}
	for _, e := range res.Entries {
		b.WriteString(ops.ShowName(e))
		b.WriteByte('\n')
	}
	if res.Total == 0 && res.IgnoredHidden == 0 {
		b.WriteString("(empty)\n")
	}
	if res.Truncated {
		if limit >= lsMax(l) {
			b.WriteString(c.Hintf("[Showing %d of %d entries (limit %d, the maximum). To see the rest, {{ls}} a subdirectory or use {{find}} with a pattern.]\n", len(res.Entries), res.Total, limit))
		} else {
			next := min(lsMax(l), max(limit*2, res.Total))
			b.WriteString(c.Hintf("[Showing %d of %d entries (limit %d). Call {{ls}} again with limit=%d, or use {{find}} with a pattern to narrow.]\n", len(res.Entries), res.Total, limit, next))
		}
	}
	inGit := p.Rel == ".git" || strings.HasPrefix(p.Rel, ".git/")
	switch {
	case inGit && !in.IncludeIgnored:
		b.WriteString(c.Hintf("[.git is git's database, not project files: its entries are hidden, and {{grep}} and {{find}} never search it. Use git through {{bash}} (git log, git show, git ls-files), or call {{ls}} again with includeIgnored: true to see the entries.]\n"))
	case inGit:
	case m != nil && p.Rel != "." && m.Ignored(p.Rel, true):
		if in.IncludeIgnored {
			b.WriteString(c.Hintf("[This directory itself is ignored by ignore rules (.gitignore, .ignore, .agentlsignore or git's exclude files); {{grep}} and {{find}} skip it unless includeIgnored is set.]\n"))
		} else {
			b.WriteString(c.Hintf("[This directory itself is ignored by ignore rules (.gitignore, .ignore, .agentlsignore or git's exclude files), so everything in it is too. Call {{ls}} again with includeIgnored: true to list it; {{grep}} and {{find}} take includeIgnored as well.]\n"))
		}
	}
	if n := res.IgnoredHidden; n > 0 && !inGit {
		noun := "entries"
		if n == 1 {
			noun = "entry"
		}
		fmt.Fprintf(&b, "[%d ignored %s hidden (matched by .gitignore, .ignore, .agentlsignore or git's exclude files); includeIgnored: true lists them.]\n", n, noun)
	}
	if p.Folder.Primary && p.Rel == "." {
		// The first folder's root stands for the workspace: name the
		// others, which relative paths do not reach.
		// Folders inside the first are reached relatively (and listed
		// here); one given twice is named once.
		var others []string
		for _, f := range workspaceFolders(c.Env.FS) {
			_, inside := ops.Within(p.Folder.Root, f.Root)
			if !inside && !slices.Contains(others, f.Root) {
				others = append(others, f.Root)
			}
		}
		if len(others) > 0 {
			b.WriteString(c.Hintf("[The workspace has %d more folder(s), reached by absolute paths: %s. List one with {{ls}} {\"path\": %q}.]\n", len(others), strings.Join(others, ", "), others[0]))
		}
	}
	r := tools.Text(strings.TrimRight(b.String(), "\n"))
	r.SetDetail("total", res.Total)
	r.SetDetail("ignoredHidden", res.IgnoredHidden)
	return r, nil
}

// matcher returns the ignore rules of folder f: the session's shared,
// watcher-invalidated matcher when there is one, else rules read fresh.
func matcher(e *tools.Env, f *ops.Folder, fsys fs.FS) *ignore.Matcher {
	if e.Folders != nil {
		if m := e.Folders.Matcher(f); m != nil {
			return m
		}
	}
	return ignore.NewMatcher(fsys, e.FS.OuterIgnore(f))
}
