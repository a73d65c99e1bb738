package policy

import (
	"cmp"
	"fmt"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/agentls/agentls/internal/mention"
	"github.com/agentls/agentls/internal/sandbox"
	"github.com/agentls/agentls/internal/settings"
	"github.com/agentls/agentls/internal/shell"
)

// Decision is the outcome of evaluating a call.
type Decision string

// Decisions.
const (
	Allow Decision = "allow"
	Ask   Decision = "ask"
	Deny  Decision = "deny"
)

// Modes.
const (
	ModeDefault     = "default"
	ModeAcceptEdits = "acceptEdits"
	ModeReadOnly    = "readOnly"
	ModeBypass      = "bypass"
)

// Built-in rule names, as verdicts report them.
const (
	BuiltinGitDir      = "builtin:git-dir"
	BuiltinSecretFile  = "builtin:secret-file"
	BuiltinDestructive = "builtin:destructive"
	BuiltinConfig      = "builtin:agentls-config"
	// BuiltinBrokenSettings refuses what is not read-only while a
	// settings file with no good content cannot be read or parsed.
	BuiltinBrokenSettings = "builtin:broken-settings"
)

// ParseMode accepts the four modes and Claude Code's names for two of them
// (bypassPermissions, plan).
func ParseMode(s string) (string, bool) {
	switch s {
	case ModeDefault, ModeAcceptEdits, ModeReadOnly, ModeBypass:
		return s, true
	case "bypassPermissions":
		return ModeBypass, true
	case "plan":
		return ModeReadOnly, true
	}
	return "", false
}

// PathRef is one path a call touches: Rel is slash-separated relative to its
// workspace folder ("." for the root, "" when outside every folder), Abs the
// absolute path with symlinks resolved.
type PathRef struct {
	Rel, Abs string
}

// Request describes a call for evaluation.
type Request struct {
	Tool string
	// Source is "core", "extension" or "mcp:<server>"; "" means core.
	Source string
	// ReadOnly and Destructive are the call's labels. For bash the command
	// analysis decides read-only; Destructive adds to it.
	ReadOnly, Destructive bool
	// Command is the bash command line.
	Command string
	// Shell is the caller's analysis of Command (with Options.Exists, which
	// makes `> newfile` non-destructive); nil: Evaluate analyzes Command.
	Shell *shell.Analysis
	// Paths are the real paths of a path tool (read, edit, write, grep,
	// find, ls); the searched directory for grep/find/ls.
	Paths []PathRef
	// InWorkspace: every path lies inside a workspace folder.
	InWorkspace bool
	// Cwd is where a bash command runs (absolute, real): its relative path
	// arguments are resolved there. "" means the first folder.
	Cwd string
	// Names is how the client's model sees the tool names, for the
	// reasons that name a tool.
	Names mention.Prefix
}

// Verdict is the decision and what made it.
type Verdict struct {
	Decision Decision
	// Rule is the deciding rule with its source, "mode:<mode>" or a
	// builtin:* name.
	Rule string
	// Reason explains the decision to the model or the user: which rule
	// decided and, for deny and ask, what to do instead.
	Reason string
}

// Config is the merged permission configuration of a session. It is safe
// for concurrent use once built; afterwards only session rules are added
// and Replace swaps in re-read settings files.
type Config struct {
	// Mode and the rule lists come from the settings sources; read them
	// through view once the Config is in use (Replace writes them).
	Mode             string
	Allow, Ask, Deny []Rule
	// Root is the first workspace folder: it anchors ../ patterns and the
	// path arguments of bash commands run there. Read it and Folders
	// through workspace once the Config is in use (Replace writes them).
	Root string
	// Folders are all workspace folders' roots (Root first; empty: Root
	// alone): a bash argument's Rel is relative to the one holding it.
	Folders []string
	// Home expands ~/ patterns; "" disables them.
	Home string
	// UserDirs are the user's agentls directory (userConfigDir/agentls)
	// as given and with symlinks resolved; bash writes there are asked
	// about as writes to a folder's .agentls/ are. Empty: none.
	UserDirs []string
	// Limits are the sources' tool limits, highest precedence first; read
	// them through LimitSources once the Config is in use.
	Limits []LimitsSource

	// sandbox is the merged sandbox block (SandboxSettings).
	sandbox sandbox.Settings

	mu                        sync.RWMutex
	sessionAllow, sessionDeny []Rule
	sources                   []source // as parsed, for Reload
	// broken are settings files that could not be read or parsed and
	// have no earlier good content: their deny rules are unknown.
	broken []Problem
}

