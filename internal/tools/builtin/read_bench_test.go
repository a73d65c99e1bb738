package builtin_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentls/agentls/internal/ops"
	"github.com/agentls/agentls/internal/session"
	"github.com/agentls/agentls/internal/tools"
)

// BenchmarkReadCall is one read tool call of a small file through the
// executor that session.New builds (permission policy, masker, edit guard,
// audit log, watcher), the per-call cost behind issue #9's MCP latency. The
// reference sub-benchmark is os.ReadFile of the same file: the floor no
// call can go below.
func BenchmarkReadCall(b *testing.B) {
	dir := b.TempDir()
	files := map[string]string{
		"a.txt":            "alpha\nbeta\n",
		"src/pkg/sub/b.go": "package sub\n\nfunc F() {}\n",
	}
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	sess, err := session.New(session.Options{
		Folders:    []ops.FolderSpec{{Path: dir}},
		Log:        slog.New(slog.DiscardHandler),
		AuditDir:   b.TempDir(),
		NoUpstream: true,
	})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { sess.Close() })

	for _, tc := range []struct{ name, path string }{
		{"relative", "a.txt"},
		{"absolute", filepath.Join(dir, "a.txt")},
		{"nested", "src/pkg/sub/b.go"},
	} {
		args, _ := json.Marshal(map[string]string{"path": tc.path})
		req := tools.Request{Name: "read", Arguments: args}
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if r := sess.Executor.Call(context.Background(), req, nil); r.IsError {
					b.Fatal(r.TextOf())
				}
			}
		})
	}
	b.Run("reference-os.ReadFile", func(b *testing.B) {
		name := filepath.Join(dir, "a.txt")
		b.ReportAllocs()
		for b.Loop() {
			if _, err := os.ReadFile(name); err != nil {
				b.Fatal(err)
			}
		}
	})
}
