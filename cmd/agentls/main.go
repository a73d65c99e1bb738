// Command agentls is the agent tool layer an editor launches over stdio.
//
//	agentls [--root DIR] [--log-file F] [--log-level L]   serve JSON-RPC (LSP framing) on stdin/stdout
//	agentls --version
//	agentls tools [--format mcp|openai|anthropic|vscode] [--all] [--root DIR]
//	agentls call TOOL ['JSON-ARGS'] [TOOL ['JSON-ARGS'] ...] [--root DIR]   run calls in one session
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"golang.org/x/term"

	"github.com/agentls/agentls/internal/extension"
	"github.com/agentls/agentls/internal/policy"
	"github.com/agentls/agentls/internal/proc"
	"github.com/agentls/agentls/internal/rpc"
	"github.com/agentls/agentls/internal/sandbox/launcher"
	"github.com/agentls/agentls/internal/session"
	"github.com/agentls/agentls/internal/settings"
	"github.com/agentls/agentls/internal/tools"
	"github.com/agentls/agentls/internal/tools/builtin"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "0.1.0-dev"

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

type globalFlags struct {
	roots    multiFlag
	logFile  string
	logLevel string
	version  bool
}

type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

func (g *globalFlags) register(fs *flag.FlagSet) {
	fs.Var(&g.roots, "root", "workspace folder when the client names none (repeatable)")
	fs.StringVar(&g.logFile, "log-file", "", "append logs to this file (default: stderr)")
	fs.StringVar(&g.logLevel, "log-level", "warn", "log level: debug, info, warn, error")
	fs.BoolVar(&g.version, "version", false, "print the version and exit")
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == proc.WatchdogCommand { // hidden: see adoptOrphans
		return proc.RunWatchdog(args[1:], stdin)
	}
	if len(args) > 0 && args[0] == launcher.Command { // hidden: internal/sandbox/launcher
		return launcher.Run(args[1:])
	}
	var g globalFlags
	fs := flag.NewFlagSet("agentls", flag.ContinueOnError)
	fs.SetOutput(stderr)
	g.register(fs)
	usage := func(w io.Writer) {
		fs.SetOutput(w)
		fmt.Fprintf(w, `usage:
  agentls [flags]                      serve JSON-RPC (LSP framing) on stdin/stdout
  agentls tools [--format F] [--all] [--root D]
                                       print the tool list as JSON (F: mcp, openai, anthropic, vscode)
  agentls tools --limits               print the default limits as a limits setting
  agentls call TOOL ['JSON'] [TOOL ['JSON'] ...] [--root D] [--mode M] [--json]
                                       run tool calls in one session and print their text
                                       (the first isError ends the run: exit 1)
  agentls mcp [--root D] [--mode M]    serve the same tools as an MCP server over stdio
                                       (M: default leaves what only it would ask to the host)
  agentls audit [--tail N] [--dir D] [--json]
                                       print the audit log
  agentls SUBCOMMAND --help            a subcommand's flags
  agentls --version
flags:
`)
		fs.PrintDefaults()
		fs.SetOutput(stderr)
	}
	fs.Usage = func() {} // printed below, where it goes depends on why
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) { // asked for: stdout, success
			usage(stdout)
			return 0
		}
		usage(stderr)
		return 2
	}
	if g.version {
		fmt.Fprintf(stdout, "agentls %s\n", version)
		return 0
	}
	rest := fs.Args()
	if len(rest) == 0 {
		return serve(g, stdin, stdout, stderr)
	}
	switch rest[0] {
	case "tools":
		return cmdTools(rest[1:], stdout, stderr)
	case "call":
		return cmdCall(g, rest[1:], stdout, stderr)
	case "mcp":
		return cmdMCP(g, rest[1:], stdin, stdout, stderr)
	case "audit":
		return cmdAudit(g, rest[1:], stdout, stderr)
	case "version":
		fmt.Fprintf(stdout, "agentls %s\n", version)
		return 0
	case "help":
		usage(stdout)
		return 0
	}
	fmt.Fprintf(stderr, "agentls: unknown command %q\n", rest[0])
	usage(stderr)
	return 2
}

