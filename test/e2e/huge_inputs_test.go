package e2e

// Huge inputs give bounded, useful results and bounded server memory —
// never a crash, a hang, or a result the client cannot take (docs/tools.md:
// limits, announced truncation, spill files). Every case runs on its own
// fresh server, so the peak resident set (VmHWM) measured is the case's own.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentls/agentls/test/harness"
)

const (
	hugeMiB = 1 << 20
	// hugePeakGrowth bounds the growth of the server's peak RSS for an
	// input of 128 MiB or more: generous, but it catches "loaded the whole
	// thing".
	hugePeakGrowth = 48 * hugeMiB
	// Numbers docs/tools.md gives.
	hugeReadLines = 2000
	hugeBudget    = 65536
	hugeBashBytes = 51200
	hugeSpillCap  = 64 * hugeMiB
	hugeGrepLimit = 100
)

// hugeDisk marks the test parallel and skips it under -short, when the temp
// directory's file system has less than 5 GiB free, and off Linux (peak
// memory is read from /proc).
func hugeDisk(t *testing.T) {
	t.Helper()
	t.Parallel()
	if testing.Short() {
		t.Skip("huge input")
	}
	if runtime.GOOS != "linux" {
		t.Skip("peak memory is read from /proc (Linux only)")
	}
	var st syscall.Statfs_t
	if err := syscall.Statfs(os.TempDir(), &st); err != nil {
		t.Skipf("statfs %s: %v", os.TempDir(), err)
	}
	if free := st.Bavail * uint64(st.Bsize); free < 5<<30 {
		t.Skipf("only %d MiB free in %s; these cases need 5 GiB", free/hugeMiB, os.TempDir())
	}
}

// hugeFastDir is a temporary directory on tmpfs (/dev/shm) when there is
// one with room, where creating and removing 100,000 files takes about a
// second instead of ten on a loaded disk; else t.TempDir().
func hugeFastDir(t *testing.T) string {
	t.Helper()
	var st syscall.Statfs_t
	if syscall.Statfs("/dev/shm", &st) == nil && st.Bavail*uint64(st.Bsize) >= 256*hugeMiB {
		if d, err := os.MkdirTemp("/dev/shm", "huge-"); err == nil {
			t.Cleanup(func() { os.RemoveAll(d) })
			return d
		}
	}
	return t.TempDir()
}

// hugeServer is one fresh server on ws (bypass mode, so write, edit and bash
// run unasked) with its own spill directory.
type hugeServer struct {
	c     *harness.Client
	ctx   context.Context
	cache string
	base  int64 // peak RSS after the warm-up, bytes
}

func hugeStart(t *testing.T, ws string, env ...string) *hugeServer {
	t.Helper()
	cache := t.TempDir()
	env = append([]string{"XDG_CACHE_HOME=" + cache}, env...)
	c := harness.Start(t, harness.Options{Root: ws, Env: env, Process: true})
	ctx := testCtx(t, 60*time.Second)
	c.Initialize(ctx, map[string]any{"initializationOptions": map[string]any{"mode": "bypass"}})
	// One small call first: the baseline includes a warmed-up tool path.
	writeFile(t, filepath.Join(ws, "huge-warm.txt"), "warm\n")
	if r := c.CallTool(ctx, "read", map[string]any{"path": "huge-warm.txt"}); r.IsError {
		t.Fatalf("warm-up read failed: %s", r.Text())
	}
	return &hugeServer{c: c, ctx: ctx, cache: cache, base: hugeHWM(t, c.Process().Pid)}
}

// hugeHWM is the peak resident set of pid in bytes.
func hugeHWM(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatalf("agentls (pid %d) is gone: %v", pid, err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		var kb int64
		if n, _ := fmt.Sscanf(l, "VmHWM: %d kB", &kb); n == 1 {
			return kb * 1024
		}
	}
	t.Fatal("no VmHWM in /proc status")
	return 0
}

// checkMem fails when the server's peak RSS grew by limit or more since the
// baseline, and when it has exited (a crash).
func (s *hugeServer) checkMem(t *testing.T, what string, limit int64) {
	t.Helper()
	select {
	case <-s.c.Exited():
		t.Fatalf("%s: agentls exited", what)
	default:
	}
	if peak := hugeHWM(t, s.c.Process().Pid); peak-s.base >= limit {
		t.Errorf("%s: agentls peak RSS grew by %d MiB (from %d to %d MiB), want < %d MiB", what, (peak-s.base)/hugeMiB, s.base/hugeMiB, peak/hugeMiB, limit/hugeMiB)
	}
}

