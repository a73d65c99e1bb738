package session

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/agentls/agentls/internal/audit"
	"github.com/agentls/agentls/internal/ops"
	"github.com/agentls/agentls/internal/spill"
)

// BenchmarkNew measures building a session on a tiny workspace: what an
// editor or MCP client waits for after starting agentls.
func BenchmarkNew(b *testing.B) {
	ws := b.TempDir()
	for name, content := range map[string]string{
		"go.mod":        "module example.com/tiny\n",
		"main.go":       "package main\n\nfunc main() {}\n",
		"src/a.txt":     "hello\n",
		".gitignore":    "build/\n",
		"build/out.bin": "x",
	} {
		p := filepath.Join(ws, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	b.Setenv(spill.CacheDirEnv, b.TempDir())
	opts := Options{
		Folders:       []ops.FolderSpec{{Path: ws}},
		UserConfigDir: b.TempDir(),
	}
	audits := b.TempDir()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		// The audit directory in its steady state: full, so opening a log
		// prunes one. A fresh one per session, since sessions opened in
		// the same second by one process would share a file name.
		b.StopTimer()
		opts.AuditDir = filepath.Join(audits, strconv.Itoa(i))
		fillAudit(b, opts.AuditDir)
		b.StartTimer()
		s, err := New(opts)
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		if err := s.Close(); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
}

// fillAudit creates dir holding audit.MaxFiles small logs of past sessions.
func fillAudit(b *testing.B, dir string) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		b.Fatal(err)
	}
	for i := range audit.MaxFiles {
		name := filepath.Join(dir, fmt.Sprintf("20260101-0000%02d-%d.jsonl", i, 1000+i))
		if err := os.WriteFile(name, []byte("{}\n"), 0o600); err != nil {
			b.Fatal(err)
		}
	}
}
