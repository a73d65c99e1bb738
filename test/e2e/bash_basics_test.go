package e2e

// Contract tests of issue 5 (bash, streaming, truncation, spill,
// secret masking, governance), written from docs/tools.md, docs/protocol.md and the
// issue's acceptance list only.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentls/agentls/test/harness"
)

func bashRunBash(t *testing.T, c *harness.Client, ctx context.Context, command string, extra ...any) harness.Result {
	t.Helper()
	args := map[string]any{"command": command}
	for i := 0; i+1 < len(extra); i += 2 {
		args[extra[i].(string)] = extra[i+1]
	}
	return c.CallTool(ctx, "bash", args)
}

// bashRunSpillPath finds the absolute path of an existing file named in text
// that lies outside ws.
func bashRunSpillPath(t *testing.T, text, ws string) string {
	t.Helper()
	for _, m := range regexp.MustCompile(`/[^\s"'`+"`"+`,;)\]]+`).FindAllString(text, -1) {
		m = strings.TrimRight(m, ".")
		if fi, err := os.Stat(m); err == nil && fi.Mode().IsRegular() {
			if strings.HasPrefix(m, ws+string(os.PathSeparator)) {
				t.Errorf("spill file %s is inside the workspace", m)
			}
			return m
		}
	}
	t.Fatalf("no existing spill file path in the notice:\n%s", bashRunHead(text))
	return ""
}

func bashRunHead(s string) string {
	if len(s) > 1500 {
		return s[:700] + "\n…\n" + s[len(s)-700:]
	}
	return s
}

func TestBashRunTimeout(t *testing.T) {
	slow(t)
	c, _, ctx := start(t, nil)
	t.Run("sleep 5 with timeout 1", func(t *testing.T) {
		start := time.Now()
		r := bashRunBash(t, c, ctx, "echo before; sleep 5", "timeout", 1)
		el := time.Since(start)
		if el > 3*time.Second {
			t.Errorf("took %v, want within ~3 s", el)
		}
		if !regexp.MustCompile(`(?i)timed out`).MatchString(r.Text()) || !strings.Contains(r.Text(), "before") {
			t.Errorf("text should say it timed out and keep the output:\n%s", r.Text())
		}
	})
	t.Run("TERM ignored: SIGKILL after the 2 s grace", func(t *testing.T) {
		start := time.Now()
		r := bashRunBash(t, c, ctx, "trap '' TERM; echo started; sleep 30; echo never", "timeout", 1)
		el := time.Since(start)
		if el < 2800*time.Millisecond || el > 6*time.Second {
			t.Errorf("took %v, want ~3 s (1 s timeout + 2 s grace)", el)
		}
		if !strings.Contains(r.Text(), "started") || strings.Contains(r.Text(), "never") {
			t.Errorf("output so far not kept:\n%s", r.Text())
		}
		if !strings.Contains(r.Text(), "SIGKILL") {
			t.Errorf("text should say the group was killed with SIGKILL:\n%s", r.Text())
		}
	})
}

// bashRunProcs lists live (non-zombie) processes whose command line has arg
// as a whole word, with their process groups.
func bashRunProcs(arg string) map[int]int {
	out := map[int]int{}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cl, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if err != nil {
			continue
		}
		for _, a := range strings.Split(string(cl), "\x00") {
			if a == arg {
				if st := bashRunStat(pid); st != nil && st[0] != "Z" {
					g, _ := strconv.Atoi(st[2])
					out[pid] = g
				}
			}
		}
	}
	return out
}

// bashRunStat returns the fields of /proc/pid/stat after the command name
// (state, ppid, pgrp, …).
func bashRunStat(pid int) []string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return nil
	}
	return strings.Fields(s[i+1:])
}

// bashRunGroupAlive reports the live members of process group pgid.
func bashRunGroupAlive(pgid int) []int {
	var out []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if st := bashRunStat(pid); st != nil && st[0] != "Z" && st[2] == strconv.Itoa(pgid) {
			out = append(out, pid)
		}
	}
	return out
}