// AddSessionRule adds a rule for the rest of the session (allowAlways /
// rejectAlways); list is "allow" or "deny". Session rules are trusted.
func (c *Config) AddSessionRule(list string, rule Rule) {
	rule.Source = SourceSession
	c.mu.Lock()
	defer c.mu.Unlock()
	if list == "deny" {
		c.sessionDeny = append(c.sessionDeny, rule)
	} else {
		c.sessionAllow = append(c.sessionAllow, rule)
	}
}

// Replace takes the mode and rules of next (the settings files read again
// after they changed); the session rules stay.
func (c *Config) Replace(next *Config) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.Mode, c.Allow, c.Ask, c.Deny = next.Mode, next.Allow, next.Ask, next.Deny
	c.sources = next.sources
	c.broken = next.broken
	c.Limits = next.Limits
	c.sandbox = next.sandbox
	// The folders may have changed (the settings are read again when they
	// do): the first one anchors the editor's and the user's rules.
	c.Root, c.Folders = next.Root, next.Folders
}

// workspace is Root and Folders as of now (Replace changes them).
func (c *Config) workspace() (root string, folders []string) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	root, folders = c.Root, c.Folders
	if len(folders) == 0 && root != "" {
		folders = []string{root}
	}
	return root, folders
}

// LimitSources returns Limits as of now (Replace changes them).
func (c *Config) LimitSources() []LimitsSource {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.Limits
}

// view is the configuration as of one moment: session rules first.
type view struct {
	mode             string
	allow, ask, deny []Rule
	broken           []Problem
}

func (c *Config) view() view {
	c.mu.RLock()
	defer c.mu.RUnlock()
	v := view{mode: c.Mode, ask: c.Ask, allow: c.Allow, deny: c.Deny, broken: c.broken}
	if len(c.sessionAllow) > 0 {
		v.allow = append(append([]Rule(nil), c.sessionAllow...), c.Allow...)
	}
	if len(c.sessionDeny) > 0 {
		v.deny = append(append([]Rule(nil), c.sessionDeny...), c.Deny...)
	}
	if v.mode == "" {
		v.mode = ModeDefault
	}
	return v
}

// call is a request with everything evaluation derives from it.
type call struct {
	Request
	tool, fam   string
	readOnly    bool
	destructive bool
	an          shell.Analysis
	line        string    // normalized command line
	risky       bool      // bash: a redirection into a file or a risky assignment
	args        []PathRef // bash: literal path-like arguments and files read by redirection
	changes     []PathRef // bash: what the line may write (see changedPaths)
	// root and folders are the workspace as of prepare (Config.workspace),
	// taken once per call.
	root    string
	folders []string
}

func (c *Config) prepare(r Request) *call {
	k := &call{Request: r, tool: strings.ToLower(r.Tool)}
	k.root, k.folders = c.workspace()
	if r.Source == "" || r.Source == "core" {
		k.fam = family(k.tool)
	}
	switch k.fam {
	case "bash":
		if r.Shell != nil {
			k.an = *r.Shell
		} else {
			k.an = shell.Analyze(r.Command, shell.Options{})
		}
		k.readOnly = k.an.ReadOnly
		k.destructive = k.an.Destructive || r.Destructive
		k.line = normalize(r.Command)
		k.risky = lineRisks(k.an)
		k.args = pathArgs(k.an.Commands, k, c.Home)
		k.changes = changedPaths(k.an, k, c.Home)
		for _, r := range k.an.Redirects {
			if r.Reads {
				k.args = append(k.args, literalPath(r.Path, k, c.Home)...)
			}
		}
	case "read":
		k.readOnly = true
	default:
		k.readOnly = r.ReadOnly
		// Core edit and write are governed by the mode; a destructive
		// label on other tools asks like destructive bash.
		k.destructive = r.Destructive && k.fam != "edit"
	}
	return k
}

