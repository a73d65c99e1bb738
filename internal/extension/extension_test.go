package extension

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/agentls/agentls/internal/tools"
)

var core = []string{"read", "ls", "grep", "find", "edit", "write", "bash", "tool_search"}

// bashRunner stands in for the bash tool's machinery in tests.
func bashRunner(ctx context.Context, c *tools.Call, command string, timeout time.Duration) (tools.Result, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, "bash", "-c", command).CombinedOutput()
	r := tools.Text(string(out))
	r.IsError = err != nil
	return r, nil
}

func mapFS(files map[string]string) fstest.MapFS {
	m := fstest.MapFS{}
	for name, data := range files {
		m[name] = &fstest.MapFile{Data: []byte(data)}
	}
	return m
}

const good = `{"name": "run_tests", "description": "Run the Go tests matching a pattern.",
 "inputSchema": {"type": "object", "properties": {"pattern": {"type": "string"}}, "required": ["pattern"]},
 "command": "go test -run {{pattern}} ./...", "timeout": 300}`

func TestLoadProblems(t *testing.T) {
	tests := []struct {
		name string
		file string
		want string // substring of the problem; "" = loads
	}{
		{"valid", good, ""},
		{"no schema means no arguments", `{"name":"fmt","description":"Format.","command":"make fmt"}`, ""},
		{"invalid JSON", `{"name": "x",`, "invalid definition"},
		{"unknown field", `{"name":"x","description":"d","command":"c","timout":5}`, "unknown field"},
		{"two values", `{"name":"x","description":"d","command":"c"} {}`, "more than one"},
		{"bad name", `{"name":"run tests","description":"d","command":"c"}`, "letters, digits"},
		{"long name", `{"name":"` + strings.Repeat("a", MaxNameLen+1) + `","description":"d","command":"c"}`, "letters, digits"},
		{"empty name", `{"description":"d","command":"c"}`, "name"},
		{"no description", `{"name":"x","command":"c"}`, "description is empty"},
		{"no command", `{"name":"x","description":"d"}`, "command is empty"},
		{"schema not an object", `{"name":"x","description":"d","command":"c","inputSchema":{"type":"string"}}`, `"type": "object"`},
		{"broken schema", `{"name":"x","description":"d","command":"c","inputSchema":{"type":"object","properties":{"a":{"type":42}}}}`, "schema"},
		{"timeout too long", `{"name":"x","description":"d","command":"c","timeout":601}`, "maximum"},
		{"negative timeout", `{"name":"x","description":"d","command":"c","timeout":-1}`, "timeout"},
		{"placeholder not in schema", `{"name":"x","description":"d","command":"echo {{nope}}"}`, "not a property"},
		{"placeholder in quotes", `{"name":"x","description":"d","command":"echo \"{{a}}\"","inputSchema":{"type":"object","properties":{"a":{"type":"string"}}}}`, "double quotes"},
		{"core name", `{"name":"bash","description":"d","command":"c"}`, "core tool"},
		{"core name in other case", `{"name":"Read","description":"d","command":"c"}`, "core tool"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := Dir{FS: mapFS(map[string]string{".agentls/tools/t.json": tc.file}), Path: ".agentls/tools", Label: "/ws/.agentls/tools", Scope: ScopeWorkspace}
			ts, probs := Load([]Dir{d}, core, bashRunner)
			if tc.want == "" {
				if len(probs) != 0 || len(ts) != 1 {
					t.Fatalf("tools %d, problems %v; want one tool", len(ts), probs)
				}
				return
			}
			if len(ts) != 0 {
				t.Errorf("bad file loaded a tool")
			}
			if len(probs) != 1 || !strings.Contains(probs[0].Msg, tc.want) || probs[0].File != "/ws/.agentls/tools/t.json" {
				t.Errorf("problems %v, want one for /ws/.agentls/tools/t.json containing %q", probs, tc.want)
			}
		})
	}
}

func TestLoadPrecedenceAndDefaults(t *testing.T) {
	ws := Dir{FS: mapFS(map[string]string{
		"tools/b.json":    good,
		"tools/a.json":    `{"name":"lint","description":"Lint.","command":"make lint","deferred":false}`,
		"tools/notes.txt": "not a definition",
		"tools/bad.json":  `nope`,
	}), Path: "tools", Label: "/ws/tools", Scope: ScopeWorkspace}
	user := Dir{FS: mapFS(map[string]string{
		"run_tests.json": `{"name":"RUN_TESTS","description":"User's own.","command":"make test"}`,
		"deploy.json":    `{"name":"deploy","description":"Deploy.","command":"make deploy"}`,
	}), Path: ".", Label: "/home/u/.config/agentls/tools", Scope: ScopeUser}
	missing := Dir{FS: mapFS(nil), Path: "nowhere", Label: "/none", Scope: ScopeWorkspace}
	ts, probs := Load([]Dir{ws, user, missing}, core, bashRunner)
	var names []string
	for _, tl := range ts {
		names = append(names, tl.Name)
	}
	if got := strings.Join(names, ","); got != "lint,run_tests,deploy" {
		t.Errorf("tools %s, want lint,run_tests,deploy (files in name order, workspace first)", got)
	}
	if len(probs) != 2 || !strings.HasSuffix(probs[0].File, "bad.json") || !strings.Contains(probs[1].Msg, "/ws/tools/b.json") {
		t.Errorf("problems %v, want bad.json and the shadowed user run_tests", probs)
	}
	for _, tl := range ts {
		if tl.Source != "extension" {
			t.Errorf("%s: source %q", tl.Name, tl.Source)
		}
		if want := tl.Name != "lint"; tl.Deferred != want {
			t.Errorf("%s: deferred = %v, want %v (default true)", tl.Name, tl.Deferred, want)
		}
	}
}

