package audit

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentls/agentls/internal/tools"
)

// fakeMasker hides the two secrets the tests use.
type fakeMasker struct{}

func (fakeMasker) Mask(s string) (string, map[string]int) {
	counts := map[string]int{}
	for _, sec := range []string{"sk-SECRET", "ghp_TOKEN"} {
		if n := strings.Count(s, sec); n > 0 {
			counts["token"] += n
			s = strings.ReplaceAll(s, sec, "[REDACTED]")
		}
	}
	return s, counts
}

func readEntries(t *testing.T, path string) []map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("line %q is not JSON: %v", sc.Text(), err)
		}
		out = append(out, m)
	}
	return out
}

func TestRecordConcurrentMasked(t *testing.T) {
	dir := t.TempDir()
	l, err := Open(dir, fakeMasker{})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Go(func() {
			args := json.RawMessage(fmt.Sprintf(`{"command":"curl -H 'Authorization: sk-SECRET' x/%d","env":{"ghp_TOKEN":["a ghp_TOKEN b"]},"n":%d}`, i, i))
			if err := l.Record(Entry{CallID: fmt.Sprintf("call-%d", i), Tool: "bash", Arguments: args, Decision: DecisionAllow, Rule: "allow: Bash(curl:*)", DurationMs: 1.5, ResultBytes: 10 * i, IsError: i%2 == 1}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	path := l.Path()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if ok, _ := filepath.Match("[0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9]-[0-9][0-9][0-9][0-9][0-9][0-9]-*.jsonl", filepath.Base(path)); !ok {
		t.Errorf("file name %s is not YYYYMMDD-HHMMSS-<pid>.jsonl", filepath.Base(path))
	}
	if info, _ := os.Stat(path); info.Mode().Perm() != 0o600 {
		t.Errorf("file mode %v, want 0600", info.Mode().Perm())
	}
	raw, _ := os.ReadFile(path)
	if bytes.Contains(raw, []byte("sk-SECRET")) || bytes.Contains(raw, []byte("ghp_TOKEN")) {
		t.Fatalf("a secret reached the log:\n%s", raw)
	}
	entries := readEntries(t, path)
	if len(entries) != 20 {
		t.Fatalf("%d lines, want 20", len(entries))
	}
	seen := map[string]bool{}
	for _, e := range entries {
		for _, f := range []string{"time", "callId", "tool", "arguments", "decision", "rule", "durationMs", "resultBytes", "isError", "redactions"} {
			if _, ok := e[f]; !ok {
				t.Errorf("entry lacks %s: %v", f, e)
			}
		}
		seen[e["callId"].(string)] = true
		args := e["arguments"].(map[string]any)
		if !strings.Contains(args["command"].(string), "[REDACTED]") || args["n"] == nil {
			t.Errorf("arguments not kept as masked JSON: %v", args)
		}
		if got := e["redactions"].(map[string]any)["token"]; got != 3.0 {
			t.Errorf("redactions = %v, want 3 (value, key, nested value)", got)
		}
		if _, err := time.Parse(time.RFC3339Nano, e["time"].(string)); err != nil {
			t.Errorf("time %v: %v", e["time"], err)
		}
	}
	if len(seen) != 20 {
		t.Errorf("%d distinct call ids, want 20", len(seen))
	}
	if err := l.Record(Entry{CallID: "late"}); err != nil || len(readEntries(t, path)) != 20 {
		t.Errorf("Record after Close wrote or failed: %v", err)
	}
}

func TestArgumentsCleaning(t *testing.T) {
	long := strings.Repeat("é", MaxStringBytes) // 2 bytes each
	tests := []struct {
		name string
		in   any
		want func(v any) bool
	}{
		{"nil", nil, func(v any) bool { return v == nil }},
		{"not JSON stays text, masked", json.RawMessage(`{oops sk-SECRET`), func(v any) bool { return v == "{oops [REDACTED]" }},
		{"typed map", map[string]string{"k": "sk-SECRET"}, func(v any) bool { return v.(map[string]any)["k"] == "[REDACTED]" }},
		{"plain map masked in a copy", map[string]any{"a": []any{"sk-SECRET", 1.5, true, nil}}, func(v any) bool {
			a := v.(map[string]any)["a"].([]any)
			return a[0] == "[REDACTED]" && a[1] == 1.5 && a[2] == true && a[3] == nil
		}},
		{"map with typed values normalised", map[string]any{"n": 3, "s": []string{"sk-SECRET"}}, func(v any) bool {
			m := v.(map[string]any)
			return m["n"] == 3.0 && m["s"].([]any)[0] == "[REDACTED]"
		}},
		{"a value JSON cannot hold is named, not logged", map[string]any{"x": math.NaN()}, func(v any) bool {
			s, ok := v.(string)
			return ok && strings.HasPrefix(s, "unloggable arguments: ")
		}},
		{"long string cut on a rune boundary", map[string]any{"content": long}, func(v any) bool {
			s := v.(map[string]any)["content"].(string)
			head, _, ok := strings.Cut(s, "…[cut: ")
			return ok && len(head) <= MaxStringBytes && strings.HasSuffix(s, fmt.Sprintf("%d bytes in all]", len(long))) && !strings.ContainsRune(head, '\uFFFD')
		}},
	}
	l := &Log{masker: fakeMasker{}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := fmt.Sprint(tc.in)
			got := l.clean(tc.in, map[string]int{})
			if !tc.want(got) {
				t.Errorf("clean(%v) = %v", tc.in, got)
			}
			if after := fmt.Sprint(tc.in); after != before {
				t.Errorf("clean changed its input: %s, was %s", after, before)
			}
		})
	}
}

// TestRecordMasksEveryString: every free-form string of an entry passes the
// masker, not only the arguments, and each hit is counted.
func TestRecordMasksEveryString(t *testing.T) {
	tests := []struct {
		name  string
		entry Entry
		field string // the entry field that held the secret
		want  string // what it must read in the log
		hits  float64
	}{
		{"tool name is a token", Entry{Tool: "ghp_TOKEN", Decision: DecisionInvalid}, "tool", "[REDACTED]", 1},
		{"token glued into a tool name", Entry{Tool: "nope_ghp_TOKEN", Decision: DecisionInvalid}, "tool", "nope_[REDACTED]", 1},
		{"call id", Entry{CallID: "id-sk-SECRET", Tool: "read", Decision: DecisionAllow}, "callId", "id-[REDACTED]", 1},
		{"rule quotes a token", Entry{Tool: "bash", Decision: DecisionDeny, Rule: "Bash(curl -H 'Bearer ghp_TOKEN':*)"}, "rule", "Bash(curl -H 'Bearer [REDACTED]':*)", 1},
		{"decision", Entry{Tool: "bash", Decision: "ask:sk-SECRET"}, "decision", "ask:[REDACTED]", 1},
		{"long tool name is cut", Entry{Tool: strings.Repeat("t", MaxStringBytes+1), Decision: DecisionInvalid}, "tool",
			strings.Repeat("t", MaxStringBytes) + fmt.Sprintf("…[cut: %d bytes in all]", MaxStringBytes+1), 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			l, err := Open(dir, fakeMasker{})
			if err != nil {
				t.Fatal(err)
			}
			if err := l.Record(tc.entry); err != nil {
				t.Fatal(err)
			}
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			raw, _ := os.ReadFile(l.Path())
			if bytes.Contains(raw, []byte("sk-SECRET")) || bytes.Contains(raw, []byte("ghp_TOKEN")) {
				t.Fatalf("a secret reached the log:\n%s", raw)
			}
			es := readEntries(t, l.Path())
			if len(es) != 1 || es[0][tc.field] != tc.want {
				t.Fatalf("entries = %v, want %s = %q", es, tc.field, tc.want)
			}
			r, _ := es[0]["redactions"].(map[string]any)
			if n, _ := r["token"].(float64); n != tc.hits {
				t.Errorf("redactions = %v, want %v hits", r, tc.hits)
			}
			// What `agentls audit` prints comes from the stored line.
			var out bytes.Buffer
			if err := Tail(dir, 0, &out); err != nil {
				t.Fatal(err)
			}
			got, _ := TailEntries(dir, 0)
			if len(got) != 1 || strings.Contains(out.String(), "ghp_TOKEN") || strings.Contains(Format(got[0]), "ghp_TOKEN") {
				t.Errorf("audit output leaks: %s", out.String())
			}
		})
	}
}

