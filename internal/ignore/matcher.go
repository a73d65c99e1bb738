package ignore

import (
	"bufio"
	"bytes"
	"io"
	"io/fs"
	"path"
	"strings"
	"sync"
)

// Matcher holds the ignore rules of one workspace folder. The zero value is
// not usable; create one with NewMatcher.
type Matcher struct {
	fsys fs.FS
	// outer are the rules from above the folder root (see Outer), applied
	// below every rule file inside the folder of the same kind.
	outer [kindCount][]scoped
	// global is the user's global excludes file (Outer), applied afresh at
	// every nested repository root; nil for none.
	global *ruleFile

	mu   sync.RWMutex
	gen  uint64               // bumped by Invalidate; a load started earlier is not stored
	dirs map[string]*dirState // key: slash path relative to the root, "" = root
}

// scoped is one rule file together with the directory its patterns are
// relative to.
type scoped struct {
	dir  string
	file *ruleFile
	// prefix, for a rule file above the folder root (Outer), is the folder
	// relative to the file's directory; dir is then "".
	prefix string
}

// dirState is what the matcher knows about one directory. It is immutable
// once stored, so readers need no lock.
type dirState struct {
	// ignored: the directory itself (or an ancestor) is ignored, so
	// everything below it is; the other fields are then unused.
	ignored bool
	// own: the rule files found in this directory, kept to notice changes;
	// at a repository root own[kindGlobal] is the Matcher's global file.
	own [kindCount]*ruleFile
	// gitEntry: the directory holds a .git entry (a repository root).
	gitEntry bool
	// excludeAt: where the repository's info/exclude lives ("" if unknown).
	excludeAt string
	// lists: per kind, the rule files that apply to entries of this
	// directory, deepest first. kindGit stops at the innermost repository
	// root; kindExclude and kindGlobal hold only that root's info/exclude
	// and the global excludes scoped to it.
	lists [kindCount][]scoped
}

// NewMatcher returns the ignore rules of one workspace folder, read lazily
// through fsys and cached, with the rules git applies to it from above
// (outer; the zero Outer for none).
func NewMatcher(fsys fs.FS, outer Outer) *Matcher {
	lists, global := outer.lists()
	return &Matcher{fsys: fsys, dirs: make(map[string]*dirState), outer: lists, global: global}
}

// Ignored reports whether rel (slash-separated, relative to the folder root,
// "" or "." = root) is ignored. isDir matters for dir-only patterns. A path
// under an ignored directory is ignored, as in git. The root is never
// ignored; a path that leaves the root ("..") is not judged and reports
// false. Safe for concurrent use.
func (m *Matcher) Ignored(rel string, isDir bool) bool {
	rel, ok := cleanRel(rel)
	if !ok || rel == "" {
		return false
	}
	if hasGitComponent(rel) {
		return true
	}
	parent := m.dir(parentOf(rel))
	return parent.ignores(rel, isDir)
}

// Invalidate drops cached rules for dir and everything under it (call after
// a .gitignore, .ignore, .agentlsignore, .git/info/exclude or a .git entry
// changes; dir is the directory holding the changed file, "" = root).
func (m *Matcher) Invalidate(dir string) {
	dir, ok := cleanRel(dir)
	if !ok {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.gen++
	if dir == "" {
		clear(m.dirs)
		return
	}
	prefix := dir + "/"
	for k := range m.dirs {
		if k == dir || strings.HasPrefix(k, prefix) {
			delete(m.dirs, k)
		}
	}
}

// ignores evaluates the entry p (relative to the root) of directory s.
func (s *dirState) ignores(p string, isDir bool) bool {
	if s.ignored {
		return true
	}
	if path.Base(p) == gitDirName {
		return true
	}
	for k := range kindCount {
		for _, sc := range s.lists[k] {
			if matched, ign := sc.file.match(sc.pathFor(p), isDir); matched {
				return ign
			}
		}
	}
	return false
}

func (m *Matcher) cached(dir string) (*dirState, uint64) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.dirs[dir], m.gen
}

// store caches s unless Invalidate ran since gen was read; it returns the
// state to use (an equal one another goroutine stored first wins).
func (m *Matcher) store(dir string, s *dirState, gen uint64) *dirState {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.gen != gen {
		return s
	}
	if old, ok := m.dirs[dir]; ok {
		return old
	}
	m.dirs[dir] = s
	return s
}

// dir returns the state of directory dir, loading it and its ancestors as
// needed.
func (m *Matcher) dir(dir string) *dirState {
	s, gen := m.cached(dir)
	if s != nil {
		return s
	}
	if dir == "" {
		s = m.load("", nil, nil, false)
	} else {
		parent := m.dir(parentOf(dir))
		if parent.ignores(dir, true) {
			s = &dirState{ignored: true}
		} else {
			s = m.load(dir, parent, nil, false)
		}
	}
	return m.store(dir, s, gen)
}

