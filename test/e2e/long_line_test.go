package e2e

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// grep of a file that is one 100 MB line keeps the server's memory within
// 48 MiB of growth (the whole line used to be held, 1.5 GiB for 500 MB) and
// says the line was searched in part only.
func TestGrepOfOneHugeLineStaysBoundedAndSaysSo(t *testing.T) {
	t.Parallel()
	if runtime.GOOS != "linux" {
		t.Skip("peak memory is read from /proc (Linux only)")
	}
	ws := t.TempDir()
	f, err := os.Create(filepath.Join(ws, "line.txt"))
	if err != nil {
		t.Fatal(err)
	}
	block := []byte(strings.Repeat("abcdefghij", 1<<16)) // 640 KiB
	f.WriteString("head-needle ")
	for range 160 {
		f.Write(block)
	}
	f.WriteString(" tail-needle\n")
	f.Close()
	s := hugeStart(t, ws, "AGENTLS_GREP_BACKEND=go")
	r := s.c.CallTool(s.ctx, "grep", map[string]any{"pattern": "tail-needle"})
	text := r.Text()
	if !strings.Contains(text, "line 1 is longer than 8 MiB") {
		t.Errorf("grep past the cut of a 100 MB line: %.400q; want it to say the line was searched in part", text)
	}
	r = s.c.CallTool(s.ctx, "grep", map[string]any{"pattern": "head-needle"})
	if !strings.Contains(r.Text(), "line.txt:1:") {
		t.Errorf("grep of the start of a 100 MB line: %.400q; want the match", r.Text())
	}
	s.checkMem(t, "grep of one 100 MB line", hugePeakGrowth)
}
