package shell

import (
	"fmt"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// MaxDepth is how many wrapper levels (bash -c 'sudo sh -c "..."') are
// parsed before the rest is only scanned for destructive program names.
const MaxDepth = 4

// Command is one simple command of a command line.
type Command struct {
	// Words are the literal words after stripping leading VAR=val
	// assignments; nil when Dynamic.
	Words []string
	// Text is the simple command as printed from the syntax tree, without
	// its assignments and redirections; whitespace is normalized.
	Text string
	// Dynamic: the command name or an argument is not a literal (`$CMD x`,
	// `ls $dir`, `$(...)` as the name).
	Dynamic bool
	// Wrapper: the command runs another command line (bash -c, eval, xargs,
	// env cmd, sudo, timeout, find -exec, ...). A prefix rule must not
	// allow it.
	Wrapper bool
	// Inner holds, for a wrapper, the commands it runs where they could be
	// read literally (`sudo rm x` has Inner [rm x], `sh <<'EOF'` the
	// commands of its here-document, `alias zz=rm` the alias's text).
	Inner []Command
	// Opaque: what the command runs can only be known when it runs — its
	// name is computed (`$CMD x`, `$(…) x`) or it is a shell reading
	// commands from a pipe (`… | sh`), or a wrapper runs a computed line
	// or file (`bash -c "$(…)"`, `eval "$x"`, `source <(…)`). No rule can
	// be checked against it.
	Opaque bool
	// ReadOnly: the command on its own — without the line's redirections,
	// leading assignments, functions or standard input, and classified
	// without Options.Exists — is read-only, so that `cd sub && npm test`
	// needs a rule for npm test only. Set for the line's own commands,
	// not for what a wrapper runs.
	ReadOnly bool
}

// Analysis is the classification of one command line.
type Analysis struct {
	// Commands lists every simple command in source order, including those
	// inside pipes, lists, subshells, groups, substitutions, loops,
	// conditionals and function bodies.
	Commands []Command
	// ReadOnly: the line parsed and runs only known read-only programs with
	// safe arguments, and writes nowhere but /dev/null.
	ReadOnly bool
	// Destructive: the line may delete or overwrite data, or kill
	// processes; the caller should ask the user.
	Destructive bool
	// Reasons explains, briefly, why the line is destructive (first) and why
	// it is not read-only.
	Reasons []string
	// ParseError is set when the line does not parse; Commands then holds
	// the commands of the statements that did parse.
	ParseError error
	// Assigned lists, in source order, the variables assigned before a
	// command or on their own (FOO=1 cmd, PATH=/x), in nested commands
	// too but not in the lines a wrapper runs.
	Assigned []string
	// WritesFile: a redirection of the line (not of the lines a wrapper
	// runs) writes into a file, that is anywhere but /dev/null,
	// /dev/stdout, /dev/stderr, a duplicated or closed descriptor.
	WritesFile bool
	// Redirects lists the literal file targets of the line's redirections,
	// the lines its wrappers run included (`cat < .env`, `bash -c 'echo x
	// > f'`), as written: a path rule must see the file `< .env` opens as
	// it sees `cat .env`'s argument. Targets that are not one literal
	// word, null devices, descriptors and here-documents are left out.
	Redirects []Redirect
}

// Redirect is one literal file a redirection opens.
type Redirect struct {
	Path   string
	Reads  bool // <, <>
	Writes bool // >, >>, >|, &>, &>>, >&file, <>
}

// Options adjusts Analyze.
type Options struct {
	// Exists reports whether a redirection target exists, so that `> f`
	// is destructive only when it overwrites something. Paths are passed as
	// written (relative to the command's working directory). Nil means
	// every target is assumed to exist.
	Exists func(path string) bool
}

// Analyze parses command as bash and classifies it. It does no I/O other
// than calling opt.Exists.
func Analyze(command string, opt Options) Analysis {
	a, res := analyze(command, opt, 0)
	return a.finish(res)
}

type analyzer struct {
	opt     Options
	depth   int
	printer *syntax.Printer
	buf     strings.Builder
	// funcs are the functions defined in this line; calling one runs a
	// body that is analyzed where it is defined.
	funcs     map[string]bool
	notRO     []string
	destroys  []string
	redirects []Redirect
	// stdin is what each simple command of the line reads as its standard
	// input, where that may be commands for a shell: a here-document or
	// here-string, or a pipe. cur is the entry of the command being
	// classified, taken by command() before it looks at inner commands.
	stdin map[*syntax.CallExpr]stdinSource
	cur   stdinSource
}

// stdinSource is a simple command's standard input, as far as a shell
// reading commands from it matters.
type stdinSource struct {
	script string // the text of a here-document or here-string
	piped  bool   // the output of the previous command of a pipeline
}

// analyze parses and walks src; the analyzer holds the verdicts.
func analyze(src string, opt Options, depth int) (*analyzer, Analysis) {
	a := &analyzer{opt: opt, depth: depth}
	var res Analysis
	if depth > MaxDepth {
		a.notReadOnly("commands nested deeper than the analysis goes")
		a.scan(src)
		return a, res
	}
	parser := syntax.NewParser(syntax.Variant(syntax.LangBash))
	var stmts []*syntax.Stmt
	// StmtsSeq hands over the statements before a syntax error too. It
	// can yield again after yielding an error (v3.14.1), so the loop never
	// breaks (that would panic) and ignores whatever follows the error.
	for st, err := range parser.StmtsSeq(strings.NewReader(src)) {
		switch {
		case res.ParseError != nil:
		case err != nil:
			res.ParseError = fmt.Errorf("parse bash: %w", err)
			a.notReadOnly("parse error: " + err.Error())
		default:
			stmts = append(stmts, st)
		}
	}
	for _, st := range stmts {
		syntax.Walk(st, func(n syntax.Node) bool {
			a.visit(n, &res)
			return true
		})
	}
	if res.ParseError != nil {
		// What did not parse may still run (bash runs line by line), so
		// look for destructive names in the raw text.
		a.scan(src)
	}
	return a, res
}

func (a *analyzer) finish(res Analysis) Analysis {
	res.ReadOnly = len(a.notRO) == 0 && len(a.destroys) == 0
	res.Destructive = len(a.destroys) > 0
	res.Redirects = a.redirects
	if n := len(a.destroys) + len(a.notRO); n > 0 {
		res.Reasons = make([]string, 0, n)
		res.Reasons = append(res.Reasons, a.destroys...)
		res.Reasons = append(res.Reasons, a.notRO...)
	}
	return res
}

func (a *analyzer) readOnly() bool { return len(a.notRO) == 0 && len(a.destroys) == 0 }

func (a *analyzer) notReadOnly(reason string) {
	if !slices.Contains(a.notRO, reason) {
		a.notRO = append(a.notRO, reason)
	}
}

func (a *analyzer) destroy(reason string) {
	if !slices.Contains(a.destroys, reason) {
		a.destroys = append(a.destroys, reason)
	}
}

func (a *analyzer) print(n syntax.Node) string {
	if a.printer == nil {
		a.printer = syntax.NewPrinter()
	}
	a.buf.Reset()
	if err := a.printer.Print(&a.buf, n); err != nil {
		return fmt.Sprintf("<unprintable: %v>", err)
	}
	return a.buf.String()
}

func (a *analyzer) visit(n syntax.Node, res *Analysis) {
	switch x := n.(type) {
	case *syntax.Stmt:
		for _, r := range x.Redirs {
			res.WritesFile = res.WritesFile || writesFile(r)
			a.redirect(r)
			if call, ok := x.Cmd.(*syntax.CallExpr); ok {
				a.noteStdin(call, r)
			}
		}
	case *syntax.BinaryCmd:
		if x.Op == syntax.Pipe || x.Op == syntax.PipeAll {
			if call, ok := x.Y.Cmd.(*syntax.CallExpr); ok {
				a.setStdin(call, func(s *stdinSource) { s.piped = true })
			}
		}
	case *syntax.CallExpr:
		for _, as := range x.Assigns {
			if as.Name != nil {
				res.Assigned = append(res.Assigned, as.Name.Value)
			}
		}
		a.assigns(x.Assigns)
		if len(x.Args) > 0 {
			a.cur = a.stdin[x]
			cmd := a.command(x.Args)
			a.cur = stdinSource{}
			if !cmd.Dynamic && !cmd.Wrapper {
				alone := &analyzer{printer: a.printer}
				alone.command(x.Args)
				cmd.ReadOnly = alone.readOnly()
			}
			res.Commands = append(res.Commands, cmd)
		}
	case *syntax.FuncDecl:
		// Definitions come before calls in source order, which is the
		// walk order; a call seen before its definition counts as unknown.
		if x.Name != nil {
			if a.funcs == nil {
				a.funcs = map[string]bool{}
			}
			a.funcs[x.Name.Value] = true
		}
	case *syntax.DeclClause:
		a.assigns(x.Args)
		cmd := a.decl(x)
		if !cmd.Dynamic {
			alone := &analyzer{printer: a.printer}
			alone.assigns(x.Args)
			cmd.ReadOnly = alone.readOnly()
		}
		res.Commands = append(res.Commands, cmd)
	}
}

// assigns flags variables that change what later commands run or read.
func (a *analyzer) assigns(as []*syntax.Assign) {
	for _, as := range as {
		if as.Name != nil && riskyVar(as.Name.Value) && !as.Naked {
			a.notReadOnly("setting " + as.Name.Value + " changes how commands run")
		}
	}
}

// decl turns export/local/declare/readonly/typeset into a Command. They
// only set or print shell variables, so they stay read-only.
func (a *analyzer) decl(d *syntax.DeclClause) Command {
	cmd := Command{Text: a.print(d)}
	words := []string{d.Variant.Value}
	for _, as := range d.Args {
		switch {
		case as.Naked && as.Value != nil:
			w := newWord(as.Value)
			cmd.Dynamic = cmd.Dynamic || w.dyn
			words = append(words, w.lit)
		case as.Naked && as.Name != nil:
			words = append(words, as.Name.Value)
		default:
			// Printing the assignment keeps its exact form (a=b, a+=b, a=(x)).
			cmd.Dynamic = cmd.Dynamic || as.Value == nil || newWord(as.Value).dyn || as.Array != nil
			if as.Value != nil && as.Array == nil && as.Index == nil {
				op := "="
				if as.Append {
					op = "+="
				}
				words = append(words, as.Name.Value+op+newWord(as.Value).lit)
			}
		}
	}
	if !cmd.Dynamic {
		cmd.Words = words
	}
	return cmd
}

// noteStdin records a here-document or here-string of call, which a shell
// would read as its commands.
func (a *analyzer) noteStdin(call *syntax.CallExpr, r *syntax.Redirect) {
	var body *syntax.Word
	switch r.Op {
	case syntax.Hdoc, syntax.DashHdoc:
		body = r.Hdoc
	case syntax.WordHdoc:
		body = r.Word
	default:
		return
	}
	if body == nil {
		return
	}
	// The printed body keeps its expansions ($x); parsed as a script, a
	// literal command name in it is still seen.
	text := a.print(body)
	if r.Op == syntax.WordHdoc {
		if w := newWord(body); w.static() {
			text = w.lit // the quotes of <<< 'rm x' are not part of the script
		}
	}
	a.setStdin(call, func(s *stdinSource) { s.script = text })
}

func (a *analyzer) setStdin(call *syntax.CallExpr, set func(*stdinSource)) {
	if a.stdin == nil {
		a.stdin = map[*syntax.CallExpr]stdinSource{}
	}
	s := a.stdin[call]
	set(&s)
	a.stdin[call] = s
}

// command classifies one simple command given its words.
func (a *analyzer) command(nodes []*syntax.Word) Command {
	in := a.cur // this command's own; the commands it wraps have none
	a.cur = stdinSource{}
	ws := newWords(nodes)
	cmd := Command{Text: a.print(&syntax.CallExpr{Args: nodes})}
	lits := make([]string, len(ws))
	for i, w := range ws {
		cmd.Dynamic = cmd.Dynamic || w.dyn
		lits[i] = w.lit
	}
	name := ws[0]
	if name.dyn || name.glob {
		cmd.Dynamic, cmd.Opaque = true, true
		a.notReadOnly(fmt.Sprintf("command name %s is not a literal", a.print(nodes[0])))
		// rm${IFS}-rf: the literal start of the name is still telling.
		if prefix := literalPrefix(nodes[0]); prefix != "" {
			if reason := destructive(prefix, nil); reason != "" {
				a.destroy(reason)
			}
		}
		return cmd
	}
	if !cmd.Dynamic {
		cmd.Words = lits
	}
	base, system := progName(name.lit)
	args := ws[1:]
	if system && a.funcs[base] {
		// A call to a function defined in this line: its body is
		// analyzed where it is defined.
		return cmd
	}
	if wr, ok := unwrap(base, args); ok {
		if wr.stdin {
			// A shell reading its commands from standard input.
			switch {
			case in.script != "":
				wr.scripts = append(wr.scripts, in.script)
				wr.unknown = false
			case in.piped:
				cmd.Opaque = true
			}
		}
		cmd.Wrapper = true
		cmd.Opaque = cmd.Opaque || wr.computed
		a.notReadOnly(base + " runs another command")
		cmd.Inner = a.inner(base, wr)
		return cmd
	}
	if reason := destructive(base, args); reason != "" {
		a.destroy(reason) // implies not read-only; one reason is enough
		return cmd
	}
	if base == "tee" {
		a.tee(args)
	}
	if !system {
		a.notReadOnly(name.lit + " is not a known read-only program")
		return cmd
	}
	if why := readOnly(base, args); why != "" {
		a.notReadOnly(why)
	}
	return cmd
}

// tee truncates its files as > does, unless -a appends.
func (a *analyzer) tee(args []word) {
	appends := false
	files, _ := optSpec{longArg: []string{"--output-error"}}.scan(args, func(name string, _ word) {
		appends = appends || name == "-a" || name == "--append"
	})
	if appends {
		return
	}
	for _, f := range files {
		if !f.static() {
			a.destroy("tee overwrites " + a.print(f.node))
		} else if !nullDevice(f.lit) && (a.opt.Exists == nil || a.opt.Exists(f.lit)) {
			a.destroy("tee overwrites " + f.lit)
		}
	}
}

// inner classifies what a wrapper runs.
func (a *analyzer) inner(base string, wr wrapped) []Command {
	var out []Command
	for _, words := range wr.commands {
		if len(words) == 0 {
			continue
		}
		if a.depth+1 > MaxDepth {
			a.scanWords(words)
			continue
		}
		nodes := make([]*syntax.Word, len(words))
		for i, w := range words {
			nodes[i] = w.node
		}
		a.depth++
		out = append(out, a.command(nodes))
		a.depth--
	}
	for _, script := range wr.scripts {
		sub, res := analyze(script, a.opt, a.depth+1)
		for _, r := range sub.destroys {
			a.destroy(r)
		}
		a.redirects = append(a.redirects, sub.redirects...)
		if res.ParseError != nil {
			a.notReadOnly(base + " runs a line that does not parse")
		}
		out = append(out, res.Commands...)
	}
	if wr.opaque != nil {
		// Words we cannot follow: scan them for destructive names, and
		// try each literal word as the start of the command, so that
		// rules err towards matching.
		a.scanWords(wr.opaque)
		out = append(out, a.candidates(wr.opaque)...)
	}
	if wr.unknown {
		a.notReadOnly(base + " runs a command that is not a literal")
	}
	return out
}

// candidates are the commands words might run, for a wrapper whose syntax
// is not followed: each suffix starting at a literal word that is not an
// option, at most scanWindow of them. They are not classified (scan did
// that), only listed for the rules.
func (a *analyzer) candidates(words []word) []Command {
	var out []Command
	for i, w := range words {
		if len(out) == scanWindow {
			break
		}
		if w.dyn || w.glob || w.lit == "" || strings.HasPrefix(w.lit, "-") {
			continue
		}
		nodes := make([]*syntax.Word, 0, len(words)-i)
		cmd := Command{}
		lits := make([]string, 0, len(words)-i)
		for _, x := range words[i:] {
			nodes = append(nodes, x.node)
			lits = append(lits, x.lit)
			cmd.Dynamic = cmd.Dynamic || x.dyn
		}
		if !cmd.Dynamic {
			cmd.Words = lits
		}
		if slices.Contains(nodes, nil) {
			cmd.Text = strings.Join(lits, " ")
		} else {
			cmd.Text = a.print(&syntax.CallExpr{Args: nodes})
		}
		out = append(out, cmd)
	}
	return out
}

// redirect classifies one redirection of a statement.
func (a *analyzer) redirect(r *syntax.Redirect) {
	a.noteTarget(r)
	truncates := false
	switch r.Op {
	case syntax.RdrIn, syntax.Hdoc, syntax.DashHdoc, syntax.WordHdoc, syntax.DplIn:
		return
	case syntax.DplOut:
		// >&2 and 2>&1 duplicate a descriptor, >&- closes one; bash
		// reads >&file as &>file.
		if w := r.Word.Lit(); w == "-" || isDigits(w) {
			return
		}
		truncates = true
	case syntax.RdrOut, syntax.RdrClob, syntax.RdrAll, syntax.RdrAllClob:
		truncates = true
	}
	w := newWord(r.Word)
	if w.static() && nullDevice(w.lit) {
		return
	}
	target := w.lit
	if !w.static() {
		target = a.print(r.Word)
	}
	op := r.Op.String()
	exists := true
	if truncates && w.static() && a.opt.Exists != nil {
		exists = a.opt.Exists(w.lit)
	}
	if truncates && exists {
		a.destroy(fmt.Sprintf("%s overwrites %s", op, target))
		return
	}
	a.notReadOnly(fmt.Sprintf("writes to %s via %s", target, op))
}

// noteTarget records the literal file a redirection opens.
func (a *analyzer) noteTarget(r *syntax.Redirect) {
	var rd Redirect
	switch r.Op {
	case syntax.RdrIn:
		rd.Reads = true
	case syntax.RdrInOut:
		rd.Reads, rd.Writes = true, true
	case syntax.RdrOut, syntax.AppOut, syntax.RdrClob, syntax.RdrAll, syntax.AppAll, syntax.RdrAllClob:
		rd.Writes = true
	case syntax.DplOut:
		if w := r.Word.Lit(); w == "-" || isDigits(w) {
			return
		}
		rd.Writes = true // >&file is &>file
	default:
		return // here-documents, <&N
	}
	if r.Word == nil {
		return
	}
	w := newWord(r.Word)
	if w.dyn || w.glob || w.lit == "" || nullDevice(w.lit) {
		return
	}
	rd.Path = w.lit
	a.redirects = append(a.redirects, rd)
}

// writesFile reports a redirection that writes somewhere other than a
// null device or another descriptor; a target that is not one literal
// counts as a file.
func writesFile(r *syntax.Redirect) bool {
	switch r.Op {
	case syntax.RdrOut, syntax.AppOut, syntax.RdrClob, syntax.RdrAll, syntax.AppAll, syntax.RdrAllClob, syntax.RdrInOut, syntax.DplOut:
		lit := r.Word.Lit()
		return !(r.Op == syntax.DplOut && (lit == "-" || isDigits(lit)) || nullDevice(lit))
	}
	return false
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func nullDevice(p string) bool {
	switch p {
	case "/dev/null", "/dev/stdout", "/dev/stderr":
		return true
	}
	return false
}

// riskyVar reports variables whose value changes which program runs, what
// a read-only program executes (pagers, diff drivers, preloaded
// libraries), or which configuration it reads.
func riskyVar(name string) bool {
	for _, p := range []string{"LD_", "DYLD_", "GIT_", "BASH_FUNC_"} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	switch name {
	case "PATH", "PAGER", "MANPAGER", "EDITOR", "VISUAL", "BASH_ENV", "ENV",
		"SHELLOPTS", "BASHOPTS", "IFS", "PS4", "PROMPT_COMMAND", "LESSOPEN",
		"LESSCLOSE", "NODE_OPTIONS", "PYTHONPATH", "PYTHONSTARTUP", "PERL5OPT",
		"PERL5LIB", "RUBYOPT", "HOME", "XDG_CONFIG_HOME", "RIPGREP_CONFIG_PATH",
		"GOFLAGS":
		return true
	}
	return false
}
