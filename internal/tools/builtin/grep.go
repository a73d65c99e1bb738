package builtin

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/agentls/agentls/internal/ops"
	"github.com/agentls/agentls/internal/search"
	"github.com/agentls/agentls/internal/tools"
)

// Limits of the grep tool.
const (
	GrepMaxLimit   = search.MaxLimit
	GrepMaxContext = 20
)

// grepMax is l's per-call maximum: a configured default above
// GrepMaxLimit raises the maximum with it.
func grepMax(l tools.Limits) int { return max(GrepMaxLimit, l.GrepMatches) }

type grepInput struct {
	Pattern        string `json:"pattern" jsonschema:"regular expression (RE2/ripgrep syntax), or plain text with literal: true"`
	Path           string `json:"path,omitzero" jsonschema:"file or directory to search, relative to the workspace root (default: the root)"`
	Glob           string `json:"glob,omitzero" jsonschema:"only search files whose path matches this glob, e.g. *.go or src/**/*.ts"`
	IgnoreCase     bool   `json:"ignoreCase,omitzero" jsonschema:"case-insensitive matching"`
	Literal        bool   `json:"literal,omitzero" jsonschema:"treat pattern as plain text, not a regular expression"`
	Context        int    `json:"context,omitzero" jsonschema:"lines of context before and after each match (maximum 20)"`
	Limit          int    `json:"limit,omitzero" jsonschema:"maximum number of matching lines"`
	IncludeIgnored bool   `json:"includeIgnored,omitzero" jsonschema:"also search files ignored by .gitignore/.ignore/.agentlsignore (.git is never searched)"`
	Hidden         *bool  `json:"hidden,omitzero" jsonschema:"search hidden (dot) files and directories (default true)"`
}

func grepDescription(l tools.Limits) string {
	return fmt.Sprintf(`Search file contents in the workspace with a regular expression (ripgrep when available).

When to use: to find where a symbol, string or error message occurs, before reading the files it names. To find files by name use {{find}}; do not use {{bash}} grep or rg.

Parameters: pattern is a regular expression (RE2/ripgrep syntax; set literal: true for plain text, ignoreCase: true for case-insensitive); path narrows to a file or directory; glob filters file paths ("*.go", "src/**/*.ts"); context adds lines around each match (maximum %d); includeIgnored searches ignored files too; hidden (default true) includes dot files.

Output: "path:line: text" for matches and "path-line- text" for context lines, paths relative to the workspace root (absolute for another workspace folder's files, which a search without path covers too), sorted by path then line; overlapping context is merged and "--" separates groups. At most %d matching lines by default (limit up to %d); lines are cut at %d characters; the whole output, notices included, is at most %s. Binary files and files ignored by .gitignore/.ignore/.agentlsignore are skipped. When a limit is hit, the notice names it and the call that gets more.

Errors: an invalid regular expression returns the parser's message (set literal: true to search plain text); a missing path says so.`,
		GrepMaxContext, l.GrepMatches, grepMax(l), l.GrepLineChars, l.ResultSize(l.GrepBytes))
}

// NewGrep returns the grep tool enforcing l.
func NewGrep(l tools.Limits) *tools.Tool {
	l = l.WithDefaults()
	return tools.Define(tools.Spec[grepInput]{
		Name:        "grep",
		Title:       "Search file contents",
		Description: grepDescription(l),
		Static:      tools.Labels{ReadOnly: true, ConcurrencySafe: true},
		Idempotent:  true,
		// The whole output: the search keeps its text and notice within
		// GrepBytes; the notes grep adds (unreadable paths, binary file,
		// denied files) are rare, and governance holds the whole to it.
		MaxResultBytes: l.GrepBytes,
		Aliases: map[string]string{"query": "pattern", "include": "glob", "-i": "ignoreCase", "C": "context", "-C": "context", "head_limit": "limit",
			// Lines after or before: context shows both sides.
			"A": "context", "-A": "context", "B": "context", "-B": "context", "-F": "literal"},
		PrepareRaw: func(args map[string]any, n *tools.Normalization) {
			if tools.Truthy(args["multiline"]) || tools.Truthy(args["-U"]) {
				n.Refuse("multiline is not supported: {{grep}} matches one line at a time. Search for one of the lines and add context (e.g. {\"pattern\": \"func main\", \"context\": 5}) to see the lines around it.")
			}
			mapGrepExtras(args, n)
		},
		Tweak: func(s map[string]any) {
			prop(s, "limit")["minimum"] = 1.0
			prop(s, "limit")["maximum"] = float64(grepMax(l))
			prop(s, "limit")["description"] = fmt.Sprintf("maximum number of matching lines (default %d, maximum %d)", l.GrepMatches, grepMax(l))
			prop(s, "context")["minimum"] = 0.0
			prop(s, "context")["maximum"] = float64(GrepMaxContext)
		},
		Run: func(ctx context.Context, c *tools.Call, in grepInput) (tools.Result, error) {
			return runGrep(ctx, c, in, l)
		},
	})
}