// TestHookMasksUnknownToolName: the name of an unknown tool is logged as the
// client sent it, so it is masked like the arguments.
func TestHookMasksUnknownToolName(t *testing.T) {
	dir := t.TempDir()
	l, err := Open(dir, fakeMasker{})
	if err != nil {
		t.Fatal(err)
	}
	x := &tools.Executor{Registry: tools.NewRegistry(), Env: &tools.Env{}, Permission: denyBash{}, OnResult: l.Hook()}
	x.Call(context.Background(), tools.Request{Name: "ghp_TOKEN", CallID: "c1"}, nil)
	l.Close()
	es := readEntries(t, l.Path())
	if len(es) != 1 || es[0]["tool"] != "[REDACTED]" || es[0]["decision"] != DecisionInvalid {
		t.Errorf("entries = %v, want one invalid call of tool [REDACTED]", es)
	}
}

// makeOld creates count old log files of the given (sparse) size with
// increasing modification times.
const deadPid = 99999999

func makeOld(t *testing.T, dir string, count int, size int64) []string {
	t.Helper()
	var paths []string
	base := time.Now().Add(-time.Hour)
	for i := range count {
		// A pid above any pid_max: a session long gone.
		p := filepath.Join(dir, fmt.Sprintf("20200101-0000%02d-%d.jsonl", i, deadPid))
		if err := os.WriteFile(p, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Truncate(p, size); err != nil {
			t.Fatal(err)
		}
		mt := base.Add(time.Duration(i) * time.Second)
		if err := os.Chtimes(p, mt, mt); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	return paths
}

func TestRotation(t *testing.T) {
	tests := []struct {
		name      string
		count     int
		size      int64
		wantGone  int // oldest files removed
		wantFiles int // files left, the new one included
	}{
		{"under the limits nothing goes", 5, 100, 0, 6},
		{"count: newest 20 kept", 25, 100, 6, MaxFiles},
		{"size: oldest go until the total fits", 6, 12 << 20, 2, 5},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			old := makeOld(t, dir, tc.count, tc.size)
			if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("x"), 0o600); err != nil {
				t.Fatal(err)
			}
			l, err := Open(dir, nil)
			if err != nil {
				t.Fatal(err)
			}
			// Pruning runs in the background; Close waits for it.
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			for i, p := range old {
				_, err := os.Stat(p)
				if gone := os.IsNotExist(err); gone != (i < tc.wantGone) {
					t.Errorf("%s: removed = %v, want %v", filepath.Base(p), gone, i < tc.wantGone)
				}
			}
			list, _ := files(dir)
			if len(list) != tc.wantFiles {
				t.Errorf("%d log files, want %d", len(list), tc.wantFiles)
			}
			if _, err := os.Stat(filepath.Join(dir, "notes.txt")); err != nil {
				t.Error("a file that is not a log was removed")
			}
		})
	}
}