// Evaluate decides a call. Order: the .git write ban, deny rules, a
// broken settings file (only read-only calls), readOnly mode, bypass mode, ask rules, trusted allow rules, built-in asks, other
// allow rules, the mode's default.
func (c *Config) Evaluate(r Request) Verdict {
	k := c.prepare(r)
	cv := c.view()
	allow, deny, mode := cv.allow, cv.deny, cv.mode

	if k.fam == "edit" || !k.readOnly && k.fam == "" && len(k.Paths) > 0 {
		for _, p := range k.Paths {
			if inGitDir(p) {
				return Verdict{Deny, BuiltinGitDir, k.Names.Render("writing inside .git/ is never allowed; use git commands through {{bash}} to change the repository")}
			}
		}
	}
	if rule, ok := c.firstMatch(deny, k); ok {
		if note := opaqueNote(rule, k); note != "" {
			// It only might be what the rule forbids; refusing is the
			// only answer that holds whatever it turns out to be.
			return Verdict{Deny, rule.String(), fmt.Sprintf("denied by the rule %s%s. Write the command out literally (no computed program name, no bash -c \"$(…)\", eval of a variable, source <(…) or pipe into a shell) so the rules can be checked.", rule, note)}
		}
		return Verdict{Deny, rule.String(), fmt.Sprintf("denied by the rule %s. %s", rule, insteadOfDeny(k))}
	}
	if len(cv.broken) > 0 && !k.readOnly {
		b := cv.broken[0]
		return Verdict{Deny, BuiltinBrokenSettings, k.Names.Sprintf("refused: the settings file %s (%s) could not be used, so the permission rules it holds are unknown and only read-only calls run until it is fixed. Ask the user to fix it; {{read}}, {{grep}}, {{find}}, {{ls}} and read-only shell commands still work.", b.File, b.Msg)}
	}
	if mode == ModeReadOnly && !k.readOnly {
		return Verdict{Deny, "mode:" + mode, k.Names.Render("the session is in readOnly mode: only read-only calls run. Use {{read}}, {{grep}}, {{find}}, {{ls}} or read-only shell commands, or ask the user to change the mode.")}
	}
	if mode == ModeBypass {
		return Verdict{Allow, "mode:" + mode, "allowed: bypass mode"}
	}
	if rule, ok := c.firstMatch(cv.ask, k); ok {
		return Verdict{Ask, rule.String(), fmt.Sprintf("the rule %s asks the user before this call%s", rule, opaqueNote(rule, k))}
	}
	if rules, ok := c.allowed(allow, k, true); ok {
		return Verdict{Allow, ruleNames(rules), "allowed by " + ruleNames(rules)}
	}
	if v, ok := c.builtinAsk(k); ok {
		return v
	}
	if rules, ok := c.allowed(allow, k, false); ok {
		return Verdict{Allow, ruleNames(rules), "allowed by " + ruleNames(rules)}
	}
	m := "mode:" + mode
	switch {
	case k.readOnly:
		return Verdict{Allow, m, "allowed: read-only call"}
	case mode == ModeAcceptEdits && k.fam == "edit" && k.InWorkspace:
		return Verdict{Allow, m, "allowed: acceptEdits mode allows edits inside the workspace"}
	}
	what := "this call is not read-only"
	if mode == ModeAcceptEdits {
		what = "acceptEdits mode allows only file edits inside the workspace without asking"
	}
	return Verdict{Ask, m, what + "; the user must approve it"}
}

func (c *Config) builtinAsk(k *call) (Verdict, bool) {
	if k.destructive {
		why := "it may delete or overwrite data"
		if len(k.an.Reasons) > 0 {
			why = k.an.Reasons[0]
		}
		return Verdict{Ask, BuiltinDestructive, "destructive call (" + why + "); the user must approve it"}, true
	}
	if k.fam == "edit" {
		for _, p := range k.Paths {
			if configFile(p) {
				return Verdict{Ask, BuiltinConfig, fmt.Sprintf("%s configures agentls itself (permission rules, tools, MCP servers), so a change to it could grant this session more; the user must approve it", display(p))}, true
			}
		}
	}
	if k.fam == "bash" {
		// The same for a command that writes there (`echo … >
		// .agentls/settings.local.json`, `mv .agentls/settings.json x`):
		// without this, the host's approval of a plain command was all
		// that stood between the model and its own rules.
		for _, p := range k.changes {
			if configFile(p) || c.userConfigFile(p) {
				return Verdict{Ask, BuiltinConfig, fmt.Sprintf("the command may change %s, which configures agentls itself (permission rules, tools, MCP servers), so it could grant this session more; the user must approve it", display(p))}, true
			}
		}
	}
	paths := k.args
	if k.fam == "read" {
		paths = k.Paths
	}
	for _, p := range paths {
		if secretFile(p) {
			return Verdict{Ask, BuiltinSecretFile, fmt.Sprintf("%s looks like a secret (keys, credentials); the user must approve reading it", display(p))}, true
		}
	}
	return Verdict{}, false
}

