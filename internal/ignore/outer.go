package ignore

import (
	"path"
	"slices"
	"time"
)

// Outer is what git applies to a folder from outside it: when the folder
// lies inside a repository (a subdirectory opened as the workspace), the
// rule files of the directories from the repository root down to the
// folder's parent, and the repository's info/exclude; and, in or out of a
// repository, the user's global excludes file (core.excludesFile). The
// operations layer finds them (that needs the real file system); the zero
// value means none.
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
	// the root); unused for info/exclude and the global excludes, which
	// apply from the root.
	Dir string
	// Name is GitIgnoreFile, IgnoreFile, AgentlsIgnoreFile, ExcludeFile
	// or GlobalExcludesFile.
	Name string
	Data []byte
}

// Names of rule files that are not per directory, in OuterFile.Name.
const (
	// ExcludeFile names a repository's .git/info/exclude.
	ExcludeFile = "info/exclude"
	// GlobalExcludesFile names the contents of the file git's
	// core.excludesFile names (default $XDG_CONFIG_HOME/git/ignore). It
	// ranks below info/exclude, applies relative to the repository root
	// (the folder root outside any repository), and applies again at the
	// root of every nested repository inside the folder.
	GlobalExcludesFile = "core.excludesFile"
)

// OuterNames are the per-directory rule files an Outer may hold.
var OuterNames = [...]string{AgentlsIgnoreFile, IgnoreFile, GitIgnoreFile}

// lists parses o into per-kind rule lists, deepest directory first, whose
// patterns see folder paths as paths below their own directory. global is
// the parsed global excludes file (nil if none), which nested repositories
// apply again.
func (o Outer) lists() (out [kindCount][]scoped, global *ruleFile) {
	for _, f := range o.Files {
		k, ok := kindOf(f.Name)
		if !ok {
			continue
		}
		dir := f.Dir
		if k == kindExclude || k == kindGlobal {
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
		file := parseRuleFile(f.Data, int64(len(f.Data)), time.Time{})
		if k == kindGlobal {
			// git reads one core.excludesFile; a second entry replaces it.
			out[k], global = out[k][:0], file
		}
		out[k] = append(out[k], scoped{prefix: prefix, file: file})
	}
	for k := range out {
		// Deepest first: the longer the prefix, the nearer the repository
		// root the file is, so shortest prefix first.
		slices.SortStableFunc(out[k], func(a, b scoped) int { return len(a.prefix) - len(b.prefix) })
	}
	return out, global
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
	case GlobalExcludesFile:
		return kindGlobal, true
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