// load reads the rule files of dir (not ignored, parent's state given,
// nil for the root). When listed, entries is dir's listing and spares
// probing for files that are absent.
func (m *Matcher) load(dir string, parent *dirState, entries []entry, listed bool) *dirState {
	s := &dirState{}
	var present [kindCount]bool
	var gitEntry *entry
	if listed {
		var rules [kindCount]*entry
		rules, gitEntry = scanRuleFiles(entries)
		for k := range rules {
			present[k] = rules[k] != nil
		}
	} else {
		present = [kindCount]bool{true, true, true}
		if info, err := fs.Lstat(m.fsys, fsPath(join(dir, gitDirName))); err == nil {
			gitEntry = &entry{name: gitDirName, typ: info.Mode().Type()}
		}
	}
	for k := range kindExclude {
		if present[k] {
			s.own[k] = m.readRuleFile(join(dir, k.fileName()))
		}
	}
	if gitEntry != nil {
		s.gitEntry = true
		if gd := m.gitDir(dir, gitEntry); gd != "" {
			s.excludeAt = join(gd, excludePath)
			s.own[kindExclude] = m.readRuleFile(s.excludeAt)
		}
		s.own[kindGlobal] = m.global
	}

	for k := range kindCount {
		var inherited []scoped
		switch {
		case s.gitEntry && (k == kindGit || k == kindExclude || k == kindGlobal):
			// A repository root starts a fresh set of git rules.
		case parent != nil:
			inherited = parent.lists[k]
		default:
			inherited = m.outer[k]
		}
		if s.own[k] == nil {
			s.lists[k] = inherited
			continue
		}
		l := make([]scoped, 0, len(inherited)+1)
		l = append(l, scoped{dir: dir, file: s.own[k]})
		s.lists[k] = append(l, inherited...)
	}
	return s
}

// gitDir returns the repository directory (relative to the root) of the
// .git entry in dir: .git itself, or the target of a "gitdir:" file
// (submodules, worktrees) when that lies inside the root; "" otherwise.
func (m *Matcher) gitDir(dir string, e *entry) string {
	p := join(dir, gitDirName)
	if e.isDir() {
		return p
	}
	if !e.typ.IsRegular() {
		return ""
	}
	data, err := fs.ReadFile(m.fsys, fsPath(p))
	if err != nil {
		return ""
	}
	target, ok := GitdirTarget(data)
	if !ok || path.IsAbs(target) {
		return ""
	}
	target, ok = cleanRel(path.Join(dir, target))
	if !ok {
		return ""
	}
	return target
}

// readRuleFile reads and parses one rule file; a missing or unreadable file
// yields nil (no rules), as git treats it.
func (m *Matcher) readRuleFile(p string) *ruleFile {
	f, err := m.fsys.Open(fsPath(p))
	if err != nil {
		return nil
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil || !info.Mode().IsRegular() {
		return nil
	}
	data, err := io.ReadAll(bufio.NewReader(f))
	if err != nil {
		return nil
	}
	return parseRuleFile(data, info.Size(), info.ModTime())
}

// cleanRel normalizes a caller's relative path to "" (root) or a clean
// slash path without leading "./" or "/". ok is false for paths that leave
// the root.
func cleanRel(rel string) (string, bool) {
	rel = strings.TrimLeft(rel, "/")
	if rel == "" || rel == "." {
		return "", true
	}
	rel = path.Clean(rel)
	if rel == "." {
		return "", true
	}
	if rel == ".." || strings.HasPrefix(rel, "../") {
		return "", false
	}
	return rel, true
}

func hasGitComponent(rel string) bool {
	for part := range strings.SplitSeq(rel, "/") {
		if part == gitDirName {
			return true
		}
	}
	return false
}

func parentOf(rel string) string {
	i := strings.LastIndexByte(rel, '/')
	if i < 0 {
		return ""
	}
	return rel[:i]
}

func join(dir, name string) string {
	if dir == "" {
		return name
	}
	return dir + "/" + name
}

// relTo returns p relative to dir; p must lie under dir.
func relTo(dir, p string) string {
	if dir == "" {
		return p
	}
	return p[len(dir)+1:]
}

// fsPath turns a root-relative path into an fs.FS name ("" → ".").
func fsPath(rel string) string {
	if rel == "" {
		return "."
	}
	return rel
}

// scanRuleFiles finds a listing's rule files (regular files only: git does
// not follow a symlinked .gitignore, neither do we) and its .git entry.
func scanRuleFiles(entries []entry) (rules [kindCount]*entry, git *entry) {
	for i := range entries {
		e := &entries[i]
		name := e.name
		if name == "" || name[0] != '.' {
			continue
		}
		for k := range kindExclude {
			if name == k.fileName() && e.typ.IsRegular() {
				rules[k] = e
			}
		}
		if name == gitDirName {
			git = e
		}
	}
	return rules, git
}

// GitdirTarget is the target of a ".git" file (worktrees, submodules:
// "gitdir: <path>"), as written; ok is false for anything else.
func GitdirTarget(data []byte) (target string, ok bool) {
	line, _, _ := bytes.Cut(data, []byte("\n"))
	target, ok = strings.CutPrefix(strings.TrimSpace(string(line)), "gitdir:")
	target = strings.TrimSpace(target)
	return target, ok && target != ""
}
