package tools_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentls/agentls/internal/jobs"
	"github.com/agentls/agentls/internal/ops"
	"github.com/agentls/agentls/internal/tools"
	"github.com/agentls/agentls/internal/tools/builtin"
)

// newTestExecutor is an Executor with the built-in tools over a temp
// folder holding files, as builtin's tests build it (its read_test.go).
func newTestExecutor(t testing.TB, files map[string][]byte) (*tools.Executor, string) {
	t.Helper()
	l := tools.DefaultLimits()
	dir := t.TempDir()
	for name, data := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	fsys, err := ops.NewLocal([]ops.FolderSpec{{Path: dir}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fsys.Close() })
	reg := tools.NewRegistry()
	reg.MustRegister(builtin.Builtins(l)...)
	env := &tools.Env{FS: fsys, Jobs: jobs.New(jobs.Options{Lines: l.BashLines, Bytes: l.BashBytes})}
	t.Cleanup(env.Jobs.Close)
	env.SetLimits(l)
	return &tools.Executor{Registry: reg, Env: env}, dir
}

func call(t *testing.T, x *tools.Executor, name, args string) tools.Result {
	t.Helper()
	return x.Call(context.Background(), tools.Request{Name: name, Arguments: []byte(args)}, nil)
}
