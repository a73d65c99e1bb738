package e2e

// Two agentls processes on one workspace at once: the editor protocol (an
// editor's agentls), `agentls mcp` (an MCP host) and `agentls call` from a
// terminal (docs/tools.md, docs/protocol.md, ARCHITECTURE.md).

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentls/agentls/test/harness"
)

// twoProc is an editor-protocol agentls and an `agentls mcp` on one
// workspace, sharing what two processes of one user share: the cache dir
// (spill files), the audit dir when given, and the user settings, which
// select bypass mode (deny rules still apply).
type twoProc struct {
	ws  string
	env []string
	ed  *harness.Client
	mc  *rootsMCP
	ctx context.Context
}

func twoProcStart(t *testing.T, files map[string]string, extraEnv ...string) *twoProc {
	t.Helper()
	cfg := t.TempDir()
	writeFile(t, filepath.Join(cfg, "agentls", "settings.json"), `{"mode":"bypass"}`)
	p := &twoProc{ws: resolvedWorkspace(t, files), env: append([]string{"XDG_CONFIG_HOME=" + cfg, "XDG_CACHE_HOME=" + t.TempDir()}, extraEnv...)}
	p.ed = harness.Start(t, harness.Options{Root: p.ws, Env: p.env, Process: true})
	p.ed.Initialize(testCtx(t, 10*time.Second), nil)
	p.mc, p.ctx = rootsStartMCPIn(t, "", p.env, nil, "--root", p.ws)
	return p
}

// side calls a tool through the editor process (0) or the MCP one (1).
func (p *twoProc) side(t *testing.T, i int) func(name string, args any) harness.Result {
	if i == 0 {
		return func(name string, args any) harness.Result { return p.ed.CallTool(p.ctx, name, args) }
	}
	return func(name string, args any) harness.Result { return p.mc.tool(t, p.ctx, name, args) }
}

// concurrently runs f(0)…f(n-1) at once (released together) and returns
// their results.
func concurrently(n int, f func(i int) harness.Result) []harness.Result {
	out := make([]harness.Result, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { <-start; out[i] = f(i) })
	}
	close(start)
	wg.Wait()
	return out
}

// A read stamp goes stale when another process (the editor's, agentls mcp,
// agentls call) changes the file: the edit is refused naming the file and
// saying to read again, the editor is told with workspace/externalChange,
// and after a fresh read the edit applies.
func TestTwoProcessesStaleAcrossProcesses(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		stale int  // the side that goes stale: 0 editor, 1 mcp
		third bool // the change comes from `agentls call`, not the other side
	}{
		{"editor goes stale after mcp edit", 0, false},
		{"mcp goes stale after editor edit", 1, false},
		{"editor goes stale after agentls call write", 0, true},
		{"mcp goes stale after agentls call write", 1, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := twoProcStart(t, map[string]string{"f.txt": "one\ntwo\nthree\n"})
			fp := filepath.Join(p.ws, "f.txt")
			stale, peer := p.side(t, tc.stale), p.side(t, 1-tc.stale)
			wantResult(t, "read", stale("read", map[string]any{"path": "f.txt"}), false, "two")
			if tc.third {
				if out, err := harness.Command(t, []string{"call", "read", `{"path":"f.txt"}`, "write", `{"path":"f.txt","content":"one\nTWO\nthree\n"}`, "--root", p.ws}, p.env...).CombinedOutput(); err != nil {
					t.Fatalf("agentls call write: %v\n%s", err, out)
				}
			} else {
				peer("read", map[string]any{"path": "f.txt"})
				wantResult(t, "peer edit", peer("edit", editCall("f.txt", "two", "TWO")), false, "Edited f.txt: 1 replacement, line 2.")
			}
			if tc.stale == 0 && !watchTreeWait(p.ed, "changed", true, fp) {
				t.Errorf("no workspace/externalChange {uri: %s, kind: changed, readStale}; got %+v", fileURI(fp), watchTreeChanges(p.ed))
			}
			r := stale("edit", editCall("f.txt", "three", "3"))
			wantResult(t, "stale edit", r, true, "f.txt", "changed since you read it", "read")
			if got := readFile(t, fp); got != "one\nTWO\nthree\n" {
				t.Errorf("a refused edit changed the file: %q", got)
			}
			wantResult(t, "re-read", stale("read", map[string]any{"path": "f.txt"}), false, "TWO")
			wantResult(t, "edit after re-read", stale("edit", editCall("f.txt", "three", "3")), false, "Edited f.txt: 1 replacement, line 3.")
			if tmp := tempLeftovers(p.ws); len(tmp) > 0 {
				t.Errorf("leftover temp files: %v", tmp)
			}
			for _, m := range p.mc.matching(func(m mcpMsg) bool { return m.Method != "" && !m.HasID }) {
				if !strings.HasPrefix(m.Method, "notifications/") {
					t.Errorf("agentls mcp sent a non-MCP notification %q", m.Method)
				}
			}
		})
	}
}