// The directory is shared: a session's start prunes old logs of ended
// sessions, never the file another running agentls is writing, however
// old its last write. Its earlier (rotated) files may go.
func TestRotationKeepsRunningSessionsFile(t *testing.T) {
	dir := t.TempDir()
	running := os.Getppid() // alive while the test runs
	mk := func(name string, age time.Duration) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("{}\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		mt := time.Now().Add(-age)
		os.Chtimes(p, mt, mt)
		return p
	}
	rotated := mk(fmt.Sprintf("20200101-000000-%d.jsonl", running), 3*time.Hour)
	current := mk(fmt.Sprintf("20200101-000000-%d.2.jsonl", running), 2*time.Hour)
	ended := mk(fmt.Sprintf("20200101-000001-%d.jsonl", deadPid), 2*time.Hour)
	makeOld(t, dir, MaxFiles, 10) // newer than all three
	l, err := Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path string
		kept bool
	}{{current, true}, {rotated, false}, {ended, false}} {
		if _, err := os.Stat(c.path); (err == nil) != c.kept {
			t.Errorf("%s: kept = %v, want %v", filepath.Base(c.path), err == nil, c.kept)
		}
	}
}

func TestLogOwner(t *testing.T) {
	for name, want := range map[string]int{
		"20261201-010821-9822.jsonl":   9822,
		"20261201-010821-9822.3.jsonl": 9822,
		"notes.jsonl":                  0,
		"2026-x-y.jsonl":               0,
	} {
		if pid, ok := logOwner(name); pid != want || ok != (want > 0) {
			t.Errorf("logOwner(%q) = %d, %v; want %d", name, pid, ok, want)
		}
	}
}