func TestBashRunProcessGroupDies(t *testing.T) {
	slow(t)
	for i, how := range []string{"cancel", "timeout"} {
		t.Run(how, func(t *testing.T) {
			c, _, ctx := start(t, nil)
			arg := fmt.Sprintf("1000.%d%d", os.Getpid(), i)
			args := map[string]any{"command": fmt.Sprintf("sh -c 'sleep %s & sleep %s & wait'", arg, arg)}
			if how == "timeout" {
				args["timeout"] = 1
			}
			callCtx, cancel := context.WithCancel(ctx)
			defer cancel()
			done := make(chan error, 1)
			var res harness.Result
			go func() {
				var err error
				res, err = c.TryCallTool(callCtx, "bash", args)
				done <- err
			}()
			var procs map[int]int
			if !waitUntil(5*time.Second, func() bool { procs = bashRunProcs(arg); return len(procs) == 2 }) {
				t.Fatalf("the two sleeps did not start: %v", procs)
			}
			groups := map[int]bool{}
			for _, g := range procs {
				groups[g] = true
			}
			start := time.Now()
			if how == "cancel" {
				cancel()
			}
			select {
			case err := <-done:
				// (The harness returns ctx.Err() for a cancelled call after
				// sending $/cancelRequest.)
				if how == "cancel" {
					if err == nil {
						t.Errorf("cancelled call returned a result: %s", res.Text())
					}
				} else if err != nil || !regexp.MustCompile(`(?i)timed out`).MatchString(res.Text()) {
					t.Errorf("timed-out call: %v %s", err, res.Text())
				}
			case <-time.After(6 * time.Second):
				t.Fatal("call did not end")
			}
			ok := waitUntil(5*time.Second, func() bool {
				for g := range groups {
					if len(bashRunGroupAlive(g)) > 0 {
						return false
					}
				}
				return len(bashRunProcs(arg)) == 0
			})
			if !ok {
				t.Errorf("processes survive %v after %s: %v", time.Since(start), how, bashRunProcs(arg))
			}
		})
	}
}

func TestBashRunBackgroundChild(t *testing.T) {
	c, _, ctx := start(t, nil)
	arg := fmt.Sprintf("100.%d7", os.Getpid())
	start := time.Now()
	r := bashRunBash(t, c, ctx, fmt.Sprintf("(sleep %s &) ; echo done", arg))
	if el := time.Since(start); el > time.Second {
		t.Errorf("(sleep 100 &); echo done took %v, want < 1 s", el)
	}
	if !strings.Contains(r.Text(), "done") || r.IsError {
		t.Errorf("text = %q", r.Text())
	}
	if len(bashRunProcs(arg)) == 0 {
		t.Log("background child already gone after the call")
	}
	// The background child is killed at shutdown.
	if code := c.Shutdown(ctx); code != 0 {
		t.Errorf("exit code %d", code)
	}
	if !waitUntil(5*time.Second, func() bool { return len(bashRunProcs(arg)) == 0 }) {
		t.Errorf("background child survives shutdown: %v", bashRunProcs(arg))
	}
}