// adoptOrphans makes agentls the subreaper of the commands it runs (Linux),
// so a daemon one leaves behind (`setsid server &`) is re-parented here, not
// to init, and makes the watchdog (agentls re-executed as `agentls
// __watchdog`, started by the session before its first command or upstream
// server), which stops what agentls started if agentls dies without doing
// so itself (SIGKILL). Called before any command runs: the watchdog's
// environment token must be inherited by all of them. The returned func,
// deferred until the session has closed, kills those still running and
// ends the watchdog.
func adoptOrphans(log *slog.Logger) (*proc.Watchdog, func()) {
	wd, err := proc.NewWatchdog(log)
	if err != nil {
		log.Debug("no watchdog: processes outlive agentls if it is killed", "err", err)
	}
	o, err := proc.AdoptOrphans()
	if err != nil {
		log.Debug("daemons left by commands are not adopted", "err", err)
	}
	return wd, func() {
		o.Close()
		wd.Close()
	}
}

// parseSub parses a subcommand's flags. -h or --help prints its usage on
// stdout and the command succeeds (as agentls --help does); a bad flag is
// reported with the usage on stderr. done says the command is over, with
// exit code code.
func parseSub(fs *flag.FlagSet, args []string, stdout io.Writer) (code int, done bool) {
	usage := fs.Usage
	if usage == nil {
		usage = func() {
			fmt.Fprintf(fs.Output(), "Usage of %s:\n", fs.Name())
			fs.PrintDefaults()
		}
	}
	fs.Usage = func() {} // printed below, where it goes depends on why
	err := fs.Parse(args)
	fs.Usage = usage
	switch {
	case errors.Is(err, flag.ErrHelp):
		out := fs.Output()
		fs.SetOutput(stdout)
		usage()
		fs.SetOutput(out)
		return 0, true
	case err != nil:
		usage()
		return 2, true
	}
	return 0, false
}

func newLogger(g globalFlags, stderr io.Writer) (*slog.Logger, *slog.LevelVar, func(), error) {
	lv := new(slog.LevelVar)
	if err := lv.UnmarshalText([]byte(g.logLevel)); err != nil {
		return nil, nil, nil, fmt.Errorf("--log-level %q: use debug, info, warn or error", g.logLevel)
	}
	w := stderr
	closer := func() {}
	if g.logFile != "" {
		f, err := os.OpenFile(g.logFile, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("--log-file: %w", err)
		}
		w, closer = f, func() { f.Close() }
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: lv})), lv, closer, nil
}

func serve(g globalFlags, stdin io.Reader, stdout, stderr io.Writer) int {
	log, lv, closeLog, err := newLogger(g, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "agentls:", err)
		return 2
	}
	defer closeLog()
	if onTerminal(stdin) {
		// Someone typed `agentls`: say what it is waiting for instead of
		// sitting silent.
		fmt.Fprintln(stderr, "agentls: serving JSON-RPC (LSP framing) on stdin/stdout for an editor; to try a tool, run: agentls call read '{\"path\": \"README.md\"}' (agentls help lists the commands)")
	}
	wd, closeOrphans := adoptOrphans(log)
	defer closeOrphans()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return rpc.Serve(ctx, stdin, stdout, rpc.Options{
		Version: version, Roots: g.roots, Log: log, LogLevel: lv,
		TestTools: testTools(), Watchdog: wd,
	})
}

// onTerminal reports whether r is a terminal (someone typed the command),
// not the pipe an editor connects.
func onTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