// recordPermission captures the labels the executor computed.
type recordPermission struct{ labels tools.Labels }

func (p *recordPermission) Check(_ context.Context, pr *tools.Prepared) tools.Decision {
	p.labels = pr.Labels
	return tools.Decision{Allow: true}
}

func TestToolRunsThroughExecutor(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash not installed")
	}
	dir := t.TempDir()
	pwned := filepath.Join(dir, "pwned")
	def := `{"name":"echo_args","description":"Print the arguments.","readOnly":true,
	 "inputSchema":{"type":"object","properties":{"msg":{"type":"string"},"n":{"type":"integer"}},"required":["msg"]},
	 "command":"printf '%s|' {{msg}} {{n}}"}`
	ts, probs := Load([]Dir{{FS: mapFS(map[string]string{"e.json": def}), Path: ".", Label: dir, Scope: ScopeWorkspace}}, core, bashRunner)
	if len(probs) != 0 {
		t.Fatal(probs)
	}
	reg := tools.NewRegistry()
	reg.MustRegister(ts...)
	perm := &recordPermission{}
	x := &tools.Executor{Registry: reg, Env: &tools.Env{}, Permission: perm}
	args, _ := json.Marshal(map[string]any{"msg": "$(touch " + pwned + ")", "n": "7"})
	res := x.Call(context.Background(), tools.Request{Name: "echo_args", Arguments: args}, nil)
	if res.IsError {
		t.Fatalf("call failed: %s", res.TextOf())
	}
	if want := "$(touch " + pwned + ")|7|"; res.TextOf() != want {
		t.Errorf("output %q, want %q", res.TextOf(), want)
	}
	if _, err := os.Stat(pwned); err == nil {
		t.Fatal("injected command ran")
	}
	ext, _ := res.Details["extension"].(map[string]any)
	if ext["command"] != `printf '%s|' '$(touch `+pwned+`)' '7'` {
		t.Errorf("details.extension = %v", ext)
	}
	if !perm.labels.ReadOnly || !reg.IsActive("echo_args") {
		t.Errorf("labels %+v, active %v: want read-only (printf agrees) and activated by the call", perm.labels, reg.IsActive("echo_args"))
	}
}

func TestLabelsDoNotTrustWorkspaceClaims(t *testing.T) {
	tests := []struct {
		name        string
		command     string
		readOnly    bool
		destructive bool
		trusted     bool
		wantRO      bool
		wantDestr   bool
	}{
		{"read-only claim that the shell confirms", "git status --short", true, false, false, true, false},
		{"workspace read-only claim the shell cannot confirm", "make check", true, false, false, false, false},
		{"user read-only claim is trusted", "make check", true, false, true, true, false},
		{"destructive command despite the claim", "rm -rf {{dir}}", true, false, false, false, true},
		{"destructive command despite a trusted claim", "rm -rf {{dir}}", true, false, true, false, true},
		{"declared destructive", "make deploy", false, true, false, false, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tl, err := Build(Def{Name: "t", Description: "d", Command: tc.command, ReadOnly: tc.readOnly, Destructive: tc.destructive,
				InputSchema: map[string]any{"type": "object", "properties": map[string]any{"dir": map[string]any{"type": "string"}}}}, "f", tc.trusted, bashRunner)
			if err != nil {
				t.Fatal(err)
			}
			reg := tools.NewRegistry()
			reg.MustRegister(tl)
			perm := &recordPermission{}
			x := &tools.Executor{Registry: reg, Env: &tools.Env{}, Permission: &denyAfter{perm}}
			x.Call(context.Background(), tools.Request{Name: "t", Arguments: json.RawMessage(`{"dir":"build"}`)}, nil)
			if perm.labels.ReadOnly != tc.wantRO || perm.labels.Destructive != tc.wantDestr {
				t.Errorf("labels %+v, want readOnly=%v destructive=%v", perm.labels, tc.wantRO, tc.wantDestr)
			}
		})
	}
}

// denyAfter records the labels and denies, so nothing runs.
type denyAfter struct{ r *recordPermission }