// The two processes read the same file, then change it at the same moment,
// 50 rounds: the editor edits its line, agentls mcp writes the whole file
// with its own line changed. At most one of two changes made against one
// read applies, the other is refused as stale and applies after a re-read;
// no update is lost, the file is never torn and no temp file is left.
func TestTwoProcessesRacingEdits(t *testing.T) {
	t.Parallel()
	pad := strings.Repeat("filler line to make the write take a moment\n", 200)
	body := func(a, b int) string { return fmt.Sprintf("A=%03d\n%sB=%03d\n", a, pad, b) }
	p := twoProcStart(t, map[string]string{"f.txt": body(0, 0)})
	fp := filepath.Join(p.ws, "f.txt")
	vals := []int{0, 0}
	change := func(i, to int) harness.Result {
		if i == 0 {
			return p.side(t, 0)("edit", editCall("f.txt", fmt.Sprintf("A=%03d\n", vals[0]), fmt.Sprintf("A=%03d\n", to)))
		}
		return p.side(t, 1)("write", map[string]any{"path": "f.txt", "content": body(vals[0], to)})
	}
	for round := 1; round <= 50; round++ {
		for i := range vals {
			wantResult(t, "read", p.side(t, i)("read", map[string]any{"path": "f.txt", "limit": 1}), false)
		}
		res := concurrently(2, func(i int) harness.Result { return change(i, round) })
		if !res[0].IsError && !res[1].IsError {
			t.Errorf("round %d: both changes made against the same read applied: the second replaced a file it had not read", round)
		}
		for i := range vals {
			if !res[i].IsError {
				vals[i] = round
			}
		}
		for i := range vals {
			if !res[i].IsError {
				continue
			}
			wantResult(t, fmt.Sprintf("round %d: side %d's refusal", round, i), res[i], true, "changed since you read it")
			p.side(t, i)("read", map[string]any{"path": "f.txt", "limit": 1})
			if r := change(i, round); r.IsError {
				t.Errorf("round %d: side %d's change after a re-read, with nobody else writing: %q", round, i, r.Text())
			} else {
				vals[i] = round
			}
		}
		if got := readFile(t, fp); got != body(vals[0], vals[1]) {
			t.Fatalf("round %d: lost update or torn file (%d bytes, head %q)", round, len(got), got[:min(len(got), 8)])
		}
		if tmp := tempLeftovers(p.ws); len(tmp) > 0 {
			t.Errorf("round %d: leftover temp files %v", round, tmp)
		}
	}
}

// twoProcAudit parses every line of every file in dir, failing the test on
// a line that is not a whole entry, and returns each file's entries'
// arguments.
func twoProcAudit(t *testing.T, dir string) map[string][]string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "*"))
	out := map[string][]string{}
	for _, f := range files {
		b := readFile(t, f)
		if b != "" && !strings.HasSuffix(b, "\n") {
			t.Errorf("%s: last line not terminated", filepath.Base(f))
		}
		for i, line := range strings.Split(strings.TrimSuffix(b, "\n"), "\n") {
			var e map[string]json.RawMessage
			err := json.Unmarshal([]byte(line), &e)
			for _, k := range []string{"time", "callId", "tool", "decision", "durationMs", "resultBytes", "isError", "arguments"} {
				if e[k] == nil && err == nil {
					err = fmt.Errorf("no %s", k)
				}
			}
			if err != nil {
				t.Errorf("%s line %d is not a whole audit entry (%v): %.200q", filepath.Base(f), i+1, err, line)
				continue
			}
			out[f] = append(out[f], string(e["arguments"]))
		}
	}
	return out
}