func TestRotationWithinSession(t *testing.T) {
	dir := t.TempDir()
	l, err := Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	first := l.Path()
	arg := map[string]any{"content": strings.Repeat("x", MaxStringBytes)}
	for i := 0; ; i++ {
		if err := l.Record(Entry{CallID: fmt.Sprint(i), Tool: "write", Arguments: arg}); err != nil {
			t.Fatal(err)
		}
		if l.Path() != first {
			break
		}
		if i > 2*MaxFileBytes/MaxStringBytes {
			t.Fatal("file grew past MaxFileBytes without rotating")
		}
	}
	l.Close()
	info, _ := os.Stat(first)
	if info.Size() > MaxFileBytes {
		t.Errorf("first file is %d bytes, over %d", info.Size(), MaxFileBytes)
	}
	if !strings.HasSuffix(l.Path(), ".2.jsonl") || len(readEntries(t, l.Path())) != 1 {
		t.Errorf("continuation file %s should hold the last entry", l.Path())
	}
}

func TestTail(t *testing.T) {
	dir := t.TempDir()
	// Two sessions: 3 entries, then 2.
	for s, n := range []int{3, 2} {
		var buf bytes.Buffer
		for i := range n {
			b, _ := json.Marshal(Entry{CallID: fmt.Sprintf("s%d-%d", s, i), Tool: "read", Decision: DecisionAllow})
			buf.Write(append(b, '\n'))
		}
		p := filepath.Join(dir, fmt.Sprintf("2020010%d-000000-1.jsonl", s+1))
		if err := os.WriteFile(p, buf.Bytes(), 0o600); err != nil {
			t.Fatal(err)
		}
		mt := time.Now().Add(time.Duration(s-5) * time.Minute)
		os.Chtimes(p, mt, mt)
	}
	tests := []struct {
		name string
		dir  string
		n    int
		want string
	}{
		{"within the newest session", dir, 2, "s1-0 s1-1"},
		{"across sessions, oldest first", dir, 4, "s0-1 s0-2 s1-0 s1-1"},
		{"more than there are", dir, 50, "s0-0 s0-1 s0-2 s1-0 s1-1"},
		{"zero means all", dir, 0, "s0-0 s0-1 s0-2 s1-0 s1-1"},
		{"missing directory", filepath.Join(dir, "none"), 5, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := Tail(tc.dir, tc.n, &buf); err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
				var e Entry
				if line != "" && json.Unmarshal([]byte(line), &e) == nil {
					ids = append(ids, e.CallID)
				}
			}
			if got := strings.Join(ids, " "); got != tc.want {
				t.Errorf("Tail = %q, want %q", got, tc.want)
			}
		})
	}
}

type denyBash struct{}

func (denyBash) Check(_ context.Context, p *tools.Prepared) tools.Decision {
	if strings.Contains(p.Tool.Name, "deny") {
		return tools.Decision{Allow: false, Reason: "no", Rule: "deny: Deny()"}
	}
	return tools.Decision{Allow: true, Rule: "user", Asked: true, Answer: "allowOnce"}
}

