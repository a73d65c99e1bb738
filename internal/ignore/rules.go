package ignore

import (
	"bytes"
	"strings"
	"time"

	gitignore "github.com/boyter/gocodewalker/go-gitignore"
)

// Rule file names, in priority order: a match in an earlier kind wins over
// any match in a later kind, whatever the depth (ripgrep's order). Within a
// kind the deepest directory that matches wins, and within a file the last
// matching line wins (git's order).
const (
	AgentlsIgnoreFile = ".agentlsignore"
	IgnoreFile        = ".ignore"
	GitIgnoreFile     = ".gitignore"
	gitDirName        = ".git"
	excludePath       = "info/exclude"
)

type ruleKind int

const (
	kindAgentls ruleKind = iota
	kindIgnore
	kindGit
	kindExclude // .git/info/exclude, only at a repository root
	// kindGlobal is git's core.excludesFile (the user's global excludes),
	// relative to each repository root; it comes in through Outer.
	kindGlobal
	kindCount
)

// fileName is the per-directory file of a rule kind ("" for kindExclude and
// kindGlobal).
func (k ruleKind) fileName() string {
	switch k {
	case kindAgentls:
		return AgentlsIgnoreFile
	case kindIgnore:
		return IgnoreFile
	case kindGit:
		return GitIgnoreFile
	}
	return ""
}

// ruleFile is one parsed ignore file plus the stat used to notice changes.
type ruleFile struct {
	rules []rule
	size  int64
	mod   time.Time
}

func parseRuleFile(data []byte, size int64, mod time.Time) *ruleFile {
	data = gitLines(data)
	data = fixTrailingAny(data)
	patterns := gitignore.NewParser(bytes.NewReader(data), func(gitignore.Error) bool { return true }).Parse()
	rules := make([]rule, 0, len(patterns))
	for _, p := range patterns {
		if r, ok := compileRule(p); ok {
			rules = append(rules, r)
		}
	}
	return &ruleFile{rules: rules, size: size, mod: mod}
}

// match returns whether a pattern matched rel (relative to the file's
// directory) and, if so, whether the last matching pattern ignores it.
func (f *ruleFile) match(rel string, isDir bool) (matched, ignored bool) {
	if f == nil {
		return false, false
	}
	for i := len(f.rules) - 1; i >= 0; i-- {
		if r := &f.rules[i]; r.match(rel, isDir) {
			return true, !r.negated
		}
	}
	return false, false
}

// fixTrailingAny rewrites a trailing "/**" into "/**/*". In git "abc/**"
// matches everything inside abc but not abc itself (so "!abc/keep" can still
// re-include a file); go-gitignore lets the trailing ** match zero
// components, which would exclude the directory and hide the re-included
// file. "/**/*" requires at least one component, which is git's meaning.
func fixTrailingAny(data []byte) []byte {
	if !bytes.Contains(data, []byte("/**")) {
		return data
	}
	lines := strings.Split(string(data), "\n")
	for i, line := range lines {
		t := strings.TrimRight(line, " \r")
		switch {
		case strings.HasSuffix(t, "/**"):
			lines[i] = t + "/*"
		case strings.HasSuffix(t, "/**/"):
			lines[i] = t + "*/"
		}
	}
	return []byte(strings.Join(lines, "\n"))
}

// utf8BOM starts a rule file saved by some Windows editors; git skips it.
const utf8BOM = "\ufeff"

// gitLines brings a rule file to the lines git reads from it, where the
// parser (go-gitignore) would read them otherwise: a leading UTF-8 BOM is
// dropped (git skips it, so the first rule still matches); a line ending
// in an unescaped backslash (after git's trimming of trailing spaces) is
// invalid in git and matches nothing, so it is blanked; and a "**" that
// does not stand for whole directories (not between slashes or the ends of
// the pattern, as in "**foo" or "a/**js") is an ordinary "*" in git, so it
// is written as one.
func gitLines(data []byte) []byte {
	data = bytes.TrimPrefix(data, []byte(utf8BOM))
	if !bytes.Contains(data, []byte(`\`)) && !bytes.Contains(data, []byte("**")) && !bytes.Contains(data, []byte("\t\n")) && !bytes.HasSuffix(data, []byte("\t")) && !bytes.Contains(data, []byte("\t\r")) {
		return data
	}
	lines := strings.Split(string(data), "\n")
	for i, line := range lines {
		cr := strings.HasSuffix(line, "\r")
		line = strings.TrimSuffix(line, "\r")
		if strings.HasPrefix(line, "#") {
			continue
		}
		if endsInBackslash(line) {
			lines[i] = ""
			continue
		}
		line = plainStars(keepTrailingTabs(line))
		if cr {
			line += "\r"
		}
		lines[i] = line
	}
	return []byte(strings.Join(lines, "\n"))
}

// endsInBackslash reports whether git's trim_trailing_spaces leaves line
// ending in a backslash that escapes nothing.
func endsInBackslash(line string) bool {
	for i := 0; i < len(line); i++ {
		if line[i] == '\\' {
			if i+1 == len(line) {
				return true
			}
			i++
		}
	}
	return false
}

// plainStars rewrites each run of two or more unescaped "*" that git's
// wildmatch does not take as "**" (it must start the pattern or follow a
// "/", and end it or precede a "/") into a single "*", and each run that
// it does take into exactly "**". Bracket expressions are left alone.
func plainStars(line string) string {
	if !strings.Contains(line, "**") {
		return line
	}
	var b strings.Builder
	start := 0
	if strings.HasPrefix(line, "!") {
		start = 1
	}
	b.WriteString(line[:start])
	inClass := false
	for i := start; i < len(line); i++ {
		c := line[i]
		switch {
		case c == '\\' && i+1 < len(line):
			b.WriteString(line[i : i+2])
			i++
			continue
		case inClass:
			if c == ']' {
				inClass = false
			}
		case c == '[':
			inClass = true
		case c == '*' && i+1 < len(line) && line[i+1] == '*':
			j := i
			for j < len(line) && line[j] == '*' {
				j++
			}
			before := i == start || line[i-1] == '/'
			after := j == len(line) || line[j] == '/' || strings.TrimRight(line[j:], " ") == ""
			if before && after {
				b.WriteString("**")
			} else {
				b.WriteByte('*')
			}
			i = j - 1
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

// keepTrailingTabs escapes the tabs that end line after git's trimming of
// trailing spaces: git trims only spaces, so "tab\t" names a file whose
// name ends in a tab, but the parser would trim the tab too.
func keepTrailingTabs(line string) string {
	t := gitTrim(line)
	body := strings.TrimRight(t, "\t")
	n := len(t) - len(body)
	if n == 0 {
		return line
	}
	if endsInBackslash(body) { // the first tab is escaped already
		body += "\t"
		n--
	}
	return body + strings.Repeat("\\\t", n)
}

// gitTrim is git's trim_trailing_spaces: trailing spaces go, unless the
// last is escaped by a backslash (which stays, as in git).
func gitTrim(line string) string {
	end := -1 // start of the run of trailing unescaped spaces
	for i := 0; i < len(line); i++ {
		switch line[i] {
		case ' ':
			if end < 0 {
				end = i
			}
		case '\\':
			i++
			if i == len(line) {
				return line
			}
			end = -1
		default:
			end = -1
		}
	}
	if end >= 0 {
		return line[:end]
	}
	return line
}
