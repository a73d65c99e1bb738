package e2e

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentls/agentls/test/harness"
)

// BenchmarkReadRoundTrip measures one tools/call read of a 40-line file
// through the real binary over a stdio pipe: client marshal, framing, server
// dispatch, executor, read, governance, reply.
func BenchmarkReadRoundTrip(b *testing.B) {
	ws := b.TempDir()
	content := ""
	for range 40 {
		content += "package main // a typical short source line\n"
	}
	if err := os.WriteFile(filepath.Join(ws, "a.go"), []byte(content), 0o644); err != nil {
		b.Fatal(err)
	}
	c := harness.Start(b, harness.Options{Root: ws})
	ctx := context.Background()
	c.Initialize(ctx, nil)
	args := map[string]any{"path": "a.go"}
	b.ResetTimer()
	for b.Loop() {
		var r harness.Result
		if err := c.Call(ctx, "tools/call", map[string]any{"name": "read", "arguments": args}, &r); err != nil || r.IsError {
			b.Fatal(err, r.Text())
		}
	}
}