// opaqueNote explains a command rule that matched only because the line
// runs something that cannot be read before it runs.
func opaqueNote(rule Rule, k *call) string {
	if k.fam != "bash" || rule.kind != kindExact && rule.kind != kindPrefix && rule.kind != kindGlob || !opaqueCommand(k.an.Commands) {
		return ""
	}
	if anyCommand(withoutOpaque(k.an.Commands), rule) {
		return ""
	}
	return " (the line runs a command that is only known when it runs — a computed name such as $CMD, a line or file computed for a shell or eval, or a shell reading a pipe — so the rule cannot be ruled out)"
}

// withoutOpaque drops the opaque commands of cmds, recursively.
func withoutOpaque(cmds []shell.Command) []shell.Command {
	var out []shell.Command
	for _, cmd := range cmds {
		if cmd.Opaque {
			continue
		}
		cmd.Inner = withoutOpaque(cmd.Inner)
		out = append(out, cmd)
	}
	return out
}

func insteadOfDeny(k *call) string {
	switch k.fam {
	case "bash":
		return "Do not retry it or an equivalent command; find another way or ask the user to change the rule."
	case "read":
		return k.Names.Render("This path is off limits: do not try to read it another way (for example through {{bash}}).")
	case "edit":
		return "Do not write this path; tell the user what change you would make instead."
	}
	return "Do not retry this call; find another way or ask the user to change the rule."
}

