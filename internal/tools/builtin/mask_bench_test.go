package builtin

import (
	"context"
	"strings"
	"testing"

	"github.com/agentls/agentls/internal/secrets"
	"github.com/agentls/agentls/internal/tools"
)

// BenchmarkReadMasking runs the same read through the executor with and
// without the secret masker; the difference is what masking adds to a read
// (compare with BenchmarkReadRoundTrip in test/e2e for the share of a
// whole round trip).
func BenchmarkReadMasking(b *testing.B) {
	content := strings.Repeat("package main // a typical short source line with API_URL=https://example.com\n", 40)
	x, _ := newTestExecutor(b, map[string][]byte{"a.go": []byte(content)})
	req := tools.Request{Name: "read", Arguments: []byte(`{"path":"a.go"}`)}
	for _, tc := range []struct {
		name string
		m    tools.Masker
	}{{"no-masker", nil}, {"masker", secrets.New([]string{"MY_TOKEN=abcdefgh12345678"})}} {
		x.Masker = tc.m
		b.Run(tc.name, func(b *testing.B) {
			for b.Loop() {
				if r := x.Call(context.Background(), req, nil); r.IsError {
					b.Fatal(r.TextOf())
				}
			}
		})
	}
}