// hugeLines writes n lines line(1) … line(n) (hugeL by default) to path and
// returns its size when the lines are hugeL's.
func hugeLines(t *testing.T, path string, n int, line ...func(int) string) int64 {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(f, hugeMiB)
	for i := 1; i <= n; i++ {
		if len(line) > 0 {
			w.WriteString(line[0](i) + "\n")
		} else {
			fmt.Fprintf(w, "L%08d\n", i)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	return int64(n) * 10
}

// hugeChunks writes size bytes to path in 1 MiB chunks of the pattern.
func hugeChunks(t *testing.T, path string, size int, pattern string) {
	t.Helper()
	chunk := []byte(strings.Repeat(pattern, hugeMiB/len(pattern)+1)[:hugeMiB])
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	for left := size; left > 0; left -= hugeMiB {
		n := min(left, hugeMiB)
		if _, err := f.Write(chunk[:n]); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// hugeNum is n as the texts print it: plain digits.
func hugeNum(n int64) string { return strconv.FormatInt(n, 10) }

func hugeMatch(t *testing.T, what, text, re string) []string {
	t.Helper()
	m := regexp.MustCompile(re).FindStringSubmatch(text)
	if m == nil {
		t.Errorf("%s: text does not match %s:\n%s", what, re, hugeShow(text))
	}
	return m
}

// hugeShow abbreviates a long text for a failure message: head and tail.
func hugeShow(s string) string {
	if len(s) <= 3000 {
		return s
	}
	return s[:1500] + fmt.Sprintf("\n…[%d bytes]…\n", len(s)-3000) + s[len(s)-1500:]
}

// hugeLine is read's numbered line n ("%6d→text").
func hugeLine(n int, content string) string { return fmt.Sprintf("%6d→%s", n, content) }

// hugeL is the text of line n of hugeLines's files.
func hugeL(n int) string { return fmt.Sprintf("L%08d", n) }

func TestHugeReadOfOneLine128MiB(t *testing.T) {
	hugeDisk(t)
	ws := t.TempDir()
	const size = 128 * hugeMiB
	hugeChunks(t, filepath.Join(ws, "one.txt"), size, "abcdefghijklmnop")
	s := hugeStart(t, ws)
	// docs/tools.md: a first line over 51,200 bytes is explained with its
	// size and a sed … | cut -b command (read/three_megabyte_line.txtar).
	text := s.c.CallTool(s.ctx, "read", map[string]any{"path": "one.txt"}).Text()
	hugeMatch(t, "one-line read", text, `\b`+hugeNum(size)+` bytes\b`)
	hugeMatch(t, "one-line read", text, `sed -n '1p' one\.txt \| cut -b 1-\d+`)
	wantContains(t, "one-line read", text, "51200")
	s.checkMem(t, "read a 128 MiB single line", hugePeakGrowth)
}

// grep over a 128 MiB file with the match on the last line, then over
// 2,097,152 matching lines, with each backend: the one match, or the first
// 100 with the notice giving limit=200; the server's peak memory stays
// bounded. (Reads of large files: TestHugeBatch, read/large_file_streamed.txtar.)
func TestHugeGrep(t *testing.T) {
	hugeDisk(t)
	dir := t.TempDir()
	const n, manyN = 13421773, 2097152
	hugeLines(t, filepath.Join(dir, "big.txt"), n)
	manyLine := func(i int) string { l := fmt.Sprintf("hit %07d ", i); return l + strings.Repeat("x", 63-len(l)) }
	hugeLines(t, filepath.Join(dir, "many.txt"), manyN, manyLine)
	for _, b := range []struct {
		name string
		env  []string
	}{{"rg", nil}, {"go", []string{"PATH=" + t.TempDir()}}} { // no rg on PATH: the Go fallback
		t.Run(b.name, func(t *testing.T) {
			s := hugeStart(t, dir, b.env...)
			r := s.c.CallTool(s.ctx, "grep", map[string]any{"pattern": hugeL(n)})
			if want := fmt.Sprintf("big.txt:%d: %s", n, hugeL(n)); r.IsError || strings.TrimSpace(r.Text()) != want || r.Details["backend"] != b.name {
				t.Errorf("grep for the last line (backend %v) = %q, want %q", r.Details["backend"], hugeShow(r.Text()), want)
			}
			r = s.c.CallTool(s.ctx, "grep", map[string]any{"pattern": "hit", "path": "many.txt"})
			var body []string
			for _, l := range strings.Split(r.Text(), "\n") {
				if strings.HasPrefix(l, "many.txt:") {
					body = append(body, l)
				}
			}
			if len(body) != hugeGrepLimit || body[0] != "many.txt:1: "+manyLine(1) || body[99] != "many.txt:100: "+manyLine(100) || len(r.Text()) > hugeBudget {
				t.Errorf("%d match lines in %d bytes, want the first %d:\n%s", len(body), len(r.Text()), hugeGrepLimit, hugeShow(r.Text()))
			}
			wantContains(t, "match-limit notice", r.Text(), "limit=200")
			s.checkMem(t, "grep "+b.name+" over 256 MiB and 2M matches", hugePeakGrowth)
		})
	}
}

func TestHugeListing(t *testing.T) {
	hugeDisk(t)
	ws := hugeFastDir(t)
	const entries = 100000
	d := filepath.Join(ws, "many")
	if err := os.Mkdir(d, 0o755); err != nil {
		t.Fatal(err)
	}
	for i := range entries {
		// mknod: one system call an empty file, no descriptor to close.
		if err := syscall.Mknod(filepath.Join(d, fmt.Sprintf("f%06d", i)), syscall.S_IFREG|0o644, 0); err != nil {
			t.Fatal(err)
		}
	}

	for _, tc := range []struct {
		tool, prefix string
		args         map[string]any
		shown        int
		notice       string // a regexp
	}{
		{"ls", "f", map[string]any{"path": "many"}, 500, `\b500 of 100000 entries\b[^\n]*limit=(1000|2000|5000)\b`},
		{"find", "many/", map[string]any{"pattern": "f*", "path": "many"}, 1000, `limit=2000\b`},
	} {
		t.Run(tc.tool, func(t *testing.T) {
			s := hugeStart(t, ws)
			start := time.Now()
			r := s.c.CallTool(s.ctx, tc.tool, tc.args)
			if d := time.Since(start); d > 20*time.Second || r.IsError {
				t.Fatalf("%s of 100,000 entries: %v, isError %v: %s", tc.tool, d, r.IsError, hugeShow(r.Text()))
			}
			got := 0
			for _, l := range strings.Split(r.Text(), "\n") {
				if strings.HasPrefix(l, tc.prefix) {
					got++
				}
			}
			if got != tc.shown {
				t.Errorf("%s shows %d, want the default limit %d", tc.tool, got, tc.shown)
			}
			hugeMatch(t, tc.tool+" notice", r.Text(), tc.notice)
			s.checkMem(t, tc.tool+" of 100,000 entries", hugePeakGrowth)
		})
	}
}

// hugeSpillPath is the absolute path of the spill file the notice names,
// which must lie in the server's cache directory.
func hugeSpillPath(t *testing.T, text, cache string) string {
	t.Helper()
	m := regexp.MustCompile(regexp.QuoteMeta(cache) + `/[^\s"'\]\)]+`).FindString(text)
	if m == "" {
		t.Fatalf("no spill file path under %s in:\n%s", cache, hugeShow(text))
	}
	return strings.TrimRight(m, ".,;:")
}

func hugeProgress(s *hugeServer, callID string) []harness.Note {
	var out []harness.Note
	for _, n := range s.c.Notes("tools/progress") {
		var p struct {
			CallID string `json:"callId"`
		}
		if json.Unmarshal(n.Params, &p) == nil && p.CallID == callID {
			out = append(out, n)
		}
	}
	return out
}

func TestHugeBash(t *testing.T) {
	hugeDisk(t)
	// The tail, the spill file's bytes and the progress throttle:
	// internal/proc TestRunMemoryBounded; here the tool's result and notices.
	t.Run("Print200MiB", func(t *testing.T) {
		s := hugeStart(t, t.TempDir())
		r := s.c.CallTool(s.ctx, "bash", map[string]any{"command": "head -c 209715200 /dev/zero | tr '\\0' a | fold -w 100"})
		text := r.Text()
		if r.IsError {
			t.Fatalf("bash: isError:\n%s", hugeShow(text))
		}
		const lines = 2097152 // 200 MiB in lines of 100
		if len(text) > hugeBashBytes {
			t.Errorf("result is %d bytes, over the %d-byte budget (notices included)", len(text), hugeBashBytes)
		}
		a100 := strings.Repeat("a", 100)
		got := strings.Count(text, a100)
		hugeMatch(t, "bash notice: lines shown", text, `\b`+hugeNum(int64(lines-got+1))+`-`+hugeNum(lines)+`\b`)
		spill := hugeSpillPath(t, text, s.cache)
		hugeCheckSpill(t, text, spill, 209715200+(lines-1), a100+"\n"+a100+"\n")
		// The spill file opens with read, by its absolute path.
		wantResult(t, "read of the spill file", s.c.CallTool(s.ctx, "read", map[string]any{"path": spill, "limit": 2}), false, hugeLine(1, a100))
		notes := hugeProgress(s, r.CallID)
		if len(notes) == 0 {
			t.Errorf("no tools/progress notification")
		}
		for _, n := range notes {
			if len(n.Params) > 16*1024 {
				t.Errorf("a progress notification carries %d bytes, over 16 KiB (the last 20 lines of 100 characters are ~2 KiB)", len(n.Params))
				break
			}
		}
		s.checkMem(t, "bash printing 200 MiB", hugePeakGrowth)
	})

	t.Run("OneLine64MiB", func(t *testing.T) {
		s := hugeStart(t, t.TempDir())
		r := s.c.CallTool(s.ctx, "bash", map[string]any{"command": "head -c 67108864 /dev/zero | tr '\\0' b"})
		text := r.Text()
		if r.IsError {
			t.Fatalf("bash: isError:\n%s", hugeShow(text))
		}
		if len(text) > hugeBudget {
			t.Errorf("result is %d bytes, over the %d-byte budget", len(text), hugeBudget)
		}
		// docs/tools.md: "shows its first 1500 and its last 500 with
		// … [N characters cut] … between them".
		const cut = 64*hugeMiB - 2000
		hugeMatch(t, "one-line cut", text, `(?:^|\n)`+strings.Repeat("b", 1500)+` ?… \[`+hugeNum(cut)+` characters cut\] … ?`+strings.Repeat("b", 500)+`(?:\n|$)`)
		spill := hugeSpillPath(t, text, s.cache)
		hugeCheckSpill(t, text, spill, 64*hugeMiB, strings.Repeat("b", 1000))
		s.checkMem(t, "bash printing one 64 MiB line", hugePeakGrowth)
	})
}

// An edit of one line in the middle of a 2,000,000-line file (over 16 MiB)
// after a read of one line: the result names the line, the diff and the
// details are one small hunk, the disk holds exactly the change, and memory
// stays within a generous multiple of the file's size (an edit holds the
// file: match, hash, atomic write). docs/tools.md: "only the lines shown are
// kept, while the same pass … hashes the content for the edit guard": a
// change after the read, of the same size or appended, is caught. (A UTF-16
// one: read/utf16_file_over_16mib_refused_with_iconv.txtar.)
func TestHugeEditOfOneLineInTwoMillion(t *testing.T) {
	hugeDisk(t)
	const n, at = 2000000, 1000000
	for _, tc := range []struct {
		name   string
		change func(f *os.File) // between the read and the edit; nil: none
	}{
		{"edit after the read", nil},
		{"same-size change after the read", func(f *os.File) { f.WriteAt([]byte("X"), 0) }},
		{"appended after the read", func(f *os.File) { f.Seek(0, io.SeekEnd); f.WriteString("tail\n") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws := t.TempDir()
			p := filepath.Join(ws, "big.txt")
			size := hugeLines(t, p, n)
			s := hugeStart(t, ws)
			s.c.CallTool(s.ctx, "read", map[string]any{"path": "big.txt", "limit": 1})
			if tc.change != nil {
				f, _ := os.OpenFile(p, os.O_WRONLY, 0)
				tc.change(f)
				f.Close()
			}
			before := readFile(t, p)
			r := s.c.CallTool(s.ctx, "edit", map[string]any{"path": "big.txt", "edits": []map[string]any{{"oldText": hugeL(at), "newText": "CHANGED"}}})
			if tc.change != nil {
				wantResult(t, "edit after a change", r, true, "changed since you read it", "Read it again")
				if readFile(t, p) != before {
					t.Errorf("a refused edit changed the file")
				}
				return
			}
			if r.IsError {
				t.Fatalf("edit: isError:\n%s", hugeShow(r.Text()))
			}
			hugeMatch(t, "edit result", r.Text(), `^Edited big\.txt: 1 replacement, line `+hugeNum(at)+`\b`)
			diff, _ := r.Details["unifiedDiff"].(string)
			if raw, _ := json.Marshal(r.Details); len(diff) > 4096 || len(raw) > 64*1024 {
				t.Errorf("unifiedDiff %d bytes, details %d bytes, for a one-line change", len(diff), len(raw))
			}
			wantContains(t, "unifiedDiff", diff, "-"+hugeL(at)+"\n", "+CHANGED\n")
			got := readFile(t, p)
			if len(got) != int(size)-len(hugeL(at))+len("CHANGED") || strings.Index(got, "CHANGED\n") != (at-1)*10 {
				t.Errorf("file is %d bytes with CHANGED at %d, want %d bytes with it at %d", len(got), strings.Index(got, "CHANGED\n"), int(size)-2, (at-1)*10)
			}
			s.checkMem(t, "edit of a 2,000,000-line file", 16*size)
		})
	}
}

func TestHugeBatch(t *testing.T) {
	hugeDisk(t)
	ws := t.TempDir()
	const n = 3355444 // 10 bytes a line: 32 MiB
	size := hugeLines(t, filepath.Join(ws, "b00.txt"), n)
	if size < 32*hugeMiB {
		t.Fatalf("fixture is %d bytes", size)
	}
	const reads = 20
	for i := 1; i < reads; i++ {
		if err := os.Link(filepath.Join(ws, "b00.txt"), filepath.Join(ws, fmt.Sprintf("b%02d.txt", i))); err != nil {
			t.Fatal(err)
		}
	}
	s := hugeStart(t, ws)
	var calls []map[string]any
	for i := range reads {
		calls = append(calls, map[string]any{"name": "read", "arguments": map[string]any{"path": fmt.Sprintf("b%02d.txt", i), "offset": i*150000 + 1}})
	}
	var res struct {
		Results []harness.Result `json:"results"`
	}
	if err := s.c.Call(s.ctx, "tools/callBatch", map[string]any{"calls": calls}, &res); err != nil {
		t.Fatalf("callBatch: %v", err)
	}
	if len(res.Results) != reads {
		t.Fatalf("%d results for %d calls", len(res.Results), reads)
	}
	for i, r := range res.Results {
		text := r.Text()
		if r.IsError {
			t.Errorf("read %d: isError: %s", i, hugeShow(text))
			continue
		}
		from := i*150000 + 1
		to := from + hugeReadLines - 3 // 2000 lines in all, the header and notice among them
		hugeMatch(t, fmt.Sprintf("read %d header", i), text, fmt.Sprintf(`(?m)^b%02d\.txt, lines %s-%s of %s\b`, i, hugeNum(int64(from)), hugeNum(int64(to)), hugeNum(n)))
		wantContains(t, fmt.Sprintf("read %d", i), text, hugeLine(from, hugeL(from)), hugeLine(to, hugeL(to)), fmt.Sprintf("offset=%d", to+1))
		if len(text) > hugeBudget {
			t.Errorf("read %d is %d bytes", i, len(text))
		}
	}
	s.checkMem(t, "callBatch of 20 reads of 32 MiB", hugePeakGrowth)
}

// hugeCheckSpill checks the notice against docs/tools.md: the output being
// more than the 64 MiB spill file holds, it says only the start is saved and
// how many bytes were not; the file stays within the cap, holds the other
// bytes and starts as the output does.
func hugeCheckSpill(t *testing.T, text, spill string, total int64, start string) {
	t.Helper()
	b, err := os.ReadFile(spill)
	if err != nil {
		t.Fatalf("spill file: %v", err)
	}
	var lost int64
	if m := hugeMatch(t, "spill notice", text, `Only the start of the output is saved[^\n]* (\d+) bytes more were not saved`); m != nil {
		lost, _ = strconv.ParseInt(m[1], 10, 64)
	}
	if len(b) > hugeSpillCap || int64(len(b)) < total-lost || lost == 0 || !strings.HasPrefix(string(b), start) {
		t.Errorf("spill file is %d bytes starting %.40q, %d bytes not saved; want the %d bytes saved within the %d-byte cap, starting %.40q", len(b), b, lost, total-lost, hugeSpillCap, start)
	}
}