func ruleNames(rules []Rule) string {
	var names []string
	for _, r := range rules {
		s := r.String()
		if !contains(names, s) {
			names = append(names, s)
		}
	}
	if len(names) == 0 {
		return "read-only commands"
	}
	return strings.Join(names, ", ")
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// firstMatch returns the first deny or ask rule matching the call: for bash
// any simple command (wrapped ones included) or the whole line; for path
// tools any path; for bash also a Read rule matching a literal path
// argument.
func (c *Config) firstMatch(rules []Rule, k *call) (Rule, bool) {
	for _, rule := range rules {
		if toolMatches(rule, k) && c.specMatchesAny(rule, k) {
			return rule, true
		}
		if k.fam == "bash" && rule.kind == kindPath {
			refs := k.args
			if family(rule.Tool) == "edit" {
				refs = k.changes
			} else if rule.Tool != "read" {
				refs = nil
			}
			for _, p := range refs {
				if c.pathMatch(rule, p, k.root) {
					return rule, true
				}
			}
		}
	}
	return Rule{}, false
}

func (c *Config) specMatchesAny(rule Rule, k *call) bool {
	switch rule.kind {
	case kindAny:
		return true
	case kindPath:
		for _, p := range k.Paths {
			if c.pathMatch(rule, p, k.root) {
				return true
			}
		}
	case kindExact, kindPrefix, kindGlob:
		if k.fam != "bash" {
			return false
		}
		if rule.kind == kindExact && k.line == rule.text || rule.kind == kindGlob && rule.matchGlob(k.line) {
			return true
		}
		if anyCommand(k.an.Commands, rule) {
			return true
		}
		// A line that does not parse: look for the rule's text anywhere at
		// a word boundary, erring towards matching.
		if k.an.ParseError != nil {
			if rule.kind == kindGlob {
				return globMatch(append(append([]string{""}, rule.glob...), ""), k.line)
			}
			return strings.Contains(" "+k.line+" ", " "+rule.text+" ") || rule.kind == kindPrefix && strings.Contains(" "+k.line, " "+rule.text)
		}
	}
	return false
}

// anyCommand reports whether a deny or ask rule matches one of cmds or the
// commands they wrap. It errs towards matching: a program named by its path
// (/bin/rm, ./node_modules/.bin/x) is also tried by its base name, and an
// opaque command (a computed name, a shell reading a pipe) matches every
// command rule, since it could run anything.
func anyCommand(cmds []shell.Command, rule Rule) bool {
	for _, cmd := range cmds {
		if cmd.Opaque {
			return true
		}
		if cmd.Words != nil && (rule.matchWords(cmd.Words) || rule.matchWords(baseNamed(cmd.Words))) ||
			rule.matchText(cmd.Text) || rule.matchText(baseNamedText(cmd.Text)) {
			return true
		}
		if anyCommand(cmd.Inner, rule) {
			return true
		}
	}
	return false
}

// opaqueCommand reports whether cmds (or what they wrap) hold an opaque
// command.
func opaqueCommand(cmds []shell.Command) bool {
	for _, cmd := range cmds {
		if cmd.Opaque || opaqueCommand(cmd.Inner) {
			return true
		}
	}
	return false
}

// baseNamed is words with a program path replaced by its base name
// (/bin/rm -f x → rm -f x); words itself when the name has no slash.
func baseNamed(words []string) []string {
	if len(words) == 0 || !strings.Contains(words[0], "/") {
		return words
	}
	out := slices.Clone(words)
	out[0] = path.Base(out[0])
	return out
}

// baseNamedText is baseNamed for a command's printed text.
func baseNamedText(text string) string {
	name, rest, _ := strings.Cut(strings.TrimSpace(text), " ")
	if !strings.Contains(name, "/") {
		return text
	}
	return strings.TrimSpace(path.Base(name) + " " + rest)
}

// allowed reports whether allow rules (only the trusted ones when trusted
// is set) allow the call, and which did. Bash: the whole line matches an
// exact rule, or every simple command matches a rule or is read-only by
// itself; wrappers and dynamic commands match exact rules only; a
// redirection into a file defeats every rule but an exact one for the line.
// Path tools: every path matches.
func (c *Config) allowed(rules []Rule, k *call, trusted bool) ([]Rule, bool) {
	var cand []Rule
	for _, r := range rules {
		if (!trusted || r.trusted()) && toolMatches(r, k) {
			cand = append(cand, r)
		}
	}
	if len(cand) == 0 {
		return nil, false
	}
	switch k.fam {
	case "bash":
		return c.bashAllowed(cand, k)
	}
	for _, r := range cand {
		switch r.kind {
		case kindAny:
			return []Rule{r}, true
		case kindPath:
			all := len(k.Paths) > 0
			for _, p := range k.Paths {
				all = all && c.pathMatch(r, p, k.root)
			}
			if all {
				return []Rule{r}, true
			}
		}
	}
	return nil, false
}

func (c *Config) bashAllowed(rules []Rule, k *call) ([]Rule, bool) {
	for _, r := range rules {
		if r.kind == kindAny || r.kind == kindExact && r.text == k.line {
			return []Rule{r}, true
		}
	}
	if k.an.ParseError != nil || len(k.an.Commands) == 0 || k.risky {
		return nil, false
	}
	var used []Rule
	for _, cmd := range k.an.Commands {
		r, ok := coveringRule(rules, cmd)
		switch {
		case ok:
			used = append(used, r)
		case commandReadOnly(cmd):
		default:
			return nil, false
		}
	}
	return used, len(used) > 0
}

func coveringRule(rules []Rule, cmd shell.Command) (Rule, bool) {
	for _, r := range rules {
		if r.kind == kindExact && normalize(cmd.Text) == r.text {
			return r, true
		}
		if !cmd.Dynamic && !cmd.Wrapper && r.kind != kindPath && r.matchWords(cmd.Words) {
			return r, true
		}
	}
	return Rule{}, false
}

// commandReadOnly classifies one simple command on its own, so that
// `cd sub && npm test` needs a rule only for npm test.
func commandReadOnly(cmd shell.Command) bool {
	return !cmd.Dynamic && !cmd.Wrapper && cmd.ReadOnly
}

// toolMatches compares tool names case-insensitively, with the Read and
// Edit families and MCP names (mcp__server, mcp__server__tool,
// mcp__server__*).
func toolMatches(r Rule, k *call) bool {
	if r.Tool == k.tool {
		return true
	}
	switch r.Tool {
	case "read", "edit":
		return k.fam == r.Tool
	}
	rest, ok := strings.CutPrefix(r.Tool, "mcp__")
	server, ok2 := strings.CutPrefix(strings.ToLower(k.Source), "mcp:")
	if !ok || !ok2 {
		return false
	}
	srv, tool, hasTool := strings.Cut(rest, "__")
	if srv != server {
		return false
	}
	return !hasTool || tool == "*" || k.tool == srv+"__"+tool
}

// pathMatch reports whether a path rule matches p; first is the first
// workspace folder (call.root).
func (c *Config) pathMatch(r Rule, p PathRef, first string) bool {
	rel, root := p.Rel, first
	if r.folder != "" {
		root = r.folder
		switch in, ok := within(slash(r.folder), slash(p.Abs)); {
		case ok:
			rel = in
		case p.Abs == "" && r.folder == first: // Rel is already relative to it
		default:
			rel = "" // outside the rule's folder: only absolute forms can match
		}
	}
	return r.pat.match(rel, slash(p.Abs), root, c.Home)
}

// within returns abs relative to root when abs lies below it (slash paths).
func within(root, abs string) (string, bool) {
	if root == "" || abs == "" {
		return "", false
	}
	rel, ok := strings.CutPrefix(abs, strings.TrimSuffix(root, "/")+"/")
	return rel, ok && rel != ""
}

// ReadAllowed reports whether a file's content may appear in a grep or
// read result without asking: no Read deny or ask rule matches it and, out
// of bypass mode, it is not a likely secret unless a trusted allow rule
// names it. Use it to filter search results.
func (c *Config) ReadAllowed(rel, abs string) bool {
	k := c.prepare(Request{Tool: "read", Paths: []PathRef{{Rel: rel, Abs: abs}}})
	cv := c.view()
	if _, ok := c.firstMatch(cv.deny, k); ok {
		return false
	}
	if cv.mode == ModeBypass {
		return true
	}
	if _, ok := c.firstMatch(cv.ask, k); ok {
		return false
	}
	if !secretFile(k.Paths[0]) {
		return true
	}
	_, ok := c.allowed(cv.allow, k, true)
	return ok
}

// secretNames are base-name globs (case-insensitive) covering every name
// secretFile calls a likely secret; some they cover are not (.env.example).
var secretNames = []string{".env*", "*.pem", "*.key", "id_*"}

// ReadRefusedNames says whether every path ReadAllowed refuses has a base
// name matching one of globs (case-insensitive, gitignore style), so that
// a search may skip those names unopened and ask ReadAllowed about the
// few it skipped: ok is false when a Read deny or ask rule applies, which
// could refuse any path.
func (c *Config) ReadRefusedNames() (globs []string, ok bool) {
	cv := c.view()
	for _, r := range cv.deny {
		if r.Tool == "read" {
			return nil, false
		}
	}
	if cv.mode == ModeBypass {
		return nil, true
	}
	for _, r := range cv.ask {
		if r.Tool == "read" {
			return nil, false
		}
	}
	return slices.Clone(secretNames), true
}

// ListAllowed reports whether a path may appear in a listing (ls, find):
// no Read deny rule matches it.
func (c *Config) ListAllowed(rel, abs string) bool {
	deny := c.view().deny
	if len(deny) == 0 {
		return true // the common case, asked once per listed path
	}
	_, ok := c.firstMatch(deny, c.prepare(Request{Tool: "read", Paths: []PathRef{{Rel: rel, Abs: abs}}}))
	return !ok
}

// SessionRules returns the rules that allowAlways / rejectAlways add for a
// request, as narrow as the request: the exact command line for bash (not
// a prefix: `npm run build` must not grant `npm run build && rm -rf ~`),
// the exact real file for path tools (Read for the reading tools, Edit for
// edit and write), and the tool itself for any other tool.
func SessionRules(r Request) []Rule {
	tool := strings.ToLower(r.Tool)
	fam := ""
	if r.Source == "" || r.Source == "core" {
		fam = family(tool)
	}
	var out []Rule
	add := func(s string) {
		if rule, err := ParseRule(s); err == nil {
			out = append(out, rule)
		}
	}
	switch {
	case fam == "bash":
		// Built directly: through ParseRule a line ending in " *" would
		// become a prefix rule.
		line := normalize(r.Command)
		out = append(out, Rule{Raw: "Bash(" + line + ")", Tool: "bash", Spec: line, kind: kindExact, text: line})
	case (fam == "read" || fam == "edit") && len(r.Paths) > 0:
		name := "Read"
		if fam == "edit" {
			name = "Edit"
		}
		for _, p := range r.Paths {
			abs := slash(p.Abs)
			if abs == "" {
				continue
			}
			pat := pathPattern{glob: escapeGlob(abs), abs: true}
			out = append(out, Rule{Raw: name + "(/" + abs + ")", Tool: strings.ToLower(name), Spec: "/" + abs, kind: kindPath, pat: pat})
		}
	}
	if len(out) == 0 {
		name := r.Tool
		if server, ok := strings.CutPrefix(r.Source, "mcp:"); ok {
			name = "mcp__" + server + "__" + strings.TrimPrefix(r.Tool, server+"__")
		}
		add(name)
	}
	return out
}

func inGitDir(p PathRef) bool {
	for _, s := range []string{p.Rel, slash(p.Abs)} {
		for _, part := range strings.Split(s, "/") {
			if strings.EqualFold(part, ".git") {
				return true
			}
		}
	}
	return false
}

// configFile: a file under a workspace folder's .agentls/ directory, where
// agentls reads its settings, extension tools and MCP servers.
func configFile(p PathRef) bool {
	return p.Rel == settings.ConfigDir || strings.HasPrefix(p.Rel, settings.ConfigDir+"/")
}

// userConfigFile: a path in the user's agentls directory (settings, which
// may select bypass mode, extension tools, MCP servers).
func (c *Config) userConfigFile(p PathRef) bool {
	for _, d := range c.UserDirs {
		if a := slash(p.Abs); a == slash(d) || strings.HasPrefix(a, strings.TrimSuffix(slash(d), "/")+"/") {
			return true
		}
	}
	return false
}

// secretFile: .env* (not .env.example/.env.sample), *.pem, *.key, and SSH
// private keys id_<type> (not .pub).
func secretFile(p PathRef) bool {
	name := p.Rel
	if name == "" {
		name = slash(p.Abs)
	}
	b := strings.ToLower(path.Base(name))
	switch {
	case b == ".env.example" || b == ".env.sample":
		return false
	case strings.HasPrefix(b, ".env"):
		return true
	case strings.HasSuffix(b, ".pem") || strings.HasSuffix(b, ".key"):
		return true
	case strings.HasPrefix(b, "id_") && !strings.Contains(b, "."):
		return true
	}
	return false
}

func display(p PathRef) string {
	if p.Rel != "" {
		return p.Rel
	}
	return p.Abs
}

// pathArgs collects the literal arguments of bash commands that look like
// paths, so that Read deny rules and the secret-file ask also cover `cat
// .env`. Best effort: globs, variables and a `cd` earlier in the line are
// not followed.
func pathArgs(cmds []shell.Command, k *call, home string) []PathRef {
	var out []PathRef
	for _, cmd := range cmds {
		out = append(out, pathArgs(cmd.Inner, k, home)...)
		if len(cmd.Words) < 2 {
			continue
		}
		for _, w := range cmd.Words[1:] {
			if strings.HasPrefix(w, "-") {
				_, v, ok := strings.Cut(w, "=")
				if !ok {
					continue
				}
				w = v
			} else if name, v, ok := strings.Cut(w, "="); ok && isOperandName(name) {
				// dd if=.env of=x: the value is the path; the whole
				// word is tried too (a file may be named a=b).
				out = append(out, literalPath(v, k, home)...)
			}
			out = append(out, literalPath(w, k, home)...)
		}
	}
	return out
}

// changedPaths is what an Edit deny or ask rule is matched against for a
// bash line: the files its redirections write and every literal argument
// of a command that is not read-only (`rm f`, `cp x f`, `sed -i … f`,
// `tee f`), erring towards matching as deny rules do: `cp f /tmp` counts
// f too. Arguments of read-only commands (`cat f`) do not count.
func changedPaths(an shell.Analysis, k *call, home string) []PathRef {
	var out []PathRef
	for _, r := range an.Redirects {
		if r.Writes {
			out = append(out, literalPath(r.Path, k, home)...)
		}
	}
	var walk func(cmds []shell.Command, top bool)
	walk = func(cmds []shell.Command, top bool) {
		for _, cmd := range cmds {
			walk(cmd.Inner, false)
			// What a wrapper runs carries no ReadOnly label of its own.
			if top && commandReadOnly(cmd) {
				continue
			}
			out = append(out, pathArgs([]shell.Command{{Words: cmd.Words}}, k, home)...)
		}
	}
	walk(an.Commands, true)
	return out
}

// isOperandName reports a dd-style operand name (if, of): lower-case
// letters only, so that an assignment-looking argument like VAR=x is
// not split.
func isOperandName(s string) bool {
	if s == "" || len(s) > 8 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 'a' || s[i] > 'z' {
			return false
		}
	}
	return true
}