func TestBashRunTailSpillAndRead(t *testing.T) {
	c, ws, ctx := start(t, nil)
	r := bashRunBash(t, c, ctx, `printf '\033[32mgreen\033[0m\n'; echo 'FAIL: TestBuried'; seq 3000`)
	text := r.Text()
	if r.IsError {
		t.Fatalf("isError: %s", bashRunHead(text))
	}
	// 3002 lines; the result is 2000 lines in all, the failure line, its
	// heading and the notice among them: lines 1006-3002 of 3002.
	if !strings.Contains(text, "1006-3002 of 3002") {
		t.Errorf("notice lacks the exact line range 1006-3002 of 3002:\n%s", bashRunHead(text))
	}
	lines := strings.Split(text, "\n")
	if len(lines) > 2000 {
		t.Errorf("%d lines, over the 2000 of a result", len(lines))
	}
	if !regexp.MustCompile(`(?m)^1004$`).MatchString(text) || regexp.MustCompile(`(?m)^1003$`).MatchString(text) {
		t.Errorf("tail should start at seq's 1004 (line 1006)")
	}
	if lines[len(lines)-1] != "3000" && !strings.Contains(text, "\n3000\n") {
		t.Errorf("tail lacks the last line")
	}
	// The failure line from the cut part is listed before the tail, with its line number.
	fi, ti := strings.Index(text, "FAIL: TestBuried"), strings.Index(text, "\n1004\n")
	if fi < 0 || ti < 0 || fi > ti || !regexp.MustCompile(`2\D{0,4}FAIL: TestBuried`).MatchString(text) {
		t.Errorf("buried failure (line 2) not listed before the tail:\n%s", bashRunHead(text))
	}
	spill := bashRunSpillPath(t, text, ws)
	raw, err := os.ReadFile(spill)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), "\x1b[32mgreen") || !strings.HasSuffix(string(raw), "2999\n3000\n") {
		t.Errorf("spill file is not the full raw output (%d bytes)", len(raw))
	}
	if strings.Contains(text, "\x1b") {
		t.Errorf("ANSI escape reached the model")
	}
	rr := c.CallTool(ctx, "read", map[string]any{"path": spill})
	if rr.IsError || !regexp.MustCompile(`(?m)^\s*3\D{1,3}1$`).MatchString(rr.Text()) || !strings.Contains(rr.Text(), "green") {
		t.Errorf("read of the spill file should show its first lines:\n%s", bashRunHead(rr.Text()))
	}
	if code := c.Shutdown(ctx); code != 0 {
		t.Errorf("exit code %d", code)
	}
	if _, err := os.Stat(spill); !os.IsNotExist(err) {
		t.Errorf("spill file %s still there after shutdown (err %v)", spill, err)
	}
}

func TestBashRunByteCut(t *testing.T) {
	c, ws, ctx := start(t, nil)
	// 1000 lines of 201 bytes: the 51,200-byte cap cuts before the line cap.
	r := bashRunBash(t, c, ctx, `yes "$(printf 'x%.0s' $(seq 200))" | head -n 1000`)
	text := r.Text()
	if len(text) > 51200+1500 {
		t.Errorf("text is %d bytes, over the 51,200-byte cap plus a notice", len(text))
	}
	m := regexp.MustCompile(`(\d+)-1000 of 1000`).FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("notice lacks the line range shown:\n%s", bashRunHead(text))
	}
	first, _ := strconv.Atoi(m[1])
	if shown := strings.Count(text, strings.Repeat("x", 200)); shown != 1000-first+1 {
		t.Errorf("notice says lines %d-1000 (%d lines) but %d full lines are shown", first, 1000-first+1, shown)
	}
	spill := bashRunSpillPath(t, text, ws)
	if fi, err := os.Stat(spill); err != nil || fi.Size() != 201*1000 {
		t.Errorf("spill file size %v, want %d (%v)", fi.Size(), 201*1000, err)
	}
}

func TestBashRunHugeOutputBoundedMemory(t *testing.T) {
	slow(t)
	c, ws, ctx := startProcess(t, nil)
	pid := c.Process().Pid
	start := time.Now()
	// 200 MB in 100-byte lines.
	r := bashRunBash(t, c, ctx, `yes "$(printf 'y%.0s' $(seq 99))" | head -c 200000000`, "timeout", 60)
	t.Logf("200 MB command took %v", time.Since(start))
	hwm := bashRunStatusKB(t, pid, "VmHWM")
	t.Logf("server peak RSS %d KB", hwm)
	if hwm > 100*1024 {
		t.Errorf("server peak RSS %d KB > 100 MB", hwm)
	}
	if r.IsError || !strings.Contains(r.Text(), "of 2000000") {
		t.Errorf("notice should name the 2,000,000 lines:\n%s", bashRunHead(r.Text()))
	}
	spill := bashRunSpillPath(t, r.Text(), ws)
	// The notice promises the full output; if the spill file holds less,
	// the model must be told.
	if fi, err := os.Stat(spill); err == nil && fi.Size() < 200000000 {
		notice := r.Text()[:min(600, len(r.Text()))]
		if strings.Contains(notice, "Full output") || !regexp.MustCompile(`(?i)(spill|saved)[^\n]*(cut|first|partial|incomplete|not saved)`).MatchString(notice) {
			t.Errorf("spill file holds %d of 200000000 bytes, but the model's notice does not say so:\n%s", fi.Size(), notice)
		}
	}
}