func cmdTools(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("agentls tools", flag.ContinueOnError)
	fs.SetOutput(stderr)
	format := fs.String("format", "mcp", "mcp, openai, anthropic or vscode")
	all := fs.Bool("all", false, "include deferred tools")
	limits := fs.Bool("limits", false, "print the default limits (a limits setting) instead")
	var roots multiFlag
	fs.Var(&roots, "root", "workspace folder whose .agentls/tools definitions are listed too (repeatable; default: the working directory)")
	if code, done := parseSub(fs, args, stdout); done {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "agentls tools: unexpected argument %q (the format is given as --format %s)\n", fs.Arg(0), fs.Arg(0))
		return 2
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if *limits {
		if err := enc.Encode(tools.DefaultLimits().Settings()); err != nil {
			fmt.Fprintln(stderr, "agentls tools:", err)
			return 1
		}
		return 0
	}
	reg := tools.NewRegistry()
	reg.MustRegister(builtin.Builtins(tools.DefaultLimits())...)
	reg.MustRegister(builtin.JobTools(tools.DefaultLimits())...)
	reg.MustRegister(builtin.NewToolSearch(reg))
	// Extension tools, as a session in those folders would have them
	// (upstream MCP servers' tools need their servers: a session lists them).
	if len(roots) == 0 {
		roots = multiFlag{"."}
	}
	var dirs []string
	for _, r := range roots {
		abs, err := filepath.Abs(r)
		if err != nil {
			fmt.Fprintln(stderr, "agentls tools: --root:", err)
			return 2
		}
		dirs = append(dirs, abs)
	}
	userDir, _ := settings.UserConfigDir()
	exts, problems := extension.Load(extension.DefaultDirs(dirs, userDir), builtin.ReservedNames(reg), builtin.RunExtensionCommand)
	for _, p := range problems {
		fmt.Fprintln(stderr, "agentls tools: skipped", p)
	}
	reg.MustRegister(exts...)
	out, err := tools.Describe(builtin.ListFor(reg, *format, *all), *format, reg)
	if err != nil {
		fmt.Fprintln(stderr, "agentls tools:", err)
		return 2
	}
	if err := enc.Encode(out); err != nil {
		fmt.Fprintln(stderr, "agentls tools:", err)
		return 1
	}
	return 0
}

func cmdCall(g globalFlags, args []string, stdout, stderr io.Writer) int {
	// Flags may follow the positional arguments: agentls call read '{}' --root d
	fs := flag.NewFlagSet("agentls call", flag.ContinueOnError)
	fs.SetOutput(stderr)
	g.register(fs)
	jsonOut := fs.Bool("json", false, "print the whole result as JSON")
	mode := fs.String("mode", "", "permission mode for this call: default, acceptEdits, readOnly, bypass (default: from the settings files, else default; what would ask is approved by running the command)")
	var pos []string
	for len(args) > 0 {
		if code, done := parseSub(fs, args, stdout); done {
			return code
		}
		args = fs.Args()
		if len(args) > 0 {
			pos = append(pos, args[0])
			args = args[1:]
		}
	}
	calls, err := parseCalls(pos)
	if err != nil {
		fmt.Fprintln(stderr, "agentls call:", err)
		fmt.Fprintln(stderr, "usage: agentls call TOOL ['JSON-ARGS'] [TOOL ['JSON-ARGS'] ...] [--root DIR] [--json]")
		return 2
	}
	if _, ok := policy.ParseMode(*mode); *mode != "" && !ok {
		fmt.Fprintf(stderr, "agentls call: --mode %q: use default, acceptEdits, readOnly or bypass\n", *mode)
		return 2
	}
	log, _, closeLog, err := newLogger(g, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "agentls:", err)
		return 2
	}
	defer closeLog()
	wd, closeOrphans := adoptOrphans(log)
	defer closeOrphans()
	folders, err := rootFolders("agentls call", g.roots, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "agentls call:", err)
		return 2
	}
	// The person who typed the command line is the one an "ask" would go
	// to, so asks are approved once; deny rules and modes still apply
	// (--mode readOnly refuses writes). Editing an existing file needs a read
	// in the same session: name both calls in one command line.
	// No watcher: the calls of one command line end before it would
	// matter, and arming it walks the whole tree.
	sess, err := session.New(session.Options{Folders: folders, Log: log, TestTools: testTools(), NoWatch: true,
		Editor: &settings.Settings{Mode: *mode}, Confirmer: commandLineApproval{}, Watchdog: wd})
	if err != nil {
		fmt.Fprintln(stderr, "agentls call:", err)
		return 2
	}
	defer sess.Close()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// The calls share one session, so an edit may follow its read. The
	// first failing call ends the run, as `set -e` would.
	var results []tools.Result
	for i, req := range calls {
		// Upstream MCP servers list their tools in the background: a
		// search or a tool name not registered yet waits for them, as in
		// the editor protocol and agentls mcp.
		sess.AwaitTools(ctx, req.Name)
		res := sess.Executor.Call(ctx, req, nil)
		results = append(results, res)
		if !*jsonOut {
			if len(calls) > 1 {
				if i > 0 {
					fmt.Fprintln(stdout)
				}
				// The arguments are echoed masked, as everything printed is.
				fmt.Fprintf(stdout, "== %s %s\n", req.Name, sess.Executor.MaskText(string(req.Arguments)))
			}
			printResult(stdout, res)
		}
		if res.IsError {
			if rest := len(calls) - i - 1; rest > 0 && !*jsonOut {
				fmt.Fprintf(stdout, "\n[%s failed: the %d call(s) after it were not run.]\n", req.Name, rest)
			}
			break
		}
	}
	if *jsonOut {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		if len(calls) == 1 {
			enc.Encode(results[0])
		} else {
			enc.Encode(results)
		}
	}
	if results[len(results)-1].IsError {
		return 1
	}
	return 0
}