// literalPath is the word w as path references: as written and, when
// symlinks resolve it elsewhere (cat envlink, a symlink to .env; cat
// selflink/.env, a symlink to .), its real path too. A word with glob
// characters or a newline is not followed.
func literalPath(w string, k *call, home string) []PathRef {
	if w == "" || strings.ContainsAny(w, "*?[{\n") {
		return nil
	}
	ref := argPath(w, k, home)
	out := []PathRef{ref}
	if ref.Abs != "" {
		if real := realPath(ref.Abs); real != ref.Abs {
			out = append(out, k.ref(real))
		}
	}
	return out
}

// argPath is a bash argument as a path: a relative one is taken in the
// command's cwd (the first folder when ""), and Rel is relative to the
// workspace folder holding it, as for a path tool's argument.
func argPath(w string, k *call, home string) PathRef {
	base := slash(cmp.Or(k.Cwd, k.root))
	w = slash(w)
	switch {
	case strings.HasPrefix(w, "~/") && home != "":
		w = path.Join(slash(home), w[2:])
	case !path.IsAbs(w):
		rel := path.Clean(w)
		if base == "" {
			return PathRef{Rel: rel}
		}
		w = path.Join(base, rel)
	}
	return k.ref(path.Clean(w))
}

// ref is the absolute slash path w with Rel relative to the workspace
// folder holding it.
func (k *call) ref(w string) PathRef {
	for _, root := range k.folders {
		if rel, ok := within(slash(root), w); ok {
			return PathRef{Rel: rel, Abs: w}
		}
	}
	return PathRef{Abs: w}
}

