package builtin_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentls/agentls/internal/ops"
	"github.com/agentls/agentls/internal/session"
	"github.com/agentls/agentls/internal/settings"
	"github.com/agentls/agentls/internal/tools"
)

// codeLike is about size bytes of 60-byte code-like lines with word once
// in the middle.
func codeLike(size int, word string) []byte {
	var b strings.Builder
	n := size / 60
	for i := range n {
		if i == n/2 {
			fmt.Fprintf(&b, "\tx := %q // %-38s\n", word, "the line the benchmark edits")
			continue
		}
		fmt.Fprintf(&b, "\tvalue%06d := compute(%06d) // %-26s\n", i, i, "filler")
	}
	return []byte(b.String())
}

// BenchmarkEditCall is an edit of one line of a 5 MiB file through the
// executor session.New builds (edit guard, watcher, audit log): the whole
// edit path in process, the result encoded as the server would send it.
// The reference is a read of the whole file through the same executor.
func BenchmarkEditCall(b *testing.B) {
	dir := b.TempDir()
	name := filepath.Join(dir, "f.go")
	if err := os.WriteFile(name, codeLike(5<<20, "ALPHA"), 0o644); err != nil {
		b.Fatal(err)
	}
	sess, err := session.New(session.Options{
		Folders:       []ops.FolderSpec{{Path: dir}},
		Log:           slog.New(slog.DiscardHandler),
		AuditDir:      b.TempDir(),
		NoUpstream:    true,
		UserConfigDir: b.TempDir(),
		Editor:        &settings.Settings{Mode: "bypass"},
	})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { sess.Close() })
	call := func(name string, args map[string]any) tools.Result {
		raw, _ := json.Marshal(args)
		r := sess.Executor.Call(context.Background(), tools.Request{Name: name, Arguments: raw}, nil)
		if r.IsError {
			b.Fatal(r.TextOf())
		}
		if _, err := json.Marshal(r); err != nil {
			b.Fatal(err)
		}
		return r
	}
	call("read", map[string]any{"path": "f.go", "limit": 10})
	b.Run("edit", func(b *testing.B) {
		words := [2]string{"ALPHA", "BRAVO"}
		for i := 0; b.Loop(); i++ {
			call("edit", map[string]any{"path": "f.go", "edits": []any{map[string]any{
				"oldText": `"` + words[i%2] + `"`, "newText": `"` + words[(i+1)%2] + `"`,
			}}})
		}
	})
	b.Run("reference-read", func(b *testing.B) {
		for b.Loop() {
			call("read", map[string]any{"path": "f.go"})
		}
	})
}
