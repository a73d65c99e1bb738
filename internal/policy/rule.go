package policy

import (
	"fmt"
	"path"
	"strings"

	"github.com/agentls/agentls/internal/shell"
	"github.com/bmatcuk/doublestar/v4"
)

// Rule sources, from the most to the least trusted. Allow rules from the
// trusted sources (editor, user, session) are evaluated before the built-in
// asks; allow rules from workspace files after them.
const (
	SourceEditor    = "initializationOptions"
	SourceLocal     = ".agentls/settings.local.json"
	SourceWorkspace = ".agentls/settings.json"
	SourceUser      = "user settings"
	SourceSession   = "session"
)

// kind says how a rule's specifier matches.
type kind int

const (
	kindAny    kind = iota // Tool, Tool(*), Bash(:*): every call of the tool
	kindExact              // Bash(npm run build)
	kindPrefix             // Bash(npm run test:*) or Bash(npm run test *)
	kindGlob               // Bash(git * main), Bash(deploy * --prod:*): * is any text
	kindPath               // Read(./.env), Edit(src/**)
	kindOpaque             // a specifier on a tool that has none: never matches
)

// Rule is one parsed permission rule.
type Rule struct {
	// Raw is the rule as written; verdicts name it.
	Raw string
	// Tool is the lower-cased tool name (bash, read, mcp__github).
	Tool string
	// Spec is the text between the parentheses, "" for a bare tool name.
	Spec string
	// Source is where the rule came from (SourceEditor, ...).
	Source string
	// folder is the root of the workspace folder whose settings file holds
	// the rule ("" for the editor's, the user's and session rules): its
	// path specifiers are relative to that folder and match only inside
	// it, as a .gitignore's patterns hold for its own tree.
	folder string

	kind  kind
	words []string // bash: the words of an exact or prefix specifier
	text  string   // bash: the specifier with whitespace normalized
	// glob: the literal runs between a kindGlob specifier's *s, and
	// whether more words may follow what it matches (a :* or " *" suffix).
	glob     []string
	globTail bool
	pat      pathPattern
}

// trusted reports whether an allow rule may lift the built-in asks.
func (r Rule) trusted() bool {
	switch r.Source {
	case SourceEditor, SourceUser, SourceSession:
		return true
	}
	return false
}

// String names the rule and its source for verdicts.
func (r Rule) String() string {
	if r.Source == "" {
		return r.Raw
	}
	return r.Raw + " (" + r.Source + ")"
}

// RuleError is a syntax error in a rule; Col is 1-based.
type RuleError struct {
	Col int
	Msg string
}

func (e *RuleError) Error() string {
	if e.Col > 0 {
		return fmt.Sprintf("%s at column %d", e.Msg, e.Col)
	}
	return e.Msg
}

// Tool families: rules on Read cover every reading tool, rules on Edit cover
// edit and write (as in Claude Code).
func family(tool string) string {
	switch tool {
	case "read", "grep", "find", "ls", "glob":
		return "read"
	case "edit", "write", "multiedit":
		return "edit"
	case "bash":
		return "bash"
	}
	return ""
}

// ParseRule parses `Tool` or `Tool(specifier)`.
func ParseRule(s string) (Rule, error) {
	raw := strings.TrimSpace(s)
	if raw == "" {
		return Rule{}, &RuleError{Msg: "empty rule"}
	}
	// Column offset of raw inside s, so columns point into what was written.
	off := strings.Index(s, raw)
	name, spec, hasSpec := raw, "", false
	if i := strings.IndexByte(raw, '('); i >= 0 {
		name = raw[:i]
		if j := closing(raw[i:]); j != len(raw)-1-i {
			if j > 0 {
				return Rule{}, &RuleError{Col: off + i + j + 2, Msg: "unexpected text after ')'"}
			}
			return Rule{}, &RuleError{Col: off + i + 1, Msg: "unclosed '('"}
		}
		spec, hasSpec = raw[i+1:len(raw)-1], true
		if strings.TrimSpace(spec) == "" {
			return Rule{}, &RuleError{Col: off + i + 1, Msg: "empty specifier '()'; write the bare tool name to match every call"}
		}
	} else if j := strings.IndexByte(raw, ')'); j >= 0 {
		return Rule{}, &RuleError{Col: off + j + 1, Msg: "')' without '('"}
	}
	if name == "" {
		return Rule{}, &RuleError{Col: off + 1, Msg: "missing tool name"}
	}
	lower := strings.ToLower(name)
	for i, c := range name {
		if c == '*' && i == len(name)-1 && strings.HasPrefix(lower, "mcp__") && strings.HasSuffix(name, "__*") {
			continue // mcp__server__*
		}
		if !(c == '_' || c == '-' || c == '.' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return Rule{}, &RuleError{Col: off + i + 1, Msg: fmt.Sprintf("invalid character %q in tool name", c)}
		}
	}
	r := Rule{Raw: raw, Tool: lower, Spec: spec}
	if !hasSpec || spec == "*" {
		r.kind = kindAny
		return r, nil
	}
	specCol := off + len(name) + 2
	switch family(r.Tool) {
	case "bash":
		parseBashSpec(&r)
	case "read", "edit":
		p, err := compilePath(spec)
		if err != nil {
			return Rule{}, &RuleError{Col: specCol, Msg: err.Error()}
		}
		r.kind, r.pat = kindPath, p
	default:
		r.kind = kindOpaque
	}
	return r, nil
}