// realPath resolves the symlinks of the absolute slash path abs; for a
// path that does not exist, those of its longest existing parent. It
// returns abs when nothing resolves.
func realPath(abs string) string {
	p := filepath.FromSlash(abs)
	var rest []string
	for {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return slash(filepath.Join(append([]string{r}, rest...)...))
		}
		parent := filepath.Dir(p)
		if parent == p {
			return abs
		}
		rest = append([]string{filepath.Base(p)}, rest...)
		p = parent
	}
}

// lineRisks reports whether an analyzed command line redirects output
// into a file (anything but /dev/null, /dev/stdout, /dev/stderr and
// descriptor duplication) or assigns a variable that changes what runs
// (PATH=/tmp npm test). A line that does not parse counts as both.
func lineRisks(an shell.Analysis) bool {
	return an.ParseError != nil || an.WritesFile || slices.ContainsFunc(an.Assigned, riskyVar)
}

// riskyVar: variables that change which program runs or what it loads.
func riskyVar(name string) bool {
	for _, p := range []string{"LD_", "DYLD_", "GIT_", "BASH_FUNC_", "NODE_", "PYTHON", "PERL", "RUBY"} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	switch name {
	case "PATH", "BASH_ENV", "ENV", "SHELLOPTS", "BASHOPTS", "IFS", "PS4", "PROMPT_COMMAND", "HOME", "PAGER", "EDITOR", "VISUAL", "GOFLAGS", "NPM_CONFIG_PREFIX":
		return true
	}
	return false
}