func TestHook(t *testing.T) {
	dir := t.TempDir()
	l, err := Open(dir, fakeMasker{})
	if err != nil {
		t.Fatal(err)
	}
	reg := tools.NewRegistry()
	for _, name := range []string{"echo", "deny_me"} {
		tl, _ := tools.NewTool(name, "d", map[string]any{"type": "object", "properties": map[string]any{"s": map[string]any{"type": "string"}}})
		tl.SetHandler(func(map[string]any) tools.Labels { return tools.Labels{} }, func(_ context.Context, _ *tools.Call, a map[string]any) (tools.Result, error) {
			return tools.Text(a["s"].(string)), nil
		})
		reg.MustRegister(tl)
	}
	x := &tools.Executor{Registry: reg, Env: &tools.Env{}, Permission: denyBash{}, OnResult: l.Hook()}
	x.Call(context.Background(), tools.Request{Name: "ECHO", Arguments: json.RawMessage(`{"s":"hello sk-SECRET"}`), CallID: "c1"}, nil)
	x.Call(context.Background(), tools.Request{Name: "deny_me", Arguments: json.RawMessage(`{"s":"x"}`), CallID: "c2"}, nil)
	x.Call(context.Background(), tools.Request{Name: "nope", CallID: "c3"}, nil)
	l.Close()
	es := readEntries(t, l.Path())
	want := []struct{ id, tool, decision, rule string }{
		{"c1", "echo", "ask:allowOnce", "user"},
		{"c2", "deny_me", DecisionDeny, "deny: Deny()"},
		{"c3", "nope", DecisionInvalid, ""},
	}
	if len(es) != len(want) {
		t.Fatalf("%d entries, want %d", len(es), len(want))
	}
	for i, w := range want {
		e := es[i]
		rule, _ := e["rule"].(string)
		if e["callId"] != w.id || e["tool"] != w.tool || e["decision"] != w.decision || rule != w.rule {
			t.Errorf("entry %d = %v, want %+v", i, e, w)
		}
	}
	if es[0]["resultBytes"] != float64(len("hello sk-SECRET")) || es[0]["arguments"].(map[string]any)["s"] != "hello [REDACTED]" {
		t.Errorf("entry 0 = %v: want masked arguments and the result size (the executor has no masker here)", es[0])
	}
	if es[1]["isError"] != true || es[2]["isError"] != true {
		t.Error("denied and unknown calls must be errors")
	}
}

func TestDefaultDir(t *testing.T) {
	tests := []struct {
		name, env, xdg, want string
	}{
		{"override", "/tmp/a", "/x", "/tmp/a"},
		{"xdg", "", "/x", "/x/agentls/audit"},
		{"relative xdg is ignored", "", "rel", ""},
		{"home", "", "", ""},
	}
	home, _ := os.UserHomeDir()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(EnvDir, tc.env)
			t.Setenv("XDG_STATE_HOME", tc.xdg)
			want := tc.want
			if want == "" {
				want = filepath.Join(home, ".local", "state", "agentls", "audit")
			}
			if got, err := DefaultDir(); err != nil || got != want {
				t.Errorf("DefaultDir() = %q, %v; want %q", got, err, want)
			}
		})
	}
}

func TestDecisionOf(t *testing.T) {
	tests := []struct {
		name string
		d    tools.Decision
		want string
	}{
		{"allowed by a rule", tools.Decision{Allow: true, Rule: "allow: Read"}, DecisionAllow},
		{"denied by a rule", tools.Decision{Rule: "deny: Bash(rm:*)"}, DecisionDeny},
		{"user allowed always", tools.Decision{Allow: true, Asked: true, Answer: "allowAlways"}, "ask:allowAlways"},
		{"user rejected", tools.Decision{Asked: true, Answer: "rejectOnce"}, "ask:rejectOnce"},
		{"asking failed", tools.Decision{Asked: true}, DecisionAskUnanswered},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := DecisionOf(tc.d); got != tc.want {
				t.Errorf("DecisionOf(%+v) = %q, want %q", tc.d, got, tc.want)
			}
		})
	}
}