func bashRunStatusKB(t *testing.T, pid int, field string) int {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^` + field + `:\s+(\d+) kB`).FindSubmatch(b)
	if m == nil {
		t.Fatalf("no %s in status", field)
	}
	n, _ := strconv.Atoi(string(m[1]))
	return n
}

func TestBashRunProgressStreaming(t *testing.T) {
	slow(t)
	ws := t.TempDir()
	raw := editCaseRawStart(t, ws, map[string]any{"mode": "bypass"})
	start := time.Now()
	r, before := raw.toolCall("bash", "bashRun-progress", map[string]any{"command": "for i in 1 2 3; do echo $i; sleep 0.3; done"}, 10*time.Second)
	if r.IsError {
		t.Fatal(r.Text())
	}
	notes := editCaseNotesFor(before, "tools/progress", "bashRun-progress")
	if len(notes) < 2 {
		t.Fatalf("%d progress notifications before the reply, want several", len(notes))
	}
	all := ""
	for _, n := range notes {
		out, _ := n["output"].(string)
		all += "\x00" + out
		if n["tool"] != "bash" {
			t.Errorf("progress tool = %v", n["tool"])
		}
	}
	i1, i3 := strings.Index(all, "1"), strings.Index(all, "3")
	if i1 < 0 || i3 < 0 || i1 > i3 {
		t.Errorf("progress outputs should show 1 before 3: %q", all)
	}
	first, _ := notes[0]["output"].(string)
	if strings.Contains(first, "3") {
		t.Errorf("first progress already holds the end of the output (not prompt): %q", first)
	}
	if at, _ := notes[0]["_recvAt"].(time.Time); at.Sub(start) > 500*time.Millisecond {
		t.Errorf("first progress after %v, want promptly (< 500 ms)", at.Sub(start))
	}

	// Throttling: a command printing every 10 ms for ~0.6 s gets at most
	// one progress per 50 ms.
	t0 := time.Now()
	_, before = raw.toolCall("bash", "bashRun-throttle", map[string]any{"command": "for i in $(seq 60); do echo $i; sleep 0.01; done"}, 10*time.Second)
	el := time.Since(t0)
	n := len(editCaseNotesFor(before, "tools/progress", "bashRun-throttle"))
	if max := int(el/(50*time.Millisecond)) + 2; n > max || n < 2 {
		t.Errorf("%d progress notifications in %v; want 2..%d (≥ 50 ms apart)", n, el, max)
	}
}

func TestBashRunClassification(t *testing.T) {
	type verdict int
	const (
		ro verdict = iota
		write
		destr
		notRO    // not read-only; destructiveness not asserted
		unparsed // bash cannot parse it: refused before any question
	)
	cases := []struct {
		cmd  string
		want verdict
	}{
		{"ls -la | grep x", ro},
		{"ls 2>/dev/null", ro},
		{"ls > /dev/null", ro},
		{"FOO=1 ls", ro},
		{"diff <(ls a) <(ls b)", ro},
		{"cat a.txt", ro},
		{"cat a.txt | sort | uniq -c", ro},
		{"grep -rn foo .", ro},
		{"rg foo", ro},
		{"git status", ro},
		{"git diff", ro},
		{"git log --oneline -5", ro},
		{"git show HEAD", ro},
		{"find . -name '*.go'", ro},
		{"sed -n 1,2p a.txt", ro},
		{"head -n 3 a.txt", ro},
		{"tail -n 3 a.txt", ro},
		{"wc -l a.txt", ro},
		{"echo hello", ro},
		{"pwd", ro},
		{"ls && cat a.txt", ro},
		{"(ls; pwd)", ro},
		{"echo $(ls)", ro},
		{"echo `ls`", ro},
		{"git status && npm test", write},
		{"cat a.txt > new.txt", write},
		{"ls >> log.txt", write},
		{"touch x", write},
		{"mkdir d", write},
		{"cp a.txt c.txt", write},
		{"tee out.txt", write},
		{"npm install", write},
		{"go build ./...", write},
		{"python3 -c 'print(1)'", write},
		{"sort -o out.txt a.txt", write},
		{"git commit -m x", write},
		{"$CMD x", write},
		{"bash -c 'ls'", write},
		{"sh -c 'ls'", write},
		{"eval ls", write},
		{"env X=1 ls", write},
		{"echo 'unterminated", unparsed},
		{"find . -exec cat {} \\;", write},
		{"find . -fprint out.txt", write},
		{"curl -s http://127.0.0.1:9/", write},
		{"xargs rm", notRO},
		{"find . -delete", notRO},
		{"sed -i s/a/b/ f", notRO},
		{"mv a.txt z.txt", notRO},
		{"rm x", destr},
		{"rm -rf build", destr},
		{"echo $(rm x)", destr},
		{"ls && rm -f x", destr},
		{"git push --force", destr},
		{"git push -f origin main", destr},
		{"git reset --hard", destr},
		{"dd if=/dev/zero of=x bs=1 count=1", destr},
		{"mkfs.ext4 img", destr},
		{"chmod -R 777 .", destr},
		{"cat a.txt > b.txt", destr},
	}
	ws := t.TempDir()
	for n, b := range map[string]string{"a.txt": "a\n", "b.txt": "b\n", "f": "a\n"} {
		writeFile(t, filepath.Join(ws, n), b)
	}
	c := harness.Start(t, harness.Options{Root: ws})
	var mu sync.Mutex
	asked := map[string]map[string]any{} // command → preview
	c.OnRequest = func(ctx context.Context, method string, params json.RawMessage) (any, error) {
		if method != "tools/confirm" {
			return nil, fmt.Errorf("unexpected %s", method)
		}
		var p struct {
			Arguments map[string]any `json:"arguments"`
			Preview   map[string]any `json:"preview"`
		}
		json.Unmarshal(params, &p)
		cmd, _ := p.Arguments["command"].(string)
		mu.Lock()
		asked[cmd] = p.Preview
		mu.Unlock()
		return map[string]any{"decision": "rejectOnce", "message": "audit"}, nil
	}
	ctx := testCtx(t, 30*time.Second)
	c.Initialize(ctx, map[string]any{
		"initializationOptions": map[string]any{"mode": "default"},
		"capabilities":          map[string]any{"experimental": map[string]any{"agentls": map[string]any{"confirm": true}}},
	})
	for _, tc := range cases {
		t.Run(tc.cmd, func(t *testing.T) {
			r := c.CallTool(ctx, "bash", map[string]any{"command": tc.cmd, "timeout": 5})
			mu.Lock()
			preview, wasAsked := asked[tc.cmd]
			mu.Unlock()
			if tc.want == ro {
				if wasAsked {
					t.Errorf("read-only command needed approval (preview %v)", preview)
				}
				return
			}
			if tc.want == unparsed {
				if wasAsked || !r.IsError || !strings.Contains(r.Text(), "does not parse") {
					t.Errorf("a line bash cannot parse: asked %v, result %s; want a refusal without a question", wasAsked, r.Text())
				}
				return
			}
			if !wasAsked {
				t.Fatalf("not-read-only command ran without approval in default mode: %s", r.Text())
			}
			if preview["readOnly"] != false {
				t.Errorf("preview.readOnly = %v, want false", preview["readOnly"])
			}
			switch tc.want {
			case destr:
				if preview["destructive"] != true {
					t.Errorf("preview.destructive = %v, want true (%v)", preview["destructive"], preview["reasons"])
				}
			case write:
				if preview["destructive"] != false {
					t.Errorf("preview.destructive = %v, want false (%v)", preview["destructive"], preview["reasons"])
				}
			}
		})
	}
	if len(cases) < 50 {
		t.Errorf("only %d commands", len(cases))
	}
}

// bashRunToken is a deterministic pseudo-random string over alphabet.
func bashRunToken(seed, n int, alphabet string) string {
	x := uint64(seed)*0x9E3779B97F4A7C15 + 1
	b := make([]byte, n)
	for i := range b {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		b[i] = alphabet[x%uint64(len(alphabet))]
	}
	return string(b)
}

func TestBashRunSecretsNeverReachTheModel(t *testing.T) {
	const alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	const upper = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
	const b64 = alnum + "+/"
	openai := "sk-proj-" + bashRunToken(1, 48, alnum)
	dbPass := "Pw" + bashRunToken(2, 18, alnum)
	github := "ghp_" + bashRunToken(3, 36, alnum)
	envTok := "ev" + bashRunToken(4, 30, alnum)
	aws := "AKIA" + bashRunToken(5, 16, upper)
	slack := "xoxb-" + bashRunToken(6, 12, "0123456789") + "-" + bashRunToken(7, 13, "0123456789") + "-" + bashRunToken(8, 24, alnum)
	stripe := "sk_live_" + bashRunToken(9, 32, alnum)
	google := "AIza" + bashRunToken(10, 35, alnum)
	gitlab := "glpat-" + bashRunToken(11, 20, alnum)
	anthropic := "sk-ant-api03-" + bashRunToken(12, 80, alnum)
	jwt := "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkF1ZGl0In0." + bashRunToken(13, 43, alnum)
	var pem strings.Builder
	pem.WriteString("-----BEGIN RSA PRIVATE KEY-----\n")
	var pemLines []string
	for i := 0; i < 8; i++ {
		l := bashRunToken(100+i, 64, b64)
		pemLines = append(pemLines, l)
		pem.WriteString(l + "\n")
	}
	pem.WriteString("-----END RSA PRIVATE KEY-----\n")
	sha := "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
	uuid := "123e4567-e89b-12d3-a456-426614174000"
	png := "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
	secrets := map[string]string{"openai": openai, "db password": dbPass, "github": github, "server env": envTok, "aws": aws,
		"slack": slack, "stripe": stripe, "google": google, "gitlab": gitlab, "anthropic": anthropic, "jwt": jwt}
	for i, l := range pemLines {
		secrets[fmt.Sprintf("pem line %d", i)] = l
	}
	files := map[string]string{
		".env":        "OPENAI_API_KEY=" + openai + "\nDB_PASSWORD=" + dbPass + "\nDEBUG=true\n",
		"key.pem":     pem.String(),
		"src/main.go": "package main\n\n// token: " + github + "\nfunc main() {}\n",
		"tokens.txt": "aws " + aws + "\nslack " + slack + "\nstripe " + stripe + "\ngoogle " + google + "\ngitlab " + gitlab +
			"\nanthropic " + anthropic + "\njwt " + jwt + "\n",
		"plain.txt": "sha256 " + sha + "\nuuid " + uuid + "\nimg data:image/png;base64," + png + "\n",
	}
	c, _, ctx := start(t, files, "BASHRUN_SERVICE_TOKEN="+envTok)
	check := func(t *testing.T, what string, r harness.Result) {
		t.Helper()
		d, _ := json.Marshal(r.Details)
		for kind, v := range secrets {
			if strings.Contains(r.Text(), v) {
				t.Errorf("%s: the %s secret reached the model text", what, kind)
			}
			if strings.Contains(string(d), v) {
				t.Errorf("%s: the %s secret is in details", what, kind)
			}
		}
	}
	calls := []struct {
		name, tool string
		args       map[string]any
		wantMasked bool
	}{
		{"read .env", "read", map[string]any{"path": ".env"}, true},
		{"read key.pem", "read", map[string]any{"path": "key.pem"}, true},
		{"read main.go", "read", map[string]any{"path": "src/main.go"}, true},
		{"read tokens", "read", map[string]any{"path": "tokens.txt"}, true},
		{"grep", "grep", map[string]any{"pattern": "KEY|PASSWORD|token|aws|slack|stripe|google|gitlab|anthropic|jwt|[A-Za-z0-9+/]{64}"}, true},
		{"grep pem", "grep", map[string]any{"pattern": ".", "path": "key.pem"}, true},
		{"bash cat .env", "bash", map[string]any{"command": "cat .env"}, true},
		{"bash cat all", "bash", map[string]any{"command": "cat key.pem tokens.txt src/main.go"}, true},
		{"bash env", "bash", map[string]any{"command": "env"}, true},
		{"bash printenv", "bash", map[string]any{"command": "printenv"}, true},
		{"bash printenv one", "bash", map[string]any{"command": "printenv BASHRUN_SERVICE_TOKEN"}, true},
	}
	for _, tc := range calls {
		t.Run(tc.name, func(t *testing.T) {
			r := c.CallTool(ctx, tc.tool, tc.args)
			check(t, tc.name, r)
			if tc.wantMasked {
				if !strings.Contains(r.Text(), "[REDACTED:") {
					t.Errorf("no [REDACTED:<kind>] marker:\n%s", bashRunHead(r.Text()))
				}
				if n, _ := r.Details["redactions"].(float64); n < 1 {
					if _, isMap := r.Details["redactions"].(map[string]any); !isMap {
						t.Errorf("details.redactions = %v, want a count", r.Details["redactions"])
					}
				}
			}
		})
	}
	t.Run("env key names stay visible", func(t *testing.T) {
		r := c.CallTool(ctx, "read", map[string]any{"path": ".env"})
		for _, w := range []string{"OPENAI_API_KEY=", "DB_PASSWORD=", "DEBUG=true"} {
			if !strings.Contains(r.Text(), w) {
				t.Errorf("read .env lacks %q:\n%s", w, r.Text())
			}
		}
	})
	t.Run("no false positives", func(t *testing.T) {
		for _, tc := range []struct{ tool, arg string }{{"read", "plain.txt"}, {"bash", "cat plain.txt"}} {
			var r harness.Result
			if tc.tool == "read" {
				r = c.CallTool(ctx, "read", map[string]any{"path": tc.arg})
			} else {
				r = bashRunBash(t, c, ctx, tc.arg)
			}
			for _, v := range []string{sha, uuid, png} {
				if !strings.Contains(r.Text(), v) {
					t.Errorf("%s %s: ordinary text %q was masked:\n%s", tc.tool, tc.arg, v[:16], r.Text())
				}
			}
			if strings.Contains(r.Text(), "REDACTED") {
				t.Errorf("%s %s: something was masked:\n%s", tc.tool, tc.arg, r.Text())
			}
		}
	})
	t.Run("edit details", func(t *testing.T) {
		editCaseMustRead(t, c, ctx, map[string]any{"path": "src/main.go"})
		r := c.CallTool(ctx, "edit", map[string]any{"path": "src/main.go", "callId": "x", "edits": []any{
			map[string]any{"oldText": "func main() {}", "newText": "func main() { println(1) }"}}})
		if r.IsError {
			t.Fatal(r.Text())
		}
		check(t, "edit", r)
		for _, n := range c.Notes("tools/details") {
			for kind, v := range secrets {
				if strings.Contains(string(n.Params), v) {
					t.Errorf("tools/details notification carries the %s secret", kind)
				}
			}
		}
	})
}

func TestBashRunGovernanceCutsEveryTool(t *testing.T) {
	// find's own limit (1000) is not reached, but 900 long paths exceed the
	// 50 KB budget: the executor must cut, announce and spill.
	ws := t.TempDir()
	long := strings.Repeat("d", 60)
	for i := 0; i < 900; i++ {
		writeFile(t, filepath.Join(ws, long, fmt.Sprintf("%s-%04d.txt", strings.Repeat("f", 60), i)), "")
	}
	c := harness.Start(t, harness.Options{Root: ws})
	ctx := testCtx(t, 30*time.Second)
	c.Initialize(ctx, map[string]any{"initializationOptions": map[string]any{"mode": "bypass"}})
	r := c.CallTool(ctx, "find", map[string]any{"pattern": "*.txt"})
	text := r.Text()
	t.Logf("find output: %d bytes", len(text))
	if len(text) > 65536+2000 {
		t.Errorf("find output %d bytes exceeds the budget", len(text))
	}
	if strings.Count(text, ".txt") < 900 {
		if !regexp.MustCompile(`(?i)cut|truncat|more`).MatchString(text[max(0, len(text)-2000):] + text[:min(len(text), 2000)]) {
			t.Errorf("output was cut without a notice")
		}
		bashRunSpillPath(t, text, ws)
		// docs/tools.md: the notice gives the exact call that gets more.
		m := regexp.MustCompile(`lines 1-(\d+) of 900`).FindStringSubmatch(text)
		if m == nil {
			t.Fatalf("notice lacks the lines shown:\n%s", text[max(0, len(text)-600):])
		}
		next, _ := strconv.Atoi(m[1])
		if !regexp.MustCompile(`offset["=:\s]+` + strconv.Itoa(next+1) + `\b`).MatchString(text) {
			t.Errorf("notice does not give the exact call that gets more (offset=%d):\n%s", next+1, text[max(0, len(text)-600):])
		}
	}
}