// parseCalls reads `TOOL ['JSON-ARGS'] ...`: an argument that starts with
// '{' or '[' is the arguments of the tool before it (the executor answers a
// non-object), anything else names the next tool (arguments default to {}).
func parseCalls(pos []string) ([]tools.Request, error) {
	var calls []tools.Request
	for _, a := range pos {
		if t := strings.TrimSpace(a); strings.HasPrefix(t, "{") || strings.HasPrefix(t, "[") {
			if len(calls) == 0 {
				return nil, fmt.Errorf("arguments %s come before any tool name", a)
			}
			last := &calls[len(calls)-1]
			if last.Arguments != nil {
				return nil, fmt.Errorf("%s has two argument objects", last.Name)
			}
			last.Arguments = json.RawMessage(a)
			continue
		}
		if !looksLikeToolName(a) {
			return nil, notToolNameError(calls, a)
		}
		calls = append(calls, tools.Request{Name: a})
	}
	if len(calls) == 0 {
		return nil, fmt.Errorf("no tool named")
	}
	for i := range calls {
		if calls[i].Arguments == nil {
			calls[i].Arguments = json.RawMessage("{}")
		}
	}
	return calls, nil
}

// looksLikeToolName reports whether a may be a tool name (letters, digits,
// "_", "-", ".", "/"), so that key=value arguments or a quoted string are
// never taken for the next tool.
func looksLikeToolName(a string) bool {
	if a == "" {
		return false
	}
	for _, r := range a {
		if !(r == '_' || r == '-' || r == '.' || r == '/' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return false
		}
	}
	return true
}

// notToolNameError explains a positional argument that is neither a tool
// name nor a JSON object, with the call written the way it is expected.
func notToolNameError(calls []tools.Request, a string) error {
	if len(calls) == 0 {
		return fmt.Errorf("%q is not a tool name; start with the tool, e.g. agentls call read '{\"path\":\"README.md\"}'", a)
	}
	// key=value pairs become the JSON object they were meant as.
	obj := map[string]string{}
	for _, kv := range strings.Fields(a) {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			obj = nil
			break
		}
		obj[k] = v
	}
	example := `'{"path":"README.md"}'`
	if len(obj) > 0 {
		b, _ := json.Marshal(obj)
		example = "'" + string(b) + "'"
	}
	return fmt.Errorf("%q after %s is neither JSON arguments nor a tool name; give the arguments as one JSON object: agentls call %s %s", a, calls[len(calls)-1].Name, calls[len(calls)-1].Name, example)
}

func printResult(w io.Writer, res tools.Result) {
	fmt.Fprintln(w, res.TextOf())
	for _, c := range res.Content {
		if c.Type == "image" {
			fmt.Fprintf(w, "[image %s, %d base64 bytes]\n", c.MimeType, len(c.Data))
		}
	}
}

// commandLineApproval answers the permission gate's questions for `agentls
// call`: running the command is the user's approval of that one call.
type commandLineApproval struct{}

func (commandLineApproval) Confirm(context.Context, policy.ConfirmRequest) (policy.ConfirmAnswer, error) {
	return policy.ConfirmAnswer{Decision: "allowOnce"}, nil
}