func runGrep(ctx context.Context, c *tools.Call, in grepInput, l tools.Limits) (tools.Result, error) {
	if in.Pattern == "" {
		return tools.Errorf("pattern is empty; give a regular expression or, with literal: true, plain text to search for."), nil
	}
	if matchesNewline(in.Pattern, in.Literal) {
		// Both searchers match line by line: rg refuses such a pattern
		// (suggesting a flag the tool does not have), the Go searcher
		// would report no match.
		first, _, _ := strings.Cut(strings.ReplaceAll(in.Pattern, `\n`, "\n"), "\n")
		return c.Errorf("{{grep}} matches one line at a time, so a pattern containing a newline (\\n) cannot match. Search for one of the lines (e.g. %q) and add context: N to see the lines around it.", first), nil
	}
	if matchesCR(in.Pattern, in.Literal) {
		// Lines are searched without their terminator, a CRLF's \r
		// included: rg refuses such a pattern (suggesting a flag the tool
		// does not have), the Go searcher would report no match.
		return c.Errorf("{{grep}} searches each line without its line ending (the \\r of CRLF files included), so a pattern containing \\r cannot match. Leave the \\r out; to anchor at the end of a line use $."), nil
	}
	if strings.IndexByte(in.Pattern, 0) >= 0 {
		// A file with a NUL byte is binary, and both searchers skip
		// binary files, so such a pattern cannot match (and rg cannot
		// even take it as an argument).
		return c.Errorf("pattern contains a NUL byte, which no text file holds: {{grep}} skips binary files (those with NUL bytes). Search for the text around it, or inspect a binary file with {{bash}} (e.g. grep -c -a PATTERN FILE)."), nil
	}
	hidden := true
	if in.Hidden != nil {
		hidden = *in.Hidden
	}
	q := search.Query{
		Pattern: in.Pattern, Glob: in.Glob, IgnoreCase: in.IgnoreCase, Literal: in.Literal,
		Context: in.Context, Limit: cmp.Or(in.Limit, l.GrepMatches), IncludeIgnored: in.IncludeIgnored, Hidden: hidden,
		MaxLimit: grepMax(l), LineChars: l.GrepLineChars, MaxBytes: l.GrepBytes,
	}
	if c.Masker() != nil {
		q.Mask = c.Masker().Mask
	}
	rg := search.FindRg()
	engine := func(f *ops.Folder) *search.Engine {
		fsys := c.Env.FS.FolderFS(f)
		return &search.Engine{Root: f.Root, FS: fsys, Matcher: matcher(c.Env, f, fsys), RgPath: rg, Prefix: f.DisplayPrefix(), Visible: visibleIn(c.Env, f, true), RefusedNames: refusedNames(c.Env)}
	}
	var (
		res  search.Result
		err  error
		p    ops.Path
		rel  string
		fsys fs.FS
	)
	gone := ""
	if plan, missing := searchPlan(c.Env); (in.Path == "" || in.Path == ".") && beyondFirst(plan, missing) {
		// No path: the whole workspace, every folder of it.
		if len(plan) == 0 {
			return tools.Errorf("no workspace folder is left to search:%s", goneNote(missing)), nil
		}
		engines := make([]*search.Engine, len(plan))
		for i, sh := range plan {
			engines[i] = engine(sh.Folder)
			engines[i].Owns = sh.Owns
		}
		res, err = search.SearchFolders(ctx, engines, q)
		gone = goneNote(missing)
	} else {
		if p, err = c.Resolve(cmp.Or(in.Path, ".")); err != nil {
			return tools.Errorf("%v", err), nil
		}
		// The folder's open directory may have been moved away: search
		// what is at its path now, or say it is gone (as read and ls do).
		if refresh(c.Env, p.Folder) == ops.FolderGone {
			return tools.Errorf("%s does not exist: %s", p.Display(), folderGone(p)), nil
		}
		if rel = p.Rel; rel == "." {
			rel = ""
		}
		q.Path = rel
		eng := engine(p.Folder)
		fsys = eng.FS
		res, err = eng.Search(ctx, q)
	}
	if err != nil {
		var pe *search.PathError
		if errors.As(err, &pe) && errors.Is(pe.Err, fs.ErrNotExist) && p.Folder != nil {
			return c.Errorf("path %q does not exist in the workspace.%s Use {{find}} or {{ls}} to locate it, or omit path to search everything.", p.Display(), didYouMean(c.Env, p, suggestAny)), nil
		}
		if pe != nil || ctx.Err() == nil {
			return tools.Errorf("%v", err), nil
		}
		return tools.Result{}, err
	}
	text := res.Text + unreadableNote(c.Env, res.Unreadable) + gone
	if res.Matches == 0 && res.Files == 0 && fsys != nil {
		switch at := firstNUL(fsys, rel); {
		case at < 0:
		case at < binarySniffBytes:
			text += c.Hintf("\n[%s is a binary file (it holds NUL bytes), and {{grep}} skips binary files; {{read}} says what kind of file it is.]", p.Display())
		default:
			text += c.Hintf("\n[%s is a binary file (it holds NUL bytes, the first at byte %d), and {{grep}} skips binary files, so it was not searched; to search it as text use {{bash}}: grep -a PATTERN FILE.]", p.Display(), at)
		}
	}
	if res.Denied > 0 {
		text += fmt.Sprintf("\n[%s not searched: the permission rules do not allow reading them.]", plural(res.Denied, "file"))
	}
	text, masked := maskGrepKeyLines(c.Env.FS, text)
	r := tools.Text(text)
	if len(res.Redactions) > 0 {
		r.SetDetail("redactions", res.Redactions)
	}
	addKeyRedactions(&r, masked)
	r.SetDetail("matches", res.Matches)
	r.SetDetail("files", res.Files)
	r.SetDetail("backend", res.Backend)
	if res.LimitHit {
		r.SetDetail("limitHit", true)
	}
	return r, nil
}