// The two processes share one audit directory and make 200 calls each at
// once (8 in flight per process, some longer than PIPE_BUF): every line is
// one whole JSON entry, both sessions' calls are all there, each session in
// its own file. (Pruning old files: internal/audit TestRotation*.)
func TestTwoProcessesAuditLogParallel(t *testing.T) {
	t.Parallel()
	const calls, inFlight = 200, 8
	dir := t.TempDir()
	p := twoProcStart(t, map[string]string{"a.txt": "a\n", "b.txt": "b\n"}, "AGENTLS_AUDIT_DIR="+dir)
	long := strings.Repeat("x", 6000)
	var wg sync.WaitGroup
	for side, who := range []string{"a", "b"} {
		call := p.side(t, side)
		jobs := make(chan int, calls)
		for i := range calls {
			jobs <- i
		}
		close(jobs)
		for range inFlight {
			wg.Go(func() {
				for i := range jobs {
					name, args := "read", map[string]any{"path": who + ".txt", "limit": i%5 + 1}
					if i%10 == 0 {
						name, args = "bash", map[string]any{"command": fmt.Sprintf(": twoproc-%s-%d %s", who, i, long)}
					}
					if r := call(name, args); r.IsError {
						t.Errorf("side %s call %d: %q", who, i, r.Text())
					}
				}
			})
		}
	}
	wg.Wait()
	if code := p.ed.Shutdown(p.ctx); code != 0 {
		t.Errorf("editor exit code %d", code)
	}
	if p.mc.close(); p.mc.exitCode(time.Second) < 0 {
		t.Fatal("agentls mcp did not exit at stdin EOF")
	}
	entries := twoProcAudit(t, dir)
	for _, who := range []string{"a", "b"} {
		n, files := 0, map[string]bool{}
		for f, es := range entries {
			for _, a := range es {
				if strings.Contains(a, `"`+who+`.txt"`) || strings.Contains(a, "twoproc-"+who+"-") {
					n++
					files[f] = true
				}
			}
		}
		if n != calls || len(files) != 1 {
			t.Errorf("session %s: %d calls in %d files, want %d in one file", who, n, len(files), calls)
		}
	}
}

// twoProcSpillNotice is the cut notice of a 3000-line bash output
// (docs/tools.md: "the notice gives its path and the line range shown").
var twoProcSpillNotice = regexp.MustCompile(`^\[Output cut: showing lines 1002-3000 of 3000 \(a result is at most 2000 lines / (?:51200|39000) bytes, notices included\)\. Full output: (/\S+) — read it with read \{"path": "(/\S+)", "offset": 1\}\.\]\n`)

func twoProcSpillCmd(tag string) string {
	return fmt.Sprintf("for i in $(seq 1 3000); do echo %s-$i; done", tag)
}

// Both processes cut big bash outputs at the same time: every notice names
// a file holding exactly its own call's output, a third session's start
// deletes none of them, and one process's shutdown deletes its own spill
// files but not the other's.
func TestTwoProcessesSpillFiles(t *testing.T) {
	t.Parallel()
	p := twoProcStart(t, map[string]string{"a.txt": "a\n"})
	tags := []string{"ed0", "ed1", "ed2", "mc0", "mc1", "mc2"}
	res := concurrently(len(tags), func(i int) harness.Result {
		return p.side(t, i/3)("bash", map[string]any{"command": twoProcSpillCmd(tags[i])})
	})
	paths := map[string]string{}
	for i, tag := range tags {
		m := twoProcSpillNotice.FindStringSubmatch(res[i].Text())
		if res[i].IsError || m == nil || m[1] != m[2] || !strings.HasSuffix(res[i].Text(), tag+"-3000") {
			t.Errorf("%s: want the cut notice with the spill path and the tail, got %.300q", tag, res[i].Text())
			continue
		}
		for other, q := range paths {
			if q == m[1] {
				t.Errorf("%s and %s were spilled to the same file %s", other, tag, q)
			}
		}
		paths[tag] = m[1]
	}
	check := func(when, prefix string, wantExist bool) {
		t.Helper()
		for tag, p := range paths {
			if !strings.HasPrefix(tag, prefix) {
				continue
			}
			b, err := os.ReadFile(p)
			if wantExist && (err != nil || string(b) != numberedLines(3000, func(i int) string { return fmt.Sprint(tag, "-", i) })) {
				t.Errorf("%s: %s's spill file %s does not hold its own output (%v, %d bytes)", when, tag, p, err, len(b))
			} else if !wantExist && err == nil {
				t.Errorf("%s: %s's spill file %s is still there", when, tag, p)
			}
		}
	}
	check("after the parallel calls", "", true)
	if out, err := harness.Command(t, []string{"call", "bash", `{"command":"` + twoProcSpillCmd("cli") + `"}`, "--root", p.ws}, p.env...).CombinedOutput(); err != nil || !strings.Contains(string(out), "Full output: ") {
		t.Errorf("agentls call bash: %v %.200q", err, out)
	}
	check("after another session started and ended", "", true)
	if code := p.ed.Shutdown(p.ctx); code != 0 {
		t.Errorf("editor exit code %d", code)
	}
	check("after the editor process shut down", "mc", true)
	check("after the editor process shut down (docs: deleted at shutdown)", "ed", false)
	if q := paths["mc2"]; q != "" {
		wantResult(t, "mcp read of its spill file after the editor exited", p.mc.tool(t, p.ctx, "read", map[string]any{"path": q, "offset": 2999}), false, "mc2-2999\n", "mc2-3000")
	}
}

