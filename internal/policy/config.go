package policy

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentls/agentls/internal/settings"
)

// LimitsSource is the limits object of one settings source.
type LimitsSource struct {
	File  string // the file, or SourceEditor
	Value any    // as decoded from JSON
}

// Problem is something wrong in one source. A bad rule drops that rule
// alone and a refused mode drops only the mode: the source's other rules
// apply. A file that cannot be read or is not valid JSON keeps its last
// good rules (Reload); with none, only read-only calls run (Evaluate).
type Problem struct {
	File  string // the file, or SourceEditor
	List  string // "allow", "ask", "deny", or "" for the file itself
	Index int    // the rule's index in List
	Rule  string // the rule as written
	Pos   int    // 1-based column in Rule, 0 when none
	Msg   string
	// Unmatchable says the rule parsed and is kept, but can never match
	// (a specifier its tool cannot have, a path no file has).
	Unmatchable bool
}

func (p Problem) String() string {
	if p.List == "" {
		return p.File + ": " + p.Msg
	}
	return fmt.Sprintf("%s: permissions.%s[%d] %q: %s", p.File, p.List, p.Index, p.Rule, p.Msg)
}

// BrokenNote ends the problem of a settings file that could not be used
// and has no earlier content to keep: only read-only calls run.
const BrokenNote = "; until it is fixed, only read-only calls run"

// NeverMatchesNote is in the problem of every rule kept although it can
// never match.
const NeverMatchesNote = "so this rule never matches"

// Warning reports whether a problem's text (Problem.String, maybe masked)
// is only a warning: a rule that never matches, kept. Every other
// configuration problem (a rule skipped, a file that cannot be used) is an
// error the user must fix.
func Warning(problem string) bool { return strings.Contains(problem, NeverMatchesNote) }

// source is one parsed settings source.
type source struct {
	name    string
	mode    string
	lists   [3][]Rule // allow, ask, deny
	limits  *LimitsSource
	sandbox *sandboxSource
}

// Load merges, from the highest precedence down: the editor's settings
// (may be nil), then for each workspace folder in order (roots, absolute
// and symlink-free) its .agentls/settings.local.json and
// .agentls/settings.json, then userConfigDir/agentls/settings.json (""
// skips it). The first folder's files are named by their relative paths
// (SourceLocal, SourceWorkspace), another folder's by their absolute ones;
// a folder's rules hold for its own files. Missing files are fine; every
// other problem is reported and its source skipped. Load never fails.
func Load(roots []string, editor *settings.Settings, userConfigDir string) (*Config, []Problem) {
	return load(roots, editor, userConfigDir, nil)
}

// Reload is Load for a running session whose configuration is c: a file
// that has become unreadable or invalid keeps the rules it had in c (a
// deny rule must not lapse because a save is half done or has a typo),
// and that is reported with the problem. A deleted file's rules go.
func (c *Config) Reload(roots []string, editor *settings.Settings, userConfigDir string) (*Config, []Problem) {
	return load(roots, editor, userConfigDir, c)
}

func load(roots []string, editor *settings.Settings, userConfigDir string, prev *Config) (*Config, []Problem) {
	var problems []Problem
	var srcs []source
	var before []source
	if prev != nil {
		prev.mu.RLock()
		before = prev.sources
		prev.mu.RUnlock()
	}
	var broken []Problem
	keepPrevious := func(name, file string) bool {
		for _, s := range before {
			if s.name == name {
				srcs = append(srcs, s)
				problems = append(problems, Problem{File: file, Msg: "the rules it had before stay in force until it is fixed"})
				return true
			}
		}
		return false
	}
	folder := ""
	add := func(name, file string, s settings.Settings, workspace bool) {
		src, probs := parseSettings(name, file, s, workspace)
		problems = append(problems, probs...)
		if src != nil && badRule(probs) {
			// A typo in a rule being edited must not lift the rule it
			// was: the earlier ask and deny rules stay until it is fixed.
			for _, old := range before {
				if old.name == name && keepStricter(src, old) {
					problems = append(problems, Problem{File: file, Msg: "its earlier ask and deny rules stay in force until it is fixed"})
				}
			}
		}
		if src != nil {
			for li := range src.lists {
				for i := range src.lists[li] {
					src.lists[li][i].folder = folder
				}
			}
			if src.sandbox != nil {
				src.sandbox.folder = folder
			}
			srcs = append(srcs, *src)
		} else {
			keepPrevious(name, file)
		}
	}
	if editor != nil {
		add(SourceEditor, SourceEditor, *editor, false)
	}
	read := func(name, file string, workspace bool) {
		display := name
		if !workspace {
			display = file
		}
		s, why, ok := settings.Read(file)
		if why != "" {
			prob := &Problem{File: display, Msg: why}
			if !keepPrevious(name, display) {
				// Its deny rules are unknown: nothing that is not
				// read-only runs until it is fixed (fail closed).
				prob.Msg += BrokenNote
				broken = append(broken, *prob)
			}
			problems = append(problems, *prob)
		}
		if ok {
			add(name, display, s, workspace)
		}
	}
	for i, root := range roots {
		files := settings.FolderFiles(root)
		folder = root
		if i == 0 {
			read(SourceLocal, files[0], true)
			read(SourceWorkspace, files[1], true)
			continue
		}
		// Named by the absolute path, as a verdict must say which folder's
		// file holds the rule; workspace sources all the same.
		read(files[0], files[0], true)
		read(files[1], files[1], true)
	}
	folder = ""
	if userConfigDir != "" {
		read(SourceUser, settings.UserSettings(userConfigDir), false)
	}

	c := &Config{sources: srcs, Folders: roots, broken: broken}
	if len(roots) > 0 {
		c.Root = roots[0]
	}
	if home, err := os.UserHomeDir(); err == nil {
		c.Home = home
	}
	if userConfigDir != "" {
		d := filepath.Join(userConfigDir, filepath.Dir(filepath.FromSlash(settings.UserFile)))
		c.UserDirs = []string{d}
		if real := realPath(slash(d)); real != slash(d) {
			c.UserDirs = append(c.UserDirs, real)
		}
	}
	for _, s := range srcs {
		if c.Mode == "" {
			c.Mode = s.mode
		}
		c.Allow = append(c.Allow, s.lists[0]...)
		c.Ask = append(c.Ask, s.lists[1]...)
		c.Deny = append(c.Deny, s.lists[2]...)
		if s.limits != nil {
			c.Limits = append(c.Limits, *s.limits)
		}
	}
	if c.Mode == "" {
		c.Mode = ModeDefault
	}
	var sbs []sandboxSource
	for _, s := range srcs {
		if s.sandbox != nil {
			sbs = append(sbs, *s.sandbox)
		}
	}
	var sbProblems []Problem
	c.sandbox, sbProblems = mergeSandbox(sbs, c.Home)
	problems = append(problems, sbProblems...)
	return c, problems
}

