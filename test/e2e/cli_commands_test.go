package e2e

// Contract tests of the command line as a newcomer and an
// integrator meet it: README.md's commands, the usage text, the tools / call /
// mcp / audit subcommands, server mode's stdout discipline and ending, and
// the AGENTLS_* switches the docs name. Sources: README.md, docs/protocol.md,
// docs/tools.md, docs/protocol.md.

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// cliRepoRoot is the checkout's root (tests run in test/e2e).
func cliRepoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// cliServe runs agentls in server mode with args; its stdout is read as
// strict LSP frames, anything else on it fails the test.
func cliServe(t *testing.T, env []string, args ...string) *framingRaw {
	t.Helper()
	r := &framingRaw{}
	r.nextID.Store(1000)
	r.rawClient = startRaw(t, args, env, r.read)
	t.Cleanup(func() {
		r.close()
		if b := r.badFrames(); len(b) > 0 {
			t.Errorf("stdout carried bytes that are not frames: %q", b)
		}
	})
	return r
}

func cliInitParams(root string, opts map[string]any) map[string]any {
	p := map[string]any{"capabilities": map[string]any{}}
	if root != "" {
		p["workspaceFolders"] = []any{map[string]any{"uri": "file://" + filepath.ToSlash(root), "name": "ws"}}
	}
	if opts != nil {
		p["initializationOptions"] = opts
	}
	return p
}

// cliReadmeBlock returns the first ```sh block after heading in README.md.
func cliReadmeBlock(t *testing.T, heading string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(cliRepoRoot(t), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	i := strings.Index(s, heading)
	if i < 0 {
		t.Fatalf("README.md has no %q", heading)
	}
	s = s[i:]
	start := strings.Index(s, "```sh\n")
	if start < 0 {
		t.Fatalf("README.md: no sh block after %q", heading)
	}
	s = s[start+len("```sh\n"):]
	end := strings.Index(s, "```")
	if end < 0 {
		t.Fatal("README.md: unterminated sh block")
	}
	return s[:end]
}

// cliWords expands a call's words as the shell would (quotes removed).
func cliWords(t *testing.T, call *syntax.CallExpr) (assigns, args []string) {
	t.Helper()
	for _, a := range call.Assigns {
		v, err := expand.Literal(nil, a.Value)
		if err != nil {
			t.Fatal(err)
		}
		assigns = append(assigns, a.Name.Value+"="+v)
	}
	for _, w := range call.Args {
		v, err := expand.Literal(nil, w)
		if err != nil {
			t.Fatal(err)
		}
		args = append(args, v)
	}
	return assigns, args
}

// TestCLIReadmeBuildAndRun: README's "two commands" block is literally
// valid: the build names a main package and writes the binary the next
// command runs, and the serve line is `./agentls --root DIR` (the call's
// output is TestDocsREADMECall's, a session's TestProtocolLifecycle's).
func TestCLIReadmeBuildAndRun(t *testing.T) {
	t.Parallel()
	block := cliReadmeBlock(t, "## The two commands")
	f, err := syntax.NewParser().Parse(strings.NewReader(block), "README.md")
	if err != nil {
		t.Fatalf("README's build-and-run block is not valid shell: %v\n%s", err, block)
	}
	if len(f.Stmts) != 2 {
		t.Fatalf("README's build-and-run block has %d commands, want 2:\n%s", len(f.Stmts), block)
	}
	root := cliRepoRoot(t)

	bin, ok := f.Stmts[0].Cmd.(*syntax.BinaryCmd)
	if !ok || bin.Op != syntax.AndStmt {
		t.Fatalf("first README command is not `build && run`: %s", block)
	}
	buildAssigns, build := cliWords(t, bin.X.Cmd.(*syntax.CallExpr))
	_, run := cliWords(t, bin.Y.Cmd.(*syntax.CallExpr))
	t.Run("build", func(t *testing.T) {
		if len(build) < 2 || build[0] != "go" || build[1] != "build" {
			t.Fatalf("build command %q is not go build", build)
		}
		out := ""
		for i, a := range build {
			if a == "-o" && i+1 < len(build) {
				out = build[i+1]
			}
		}
		pkg := build[len(build)-1]
		if "./"+out != run[0] {
			t.Errorf("build writes %q but the next command runs %q", out, run[0])
		}
		if !reflect.DeepEqual(buildAssigns, []string{"CGO_ENABLED=0"}) {
			t.Errorf("build env %q, want CGO_ENABLED=0 (as shipped)", buildAssigns)
		}
		cmd := exec.Command("go", "list", "-f", "{{.Name}}", pkg)
		cmd.Dir = root
		name, err := cmd.Output()
		if err != nil || strings.TrimSpace(string(name)) != "main" {
			t.Fatalf("go list %s in the repo root: %q, %v; want package main", pkg, name, err)
		}
	})
	// The serve line is `./agentls --root DIR`.
	if _, serve := cliWords(t, f.Stmts[1].Cmd.(*syntax.CallExpr)); len(serve) != 3 || serve[0] != "./agentls" || serve[1] != "--root" {
		t.Errorf("README serve line %q, want ./agentls --root DIR", serve)
	}
}

// TestCLIRootNotADirectory: --root at a missing path or a file is a
// clear error naming it: at start for call and mcp, at initialize (which
// has no folders of its own) in server mode, whose client may name others.
func TestCLIRootNotADirectory(t *testing.T) {
	t.Parallel()
	ws := newWorkspace(t, map[string]string{"file.txt": "x\n"})
	bad := map[string]string{
		"missing": filepath.Join(ws, "no-such-dir"),
		"file":    filepath.Join(ws, "file.txt"),
	}
	for kind, root := range bad {
		t.Run(kind+"/call", func(t *testing.T) {
			r := runAgentls(t, ws, nil, "call", "ls", "--root", root)
			if r.code != 2 || !strings.Contains(r.stderr, root) {
				t.Errorf("call --root %s: code %d stderr %q; want 2 and the path named", root, r.code, r.stderr)
			}
		})
		t.Run(kind+"/mcp", func(t *testing.T) {
			r := runAgentls(t, ws, nil, "mcp", "--root", root)
			if r.code != 2 || !strings.Contains(r.stderr, root) || r.stdout != "" {
				t.Errorf("mcp --root %s: code %d stdout %q stderr %q; want 2 and the path named", root, r.code, r.stdout, r.stderr)
			}
		})
		t.Run(kind+"/serve", func(t *testing.T) {
			p := cliServe(t, nil, "--root", root)
			r := p.call("initialize", cliInitParams("", nil))
			e, _ := r["error"].(map[string]any)
			if e == nil || e["code"] != float64(-32602) || !strings.Contains(fmt.Sprint(e["message"]), filepath.Base(root)) {
				t.Errorf("initialize with --root %s: %v; want -32602 naming the path", root, r)
			}
			// The client's own folder still works.
			p2 := cliServe(t, nil, "--root", root)
			framingResult(t, p2.call("initialize", cliInitParams(ws, nil)))
			ls := framingResult(t, p2.call("tools/call", framingTool("ls", map[string]any{})))
			if !strings.Contains(framingText(ls), "file.txt") {
				t.Errorf("client folder ignored: %q", framingText(ls))
			}
		})
	}
}

// cliTools runs `agentls tools args...` and decodes the JSON array.
func cliTools(t *testing.T, env []string, args ...string) []map[string]any {
	t.Helper()
	r := runAgentls(t, t.TempDir(), env, append([]string{"tools"}, args...)...)
	if r.code != 0 {
		t.Fatalf("agentls tools %q: code %d stderr %q", args, r.code, r.stderr)
	}
	var tools []map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &tools); err != nil {
		t.Fatalf("agentls tools %q: not a JSON array: %v\n%.300s", args, err, r.stdout)
	}
	return tools
}