func TestBashRunSpillFiles(t *testing.T) {
	slow(t)
	c, ws, ctx := start(t, nil)
	var spills []string
	// Five 70 MB outputs: whatever the per-file cap, a total cap in the
	// hundreds of MB must remove the oldest spill files first.
	for i := 0; i < 5; i++ {
		r := bashRunBash(t, c, ctx, `yes "$(printf 'y%.0s' $(seq 99))" | head -c 70000000`, "timeout", 60)
		spills = append(spills, bashRunSpillPath(t, r.Text(), ws))
	}
	var total int64
	var kept []bool
	for _, s := range spills {
		fi, err := os.Stat(s)
		kept = append(kept, err == nil)
		if err == nil {
			total += fi.Size()
		}
	}
	t.Logf("spill files kept: %v, total %d bytes", kept, total)
	if !kept[4] {
		t.Errorf("newest spill file missing")
	}
	if kept[0] {
		t.Errorf("oldest spill file kept although 350 MB were spilled (total now %d bytes)", total)
	}
	for i := 1; i < len(kept); i++ {
		if kept[i-1] && !kept[i] {
			t.Errorf("spill files not removed oldest-first: %v", kept)
		}
	}
	// The spill directory is a read-only root: read works, edit/write do not.
	if r := c.CallTool(ctx, "read", map[string]any{"path": spills[4], "offset": 1, "limit": 2}); r.IsError {
		t.Errorf("read of a spill file: %s", r.Text())
	}
	if r := c.CallTool(ctx, "write", map[string]any{"path": spills[4], "content": "x"}); !r.IsError {
		t.Errorf("write into the spill directory succeeded: %s", r.Text())
	}
	if r := c.CallTool(ctx, "edit", editCall(spills[4], "not in the file", "zzzz")); !r.IsError {
		t.Errorf("edit of a spill file succeeded: %s", r.Text())
	}
	before := readFile(t, spills[4])
	r := c.CallTool(ctx, "edit", editCall(spills[4], before[len(before)-120:], "zzzz"))
	if !r.IsError {
		t.Errorf("edit of a spill file succeeded: %s", r.Text())
	}
	if after := readFile(t, spills[4]); after != before {
		t.Errorf("spill file changed by edit")
	}
}