// unmatchable says why a parsed rule can never match, or "". Such a rule
// is kept (it is harmless) and reported, since its author meant something
// it does not do.
func (r Rule) unmatchable() string {
	switch r.kind {
	case kindOpaque:
		return fmt.Sprintf("%s takes no specifier in parentheses, "+NeverMatchesNote+"; write %s to match every call", r.Raw[:strings.IndexByte(r.Raw, '(')], r.Raw[:strings.IndexByte(r.Raw, '(')])
	case kindPath:
		glob := r.pat.glob
		for r.pat.up && strings.HasPrefix(glob, "../") {
			glob = glob[3:]
		}
		for _, seg := range strings.Split(strings.TrimPrefix(glob, "/"), "/") {
			if seg == "" || seg == "." || seg == ".." {
				return fmt.Sprintf("the path pattern %q has an empty, '.' or '..' part inside it, which no cleaned path has, "+NeverMatchesNote, r.Spec)
			}
		}
	}
	return ""
}

// UnknownTools reports the rules of c that name a tool known says does not
// exist (mcp__server… and server__tool rules name upstream servers' tools,
// which register in the background and come and go, and are not checked):
// such a rule never matches until a tool of that name appears. The rules
// stay in force.
func (c *Config) UnknownTools(known func(tool string) bool) []Problem {
	c.mu.RLock()
	defer c.mu.RUnlock()
	var probs []Problem
	for li, list := range [3][]Rule{c.Allow, c.Ask, c.Deny} {
		for _, r := range list {
			if r.Source == SourceSession || strings.Contains(r.Tool, "__") || family(r.Tool) != "" || known(r.Tool) {
				continue
			}
			name := r.Raw
			if i := strings.IndexByte(name, '('); i >= 0 {
				name = name[:i]
			}
			probs = append(probs, Problem{File: r.Source, Msg: fmt.Sprintf("permissions.%s %q: no tool is named %s, "+NeverMatchesNote+" (tool names: read, grep, find, ls, edit, write, bash, tool_search, extension tools, mcp__server__tool)",
				[3]string{"allow", "ask", "deny"}[li], r.Raw, name), Unmatchable: true})
		}
	}
	return probs
}

func parseBashSpec(r *Rule) {
	spec := strings.TrimSpace(r.Spec)
	prefix, isPrefix := strings.CutSuffix(spec, ":*")
	if !isPrefix {
		prefix, isPrefix = strings.CutSuffix(spec, " *")
	}
	if isPrefix && strings.TrimSpace(prefix) == "" {
		r.kind = kindAny
		return
	}
	r.kind = kindExact
	if isPrefix {
		r.kind, spec = kindPrefix, prefix
	}
	r.text = normalize(spec)
	if strings.Contains(r.text, "*") {
		// Claude Code's wildcard: * stands for any text, words included.
		r.kind, r.glob, r.globTail = kindGlob, strings.Split(r.text, "*"), isPrefix
		return
	}
	r.words = strings.Fields(spec)
	// Quoted words (git commit -m "wip":*) are compared unquoted, as the
	// analysis reports a command's words.
	if a := shell.Analyze(spec, shell.Options{}); a.ParseError == nil && len(a.Commands) == 1 && a.Commands[0].Words != nil {
		r.words = a.Commands[0].Words
	}
}

// closing returns the index of the ')' that balances s[0] == '(', or -1.
// Parentheses inside shell quotes do not count.
func closing(s string) int {
	depth := 0
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			} else if c == '\\' && quote == '"' {
				i++
			}
		case c == '\\':
			i++
		case c == '\'' || c == '"':
			quote = c
		case c == '(':
			depth++
		case c == ')':
			if depth--; depth == 0 {
				return i
			}
		}
	}
	return -1
}

func normalize(s string) string { return strings.Join(strings.Fields(s), " ") }