// TestCLIToolsMatchServer: `agentls tools --format F` prints what a
// default session's tools/list {format: F} returns.
func TestCLIToolsMatchServer(t *testing.T) {
	t.Parallel()
	p := cliServe(t, nil, "--root", t.TempDir())
	framingResult(t, p.call("initialize", cliInitParams("", nil)))
	for _, format := range []string{"mcp", "openai", "anthropic", "vscode"} {
		t.Run(format, func(t *testing.T) {
			cli := cliTools(t, nil, "--format", format)
			res := framingResult(t, p.call("tools/list", map[string]any{"format": format}))
			server, _ := res["tools"].([]any)
			byName := map[string]any{}
			for _, s := range server {
				m, _ := s.(map[string]any)
				name := fmt.Sprint(m["name"])
				if f, ok := m["function"].(map[string]any); ok {
					name = fmt.Sprint(f["name"])
				}
				byName[name] = m
			}
			if len(cli) == 0 || len(byName) == 0 {
				t.Fatalf("nothing to compare: cli %d tools, server %d", len(cli), len(byName))
			}
			for _, c := range cli {
				name := fmt.Sprint(c["name"])
				if f, ok := c["function"].(map[string]any); ok {
					name = fmt.Sprint(f["name"])
				}
				if !reflect.DeepEqual(any(c), byName[name]) {
					cb, _ := json.Marshal(c)
					sb, _ := json.Marshal(byName[name])
					t.Errorf("%s %s differs:\ncli    %.400s\nserver %.400s", format, name, cb, sb)
				}
			}
		})
	}
}