// firstNUL is the offset of the first NUL byte in rel, a regular file, or
// -1: grep's backends skip a file with a NUL anywhere (not only in the
// first binarySniffBytes, which read looks at), so the whole file is
// scanned, in a small buffer.
func firstNUL(fsys fs.FS, rel string) int64 {
	if rel == "" {
		return -1
	}
	f, err := fsys.Open(rel)
	if err != nil {
		return -1
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return -1
	}
	buf := make([]byte, 64<<10)
	var off int64
	for {
		n, err := f.Read(buf)
		if i := bytes.IndexByte(buf[:n], 0); i >= 0 {
			return off + int64(i)
		}
		off += int64(n)
		if err != nil {
			return -1
		}
	}
}

// matchesNewline reports whether pattern asks for a line break: a newline
// character, or (as a regular expression) an unescaped \n.
func matchesNewline(pattern string, literal bool) bool {
	return asksFor(pattern, literal, '\n', 'n')
}

// matchesCR reports whether pattern asks for a carriage return: the
// character, or (as a regular expression) an unescaped \r.
func matchesCR(pattern string, literal bool) bool {
	return asksFor(pattern, literal, '\r', 'r')
}

// asksFor reports whether pattern holds the character c, or (unless
// literal) the regular-expression escape \<esc>.
func asksFor(pattern string, literal bool, c, esc byte) bool {
	if strings.IndexByte(pattern, c) >= 0 {
		return true
	}
	if literal {
		return false
	}
	for i := 0; i+1 < len(pattern); i++ {
		if pattern[i] == '\\' {
			if pattern[i+1] == esc {
				return true
			}
			i++ // an escaped character, \\ included
		}
	}
	return false
}