// matchWords reports whether cmd is matched by an exact, prefix or glob
// rule.
func (r Rule) matchWords(words []string) bool {
	if r.kind == kindGlob {
		return len(words) > 0 && r.matchGlob(strings.Join(words, " "))
	}
	if len(words) < len(r.words) || r.kind == kindExact && len(words) != len(r.words) {
		return false
	}
	for i, w := range r.words {
		if words[i] != w {
			return false
		}
	}
	return len(r.words) > 0
}

// matchText matches a command's printed text at a word boundary; deny
// rules use it for commands whose words are not all literal.
func (r Rule) matchText(text string) bool {
	text = normalize(text)
	if r.kind == kindGlob {
		return r.matchGlob(text)
	}
	if r.kind == kindExact {
		return text == r.text
	}
	return text == r.text || strings.HasPrefix(text, r.text+" ")
}

// matchGlob matches a command's normalized text against a kindGlob rule:
// the whole text, or with globTail a run of its words from the start.
func (r Rule) matchGlob(text string) bool {
	if globMatch(r.glob, text) {
		return true
	}
	for i := 0; r.globTail && i < len(text); i++ {
		if text[i] == ' ' && globMatch(r.glob, text[:i]) {
			return true
		}
	}
	return false
}

// globMatch reports whether text is parts joined by runs of any text:
// it starts with the first part, ends with the last, and holds the others
// in order between them.
func globMatch(parts []string, text string) bool {
	if len(parts) == 1 {
		return text == parts[0]
	}
	first, last := parts[0], parts[len(parts)-1]
	if len(text) < len(first)+len(last) || !strings.HasPrefix(text, first) || !strings.HasSuffix(text, last) {
		return false
	}
	rest := text[len(first) : len(text)-len(last)]
	for _, p := range parts[1 : len(parts)-1] {
		i := strings.Index(rest, p)
		if i < 0 {
			return false
		}
		rest = rest[i+len(p):]
	}
	return true
}

// pathPattern is a compiled path specifier.
type pathPattern struct {
	glob string // doublestar pattern
	abs  bool   // match the absolute path (//abs, ~/x, ../x)
	home bool   // glob is relative to the home directory
	up   bool   // glob is relative to the workspace root's parent chain (../)
}

// compilePath turns a gitignore-style specifier into a doublestar pattern.
//
//	//abs/path  absolute file system path
//	~/path      relative to the home directory
//	/path ./path and any pattern with a slash before its end: anchored at
//	            the workspace folder root
//	name        no slash: matches at any depth
//
// A trailing slash is dropped: a pattern matching a directory matches
// everything below it anyway.
func compilePath(spec string) (pathPattern, error) {
	s := strings.TrimSpace(spec)
	var p pathPattern
	switch {
	case strings.HasPrefix(s, "//"):
		p.abs, s = true, s[1:]
	case strings.HasPrefix(s, "~/"):
		p.abs, p.home, s = true, true, s[2:]
	case strings.HasPrefix(s, "../"):
		p.abs, p.up = true, true
	case strings.HasPrefix(s, "/"):
		s = s[1:]
	case strings.HasPrefix(s, "./"):
		s = s[2:]
	default:
		if !strings.Contains(strings.TrimSuffix(s, "/"), "/") {
			s = "**/" + s
		}
	}
	s = strings.TrimSuffix(s, "/")
	if s == "" || s == "**/" {
		s = "**"
	}
	if !doublestar.ValidatePattern(s) {
		return p, fmt.Errorf("invalid path pattern %q (unbalanced '[' or '{', or a trailing '\\')", spec)
	}
	p.glob = s
	return p, nil
}

// match reports whether the pattern matches the file or one of its parent
// directories (gitignore semantics: a matched directory covers its
// contents). rel is slash-separated relative to the folder root ("" when
// unknown), abs the absolute real path.
func (p pathPattern) match(rel, abs, root, home string) bool {
	target, glob := rel, p.glob
	if p.abs {
		target = abs
		switch {
		case p.home:
			if home == "" {
				return false
			}
			glob = path.Join(escapeGlob(slash(home)), glob)
		case p.up:
			if root == "" {
				return false
			}
			glob = path.Clean(path.Join(escapeGlob(slash(root)), glob))
		}
	}
	if target == "" {
		return false
	}
	for t := target; ; {
		if ok, _ := doublestar.Match(glob, t); ok {
			return true
		}
		parent := path.Dir(t)
		if parent == t || parent == "." || parent == "/" {
			return false
		}
		t = parent
	}
}

func slash(p string) string { return strings.ReplaceAll(p, "\\", "/") }

// escapeGlob quotes the doublestar metacharacters of a literal path.
func escapeGlob(s string) string {
	var b strings.Builder
	for _, c := range s {
		switch c {
		case '*', '?', '[', ']', '{', '}', '\\':
			b.WriteByte('\\')
		}
		b.WriteRune(c)
	}
	return b.String()
}