// A deny rule saved into .agentls/settings.json (as editors save: a new
// file renamed over the old) while both processes run applies to the next
// call of each.
func TestTwoProcessesSettingsDeny(t *testing.T) {
	t.Parallel()
	p := twoProcStart(t, map[string]string{"a.txt": "a\n", ".agentls/settings.json": `{"permissions":{"deny":[]}}`})
	for i := range 2 {
		wantResult(t, "touch before the rule", p.side(t, i)("bash", map[string]any{"command": fmt.Sprint("touch before-", i)}), false)
	}
	tmp := filepath.Join(p.ws, ".agentls", "settings.json.tmp")
	writeFile(t, tmp, `{"permissions":{"deny":["Bash(touch:*)"]}}`)
	if err := os.Rename(tmp, filepath.Join(p.ws, ".agentls", "settings.json")); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		wantResult(t, "the next call after the deny rule was saved", p.side(t, i)("bash", map[string]any{"command": fmt.Sprint("touch after-", i)}), true, "Bash(touch:*)")
		if _, err := os.Stat(filepath.Join(p.ws, fmt.Sprint("after-", i))); err == nil {
			t.Errorf("side %d: the denied command ran", i)
		}
	}
}

// One process ending (the editor's shutdown/exit, agentls mcp's stdin EOF)
// while the other runs a bash call: the survivor's call completes normally
// and it keeps serving.
func TestTwoProcessesPeerExit(t *testing.T) {
	slow(t)
	t.Parallel()
	for _, editorExits := range []bool{true, false} {
		t.Run(fmt.Sprint("editor exits ", editorExits), func(t *testing.T) {
			t.Parallel()
			p := twoProcStart(t, map[string]string{"a.txt": "a\n"})
			survivor := p.side(t, 0)
			if editorExits {
				survivor = p.side(t, 1)
			}
			done := make(chan harness.Result, 1)
			go func() { done <- survivor("bash", map[string]any{"command": "touch started; sleep 1.5; echo survived"}) }()
			if !waitUntil(8*time.Second, func() bool { _, err := os.Stat(filepath.Join(p.ws, "started")); return err == nil }) {
				t.Fatal("survivor's command did not start")
			}
			if editorExits {
				if code := p.ed.Shutdown(p.ctx); code != 0 {
					t.Errorf("editor exit code %d", code)
				}
			} else if p.mc.close(); p.mc.exitCode(time.Second) < 0 {
				t.Error("agentls mcp did not exit at stdin EOF")
			}
			select {
			case r := <-done:
				if r.IsError || r.Text() != "survived" {
					t.Errorf("survivor's bash call: isError=%v %q, want \"survived\"", r.IsError, r.Text())
				}
			case <-p.ctx.Done():
				t.Fatal("survivor's bash call did not finish")
			}
			wantResult(t, "survivor after its peer exited", survivor("read", map[string]any{"path": "a.txt"}), false)
		})
	}
}