func TestBashRunDescriptionNumbers(t *testing.T) {
	c, _, ctx := start(t, nil)
	var res struct {
		Tools []map[string]any `json:"tools"`
	}
	if err := c.Call(ctx, "tools/list", map[string]any{}, &res); err != nil {
		t.Fatal(err)
	}
	for _, tool := range res.Tools {
		if tool["name"] != "bash" {
			continue
		}
		d, _ := tool["description"].(string)
		for _, w := range []string{"120", "600", "2000"} {
			if !strings.Contains(d, w) {
				t.Errorf("bash description lacks %s:\n%s", w, d)
			}
		}
		if !regexp.MustCompile(`51,?200|50 ?KB`).MatchString(d) {
			t.Errorf("bash description lacks the byte limit:\n%s", d)
		}
		return
	}
	t.Error("no bash tool listed")
}

func TestBashRunProgressIsMasked(t *testing.T) {
	ws := t.TempDir()
	openai := "sk-proj-" + bashRunToken(21, 48, "abcdefghijklmnopqrstuvwxyz0123456789")
	writeFile(t, filepath.Join(ws, ".env"), "OPENAI_API_KEY="+openai+"\n")
	raw := editCaseRawStart(t, ws, map[string]any{"mode": "bypass"})
	r, before := raw.toolCall("bash", "bashRun-mask", map[string]any{"command": "cat .env; sleep 0.4; echo done"}, 10*time.Second)
	if strings.Contains(r.Text(), openai) {
		t.Errorf("secret in the result")
	}
	notes := editCaseNotesFor(before, "tools/progress", "bashRun-mask")
	if len(notes) == 0 {
		t.Fatal("no progress")
	}
	for _, n := range notes {
		if out, _ := n["output"].(string); strings.Contains(out, openai) {
			t.Errorf("tools/progress carries the unmasked secret: %q", out)
		}
	}
}
