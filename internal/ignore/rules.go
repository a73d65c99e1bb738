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
