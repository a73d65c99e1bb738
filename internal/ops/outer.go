package ops

import (
	"io"
	"os"
	"path/filepath"

	"github.com/agentls/agentls/internal/ignore"
)

// maxOuterRuleFile caps how much of one rule file above a folder is read:
// ignore files are small, and this read is outside the folder's root.
const maxOuterRuleFile = 1 << 20

// OuterIgnore implements FS: the rules git applies to f from outside it.
// When f lies inside a git repository but is not its root (a subdirectory
// opened as the workspace), the rule files of the directories from the
// repository root down to f's parent and the repository's info/exclude;
// and, in or out of a repository, the user's global excludes file
// (core.excludesFile, as git itself reports it: gitconfig.go). They are read at each call:
// matchers are built per session or per call.
func (l *Local) OuterIgnore(f *Folder) ignore.Outer {
	if f == nil || f.ReadOnly {
		return ignore.Outer{}
	}
	if gitEntry, err := os.Lstat(filepath.Join(f.Root, ".git")); err == nil {
		// A repository root: git looks no higher.
		return withGlobalExcludes(ignore.Outer{}, f.Root, gitDir(f.Root, gitEntry))
	}
	var dirs []string // f's ancestors, nearest first
	for d := filepath.Dir(f.Root); ; d = filepath.Dir(d) {
		dirs = append(dirs, d)
		if gitEntry, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return withGlobalExcludes(outerRules(d, f.Root, dirs, gitEntry), d, gitDir(d, gitEntry))
		}
		if d == filepath.Dir(d) {
			// Outside any repository, like rg --no-require-git: relative
			// to the folder root, with no repository config.
			return withGlobalExcludes(ignore.Outer{}, f.Root, "")
		}
	}
}

// withGlobalExcludes adds to o the global excludes file of the repository
// whose work tree is top and git directory gd ("" outside a repository or
// when unknown); a missing or unreadable file adds nothing, as in git.
func withGlobalExcludes(o ignore.Outer, top, gd string) ignore.Outer {
	if p := excludesFilePath(top, gd); p != "" {
		if data, ok := readRuleFile(p); ok {
			o.Files = append(o.Files, ignore.OuterFile{Name: ignore.GlobalExcludesFile, Data: data})
		}
	}
	return o
}

// outerRules reads the rules of repository repo (whose .git entry is
// gitEntry) that apply to folder, given the directories from folder's
// parent up to repo.
func outerRules(repo, folder string, dirs []string, gitEntry os.FileInfo) ignore.Outer {
	prefix, err := filepath.Rel(repo, folder)
	if err != nil {
		return ignore.Outer{}
	}
	out := ignore.Outer{Prefix: filepath.ToSlash(prefix)}
	for _, d := range dirs {
		rel, err := filepath.Rel(repo, d)
		if err != nil {
			continue
		}
		if rel = filepath.ToSlash(rel); rel == "." {
			rel = ""
		}
		for _, name := range ignore.OuterNames {
			if data, ok := readRuleFile(filepath.Join(d, name)); ok {
				out.Files = append(out.Files, ignore.OuterFile{Dir: rel, Name: name, Data: data})
			}
		}
	}
	if gd := gitDir(repo, gitEntry); gd != "" {
		if data, ok := readRuleFile(filepath.Join(gd, "info", "exclude")); ok {
			out.Files = append(out.Files, ignore.OuterFile{Name: ignore.ExcludeFile, Data: data})
		}
	}
	return out
}

// gitDir is the repository directory of repo's .git entry: the directory
// itself, or the target of a "gitdir:" file (worktrees, submodules).
func gitDir(repo string, gitEntry os.FileInfo) string {
	p := filepath.Join(repo, ".git")
	if gitEntry.IsDir() {
		return p
	}
	data, ok := readRuleFile(p)
	if !ok {
		return ""
	}
	target, ok := ignore.GitdirTarget(data)
	if !ok {
		return ""
	}
	if !filepath.IsAbs(target) {
		target = filepath.Join(repo, target)
	}
	return target
}

// readRuleFile reads a regular file of at most maxOuterRuleFile bytes.
func readRuleFile(p string) ([]byte, bool) {
	f, err := os.Open(p)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	if info, err := f.Stat(); err != nil || !info.Mode().IsRegular() {
		return nil, false
	}
	data, err := io.ReadAll(io.LimitReader(f, maxOuterRuleFile))
	return data, err == nil
}
