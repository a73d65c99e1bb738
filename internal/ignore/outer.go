package ignore

import (
	"path"
	"slices"
	"time"
)

// Outer is what git applies to a folder from above it: when the folder lies
// inside a repository (a subdirectory opened as the workspace), the rule
// files of the directories from the repository root down to the folder's
// parent, and the repository's info/exclude. The operations layer finds
// them (FindOuter needs the real file system); the zero value means none.
type Outer struct {
	// Prefix is the folder's path relative to the repository root,
	// slash-separated ("packages/web").
	Prefix string
	// Files are the rule files, in any order.
	Files []OuterFile
}

// OuterFile is one rule file above the folder.
type OuterFile struct {
	// Dir is the file's directory relative to the repository root ("" =
	// the root); unused for info/exclude, which applies from the root.
	Dir string
	// Name is GitIgnoreFile, IgnoreFile, AgentlsIgnoreFile or
	// ExcludeFile.
	Name string
	Data []byte
}

// ExcludeFile names a repository's .git/info/exclude in OuterFile.Name.
const ExcludeFile = "info/exclude"

// OuterNames are the per-directory rule files an Outer may hold.
var OuterNames = [...]string{AgentlsIgnoreFile, IgnoreFile, GitIgnoreFile}

// lists parses o into per-kind rule lists, deepest directory first, whose
// patterns see folder paths as paths below their own directory.
func (o Outer) lists() [kindCount][]scoped {
	var out [kindCount][]scoped
	for _, f := range o.Files {
		k, ok := kindOf(f.Name)
		if !ok {
			continue
		}
		dir := f.Dir
		if k == kindExclude {
			dir = ""
		}
		// The folder relative to the rule file's directory.
		prefix := o.Prefix
		if dir != "" {
			rel, ok := cutDir(o.Prefix, dir)
			if !ok {
				continue // not above the folder
			}
			prefix = rel
		}
		out[k] = append(out[k], scoped{prefix: prefix, file: parseRuleFile(f.Data, int64(len(f.Data)), time.Time{})})
	}
	for k := range out {
		// Deepest first: the longer the prefix, the nearer the repository
		// root the file is, so shortest prefix first.
		slices.SortStableFunc(out[k], func(a, b scoped) int { return len(a.prefix) - len(b.prefix) })
	}
	return out
}

func kindOf(name string) (ruleKind, bool) {
	switch name {
	case AgentlsIgnoreFile:
		return kindAgentls, true
	case IgnoreFile:
		return kindIgnore, true
	case GitIgnoreFile:
		return kindGit, true
	case ExcludeFile:
		return kindExclude, true
	}
	return 0, false
}

// cutDir returns p relative to dir when dir is p or one of its ancestors.
func cutDir(p, dir string) (string, bool) {
	if p == dir {
		return "", true
	}
	if len(p) > len(dir) && p[:len(dir)] == dir && p[len(dir)] == '/' {
		return p[len(dir)+1:], true
	}
	return "", false
}

// pathFor is p (relative to the folder root) as sc's patterns see it.
func (sc scoped) pathFor(p string) string {
	if sc.prefix != "" {
		return path.Join(sc.prefix, p)
	}
	return relTo(sc.dir, p)
}