// cliBadSettingsWS is a workspace whose settings file makes agentls log.
func cliBadSettingsWS(t *testing.T) string {
	return newWorkspace(t, map[string]string{".agentls/settings.json": `{"permissions": {"deny": ["Read(("]}}`, "f.txt": "x\n"})
}

// cliSession runs initialize, a bash and a grep call, shutdown and exit,
// and returns the exit code.
func cliSession(t *testing.T, p *framingRaw, ws string) int {
	t.Helper()
	framingResult(t, p.call("initialize", cliInitParams(ws, map[string]any{"mode": "bypass"})))
	p.notify("initialized", map[string]any{})
	res := framingResult(t, p.call("tools/call", framingTool("bash", map[string]any{"command": "echo out; echo err >&2"})))
	if txt := framingText(res); !strings.Contains(txt, "out") || !strings.Contains(txt, "err") {
		t.Errorf("bash: %q", txt)
	}
	framingResult(t, p.call("tools/call", framingTool("grep", map[string]any{"pattern": "x"})))
	p.call("shutdown", nil)
	p.notify("exit", nil)
	return p.exitCode(5 * time.Second)
}

// TestCLIServeLogging: nothing but LSP frames on stdout, even at
// --log-level debug; logs go to stderr or --log-file; a --log-file that
// cannot be opened is a clear start error.
func TestCLIServeLogging(t *testing.T) {
	t.Parallel()
	for _, toFile := range []bool{false, true} {
		t.Run(fmt.Sprint("log-file ", toFile), func(t *testing.T) {
			ws := cliBadSettingsWS(t)
			logf := filepath.Join(t.TempDir(), "agentls.log")
			args := []string{"--root", ws, "--log-level", "debug"}
			if toFile {
				args = append(args, "--log-file", logf)
			}
			p := cliServe(t, nil, args...)
			if code := cliSession(t, p, ws); code != 0 {
				t.Errorf("exit code %d", code)
			}
			logs, _ := os.ReadFile(logf)
			if s := p.stderr.String(); !toFile && !strings.Contains(s, "settings.json") || toFile && (s != "" || !strings.Contains(string(logs), "settings.json")) {
				t.Errorf("the settings problem not logged to stderr, or with --log-file not to the file only: stderr %q, file %q", s, logs)
			}
		})
	}
	for _, sub := range [][]string{nil, {"mcp"}, {"call", "ls"}} {
		t.Run(fmt.Sprintf("log-file in missing dir %v", sub), func(t *testing.T) {
			ws := t.TempDir()
			logf := filepath.Join(ws, "no-such-dir", "agentls.log")
			r := runAgentls(t, ws, nil, append(append([]string{}, sub...), "--root", ws, "--log-file", logf)...)
			if r.code != 2 || r.stdout != "" || !strings.Contains(r.stderr, "--log-file") || !strings.Contains(r.stderr, logf) {
				t.Errorf("code %d stdout %q stderr %q; want 2 and an error naming --log-file and the path", r.code, r.stdout, r.stderr)
			}
		})
	}
}

// cliStartBlocked starts a server with a running bash command whose pid
// it returns.
func cliStartBlocked(t *testing.T) (*framingRaw, int) {
	t.Helper()
	ws := t.TempDir()
	p := cliServe(t, nil, "--root", ws)
	framingResult(t, p.call("initialize", cliInitParams("", map[string]any{"mode": "bypass"})))
	p.notify("initialized", map[string]any{})
	p.request("tools/call", framingTool("bash", map[string]any{"command": "echo $$ > pid.tmp && mv pid.tmp pid.txt && exec sleep 60"}))
	p.request("tools/call", framingTool("test_block", map[string]any{}))
	var pid int
	if !waitUntil(10*time.Second, func() bool {
		b, err := os.ReadFile(filepath.Join(ws, "pid.txt"))
		pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		return err == nil && pid > 0
	}) {
		t.Fatalf("bash command did not start; stderr %s", p.stderr.String())
	}
	return p, pid
}

// TestCLIServeEnding: SIGTERM ends server mode promptly, killing running
// commands (closing stdin is TestLifecycleClosingStdinCancelsAndExits').
func TestCLIServeEnding(t *testing.T) {
	t.Parallel()
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	p, pid := cliStartBlocked(t)
	start := time.Now()
	p.cmd.Process.Signal(syscall.SIGTERM)
	p.exitCode(5 * time.Second)
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("exit %v after SIGTERM", d)
	}
	if mcpioAlive(pid) {
		syscall.Kill(pid, syscall.SIGKILL)
		t.Errorf("the running bash command (pid %d) survived SIGTERM", pid)
	}
}