// parseSettings parses one source's rules and mode. Workspace files cannot
// select bypass mode: a cloned repository must not switch the checks off.
func parseSettings(name, file string, s settings.Settings, workspace bool) (*source, []Problem) {
	var problems []Problem
	src := &source{name: name}
	if s.Limits != nil {
		src.limits = &LimitsSource{File: file, Value: s.Limits}
	}
	if len(s.Sandbox) > 0 {
		b, err := ParseSandbox(s.Sandbox)
		if err != nil {
			// Fail closed: a typo must not switch the sandbox off.
			problems = append(problems, Problem{File: file, Msg: err.Error() + "; until it is fixed the sandbox is on with its defaults, and bash runs nothing unsandboxed"})
			b = brokenSandbox()
		}
		src.sandbox = &sandboxSource{block: b, workspace: workspace, file: file}
	}
	for li, list := range [3][]string{s.Permissions.Allow, s.Permissions.Ask, s.Permissions.Deny} {
		listName := [3]string{"allow", "ask", "deny"}[li]
		for i, raw := range list {
			r, err := ParseRule(raw)
			if err != nil {
				p := Problem{File: file, List: listName, Index: i, Rule: raw, Msg: err.Error() + "; " + ignoredWhat(name)}
				var re *RuleError
				if errors.As(err, &re) {
					p.Pos = re.Col
				}
				problems = append(problems, p)
				continue
			}
			r.Source = name
			if why := r.unmatchable(); why != "" {
				problems = append(problems, Problem{File: file, List: listName, Index: i, Rule: raw, Msg: why, Unmatchable: true})
			}
			src.lists[li] = append(src.lists[li], r)
		}
	}
	mode := s.Mode
	if mode == "" {
		mode = s.Permissions.DefaultMode
	}
	if mode != "" {
		m, ok := ParseMode(mode)
		switch {
		case !ok:
			problems = append(problems, Problem{File: file, Msg: fmt.Sprintf("mode must be one of %s, %s, %s, %s; got %q; the mode is ignored, the rules apply",
				ModeDefault, ModeAcceptEdits, ModeReadOnly, ModeBypass, mode)})
		case m == ModeBypass && workspace:
			problems = append(problems, Problem{File: file, Msg: "mode bypass is honoured only from the editor or the user settings; mode ignored, rules kept"})
		default:
			src.mode = m
		}
	}
	return src, problems
}

// badRule reports whether probs hold a rule that did not parse.
func badRule(probs []Problem) bool {
	for _, p := range probs {
		if p.List != "" && !p.Unmatchable {
			return true
		}
	}
	return false
}

// keepStricter adds to src the ask and deny rules of old it lacks, and
// reports whether there were any.
func keepStricter(src *source, old source) bool {
	added := false
	for li := 1; li < len(src.lists); li++ {
		have := map[string]bool{}
		for _, r := range src.lists[li] {
			have[r.String()] = true
		}
		for _, r := range old.lists[li] {
			if !have[r.String()] {
				src.lists[li] = append(src.lists[li], r)
				added = true
			}
		}
	}
	return added
}

// ignoredWhat says what a bad rule costs: that rule alone, so that a typo
// in one rule never switches off the others.
func ignoredWhat(name string) string {
	if name == SourceEditor {
		return "this rule is ignored; the other rules of initializationOptions apply"
	}
	return "this rule is ignored; the file's other rules apply"
}