func (d *denyAfter) Check(ctx context.Context, p *tools.Prepared) tools.Decision {
	d.r.Check(ctx, p)
	return tools.Decision{Allow: false, Reason: "test"}
}

func TestDirsOnDisk(t *testing.T) {
	root, cfg := t.TempDir(), t.TempDir()
	for dir, body := range map[string]string{
		filepath.Join(root, ".agentls", "tools"): `{"name":"ws_tool","description":"d","command":"true"}`,
		filepath.Join(cfg, "agentls", "tools"):   `{"name":"user_tool","description":"d","command":"true"}`,
	} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "t.json"), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ts, probs := Load([]Dir{WorkspaceDir(root), UserDir(cfg), WorkspaceDir(filepath.Join(root, "missing"))}, core, bashRunner)
	if len(probs) != 0 || len(ts) != 2 || ts[0].Name != "ws_tool" || ts[1].Name != "user_tool" {
		t.Errorf("tools %v, problems %v", ts, probs)
	}
}

// tools/list states an extension tool's declared labels, checked against
// its command: not every tool that is not read-only is destructive.
func TestAnnotationsFollowTheDefinition(t *testing.T) {
	tests := []struct {
		name, def        string
		readOnly, destro bool
	}{
		{"plain command", `"command":"go build ./..."`, false, false},
		{"declared destructive", `"command":"make clean","destructive":true`, false, true},
		{"destructive command", `"command":"rm -rf {{p}}"`, false, true},
		{"read-only claim a command backs (user scope)", `"command":"ls {{p}}","readOnly":true`, true, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			def := `{"name":"x","description":"d.","inputSchema":{"type":"object","properties":{"p":{"type":"string"}}},` + tc.def + `}`
			ts, probs := Load([]Dir{{FS: mapFS(map[string]string{"x.json": def}), Path: ".", Label: "u", Scope: ScopeUser}}, core, bashRunner)
			if len(probs) != 0 || len(ts) != 1 {
				t.Fatal(probs)
			}
			a := ts[0].Annotations()
			if a["readOnlyHint"] != tc.readOnly || a["destructiveHint"] != tc.destro {
				t.Errorf("annotations %v, want readOnly %v destructive %v", a, tc.readOnly, tc.destro)
			}
		})
	}
}

func TestParseDefSaysWhatIsWrongInTheFilesTerms(t *testing.T) {
	tests := []struct{ name, file, want string }{
		{"array", `["x"]`, "must hold one JSON object"},
		{"empty", ``, "must hold one JSON object"},
		{"wrong type", `{"name": "x", "timeout": "60"}`, `"timeout" must be a number, not a JSON string`},
		{"wrong bool", `{"name": "x", "deferred": "no"}`, `"deferred" must be true or false, not a JSON string`},
		{"unknown field", `{"name": "x", "timout": 60}`, `unknown field "timout" (the fields are name,`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseDef([]byte(tc.file))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("ParseDef(%s) = %v, want an error containing %q", tc.file, err, tc.want)
			}
			if strings.Contains(err.Error(), "Go ") || strings.Contains(err.Error(), "extension.Def") {
				t.Errorf("error names Go internals: %v", err)
			}
		})
	}
	// An editor's schema reference is not a mistake.
	if _, err := ParseDef([]byte(`{"$schema": "https://example.com/s.json", "name": "x"}`)); err != nil {
		t.Errorf("$schema refused: %v", err)
	}
}

// A value longer than one command line can carry is refused naming the
// argument and nothing runs; a large one that fits arrives whole.
func TestValueOverACommandLineIsRefused(t *testing.T) {
	dir := t.TempDir()
	counted := filepath.Join(dir, "counted")
	tl, err := Build(Def{Name: "count", Description: "d", Command: "touch " + counted + "; printf '%s' {{v}} | wc -c",
		InputSchema: map[string]any{"type": "object", "properties": map[string]any{"v": map[string]any{"type": "string"}}}}, "f", false, bashRunner)
	if err != nil {
		t.Fatal(err)
	}
	reg := tools.NewRegistry()
	reg.MustRegister(tl)
	x := &tools.Executor{Registry: reg, Env: &tools.Env{}, Permission: &recordPermission{}}
	call := func(n int) tools.Result {
		args, _ := json.Marshal(map[string]any{"v": strings.Repeat("a", n)})
		return x.Call(context.Background(), tools.Request{Name: "count", Arguments: args}, nil)
	}
	r := call(200_000)
	if !r.IsError || !strings.Contains(r.TextOf(), `argument "v" is 200000 bytes`) || !strings.Contains(r.TextOf(), "Write it to a file") {
		t.Errorf("a value over a command line: isError=%v %q", r.IsError, r.TextOf())
	}
	if _, err := os.Stat(counted); err == nil {
		t.Errorf("the command ran")
	}
	if r := call(100_000); strings.TrimSpace(r.TextOf()) != "100000" {
		t.Errorf("a 100,000-byte value did not arrive whole: %.200q", r.TextOf())
	}
}
