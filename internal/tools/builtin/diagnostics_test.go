package builtin

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentls/agentls/internal/editguard"
	"github.com/agentls/agentls/internal/ops"
	"github.com/agentls/agentls/internal/textedit"
	"github.com/agentls/agentls/internal/tools"
)

// fakeLanguageServer plays the editor's side of tools/diagnostics: it
// reports one error per line containing "BROKEN" in the file on disk, plus
// the fixed problems in always.
type fakeLanguageServer struct {
	mu     sync.Mutex
	always []tools.Diagnostic
	fail   error           // answer every request with this error
	block  bool            // never answer (until the context ends)
	asked  []time.Duration // the wait of each request, in order
	uris   []string
}

func (f *fakeLanguageServer) Diagnostics(ctx context.Context, callID, tool string, uris []string, wait time.Duration) (map[string][]tools.Diagnostic, error) {
	f.mu.Lock()
	f.asked = append(f.asked, wait)
	f.uris = append(f.uris, uris...)
	f.mu.Unlock()
	if f.fail != nil {
		return nil, f.fail
	}
	if f.block {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	out := map[string][]tools.Diagnostic{}
	for _, u := range uris {
		ds := append([]tools.Diagnostic(nil), f.always...)
		text, _ := os.ReadFile(strings.TrimPrefix(u, "file://"))
		for i, line := range strings.Split(string(text), "\n") {
			if c := strings.Index(line, "BROKEN"); c >= 0 {
				ds = append(ds, tools.Diagnostic{Range: textedit.Range{Start: textedit.Position{Line: i, Character: c}}, Severity: 1, Source: "fake", Message: "undefined:\n\tBROKEN"})
			}
		}
		out[u] = ds
	}
	return out, nil
}

func (f *fakeLanguageServer) waits() []time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]time.Duration(nil), f.asked...)
}

func newLocalExecutor(t *testing.T, files map[string]string, ls *fakeLanguageServer) (*tools.Executor, string) {
	t.Helper()
	dir := t.TempDir()
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	fsys, err := ops.NewLocal([]ops.FolderSpec{{Path: dir}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fsys.Close() })
	guard := editguard.New(fsys)
	env := &tools.Env{FS: fsys, Guard: guard}
	if ls != nil {
		env.Diagnostics = ls
	}
	reg := tools.NewRegistry()
	reg.MustRegister(Builtins(tools.DefaultLimits())...)
	return &tools.Executor{Registry: reg, Env: env}, dir
}

func TestEditReportsTheProblemsItIntroduced(t *testing.T) {
	warning := tools.Diagnostic{Severity: 2, Source: "vet", Message: "unused variable x", Range: textedit.Range{Start: textedit.Position{Line: 0}}}
	ls := &fakeLanguageServer{always: []tools.Diagnostic{warning}}
	x, dir := newLocalExecutor(t, map[string]string{"a.go": "package a\nBROKEN_OLD\nfunc A() {}\n"}, ls)
	call(t, x, "read", `{"path":"a.go"}`)
	r := call(t, x, "edit", `{"path":"a.go","edits":[{"oldText":"func A() {}","newText":"func A() { BROKEN }"}]}`)
	if r.IsError {
		t.Fatalf("edit failed: %s", r.TextOf())
	}
	text := r.TextOf()
	want := "The editor reports new problems in a.go:\n  L3:12 error: undefined: BROKEN (fake)"
	if !strings.Contains(text, want) {
		t.Fatalf("edit result = %q, want it to contain %q", text, want)
	}
	// The error on line 2 and the warning were there before: not news.
	if strings.Contains(text, "L2:") || strings.Contains(text, "unused variable") {
		t.Fatalf("edit result reports a problem that was there before the edit: %q", text)
	}
	d, _ := r.Details["diagnostics"].(map[string]any)
	if d == nil || d["total"] != 3 || len(d["new"].([]tools.Diagnostic)) != 1 || d["uri"] != "file://"+filepath.Join(dir, "a.go") {
		t.Fatalf("details.diagnostics = %#v, want the uri, 1 new of 3", r.Details["diagnostics"])
	}
	if w := ls.waits(); len(w) != 2 || w[0] != 0 || w[1] != tools.DiagnosticsWait {
		t.Fatalf("requests waited %v, want a baseline (0) then one after the change (%v)", w, tools.DiagnosticsWait)
	}
}

func TestWriteReportsProblemsOfReplacedAndCreatedFiles(t *testing.T) {
	ls := &fakeLanguageServer{}
	x, _ := newLocalExecutor(t, map[string]string{"a.go": "package a\n"}, ls)
	call(t, x, "read", `{"path":"a.go"}`)
	r := call(t, x, "write", `{"path":"a.go","content":"package a\nBROKEN\n"}`)
	if !strings.Contains(r.TextOf(), "L2:1 error: undefined: BROKEN (fake)") {
		t.Fatalf("write (replace) = %q, want the new error", r.TextOf())
	}
	r = call(t, x, "write", `{"path":"new.go","content":"BROKEN\n"}`)
	if !strings.Contains(r.TextOf(), "Created new.go") || !strings.Contains(r.TextOf(), "L1:1 error: undefined: BROKEN") {
		t.Fatalf("write (create) = %q, want the new error", r.TextOf())
	}
	// A new file has no baseline to ask for: only the request after it.
	if w := ls.waits(); len(w) != 3 || w[2] != tools.DiagnosticsWait {
		t.Fatalf("requests waited %v, want baseline+after for the replace, one after for the create", w)
	}
}

func TestNewProblemsAreCappedWithACount(t *testing.T) {
	ls := &fakeLanguageServer{}
	x, _ := newLocalExecutor(t, map[string]string{"a.go": "package a\n"}, ls)
	call(t, x, "read", `{"path":"a.go"}`)
	content := "package a\n" + strings.Repeat("BROKEN\n", tools.MaxDiagnostics+2)
	r := call(t, x, "write", fmt.Sprintf(`{"path":"a.go","content":%q}`, content))
	text := r.TextOf()
	if got := strings.Count(text, " error: "); got != tools.MaxDiagnostics {
		t.Fatalf("%d problems shown, want %d: %q", got, tools.MaxDiagnostics, text)
	}
	if !strings.Contains(text, "… and 2 more") {
		t.Fatalf("result = %q, want the count of the problems not shown", text)
	}
}

func TestNoDiagnosticsWithoutAnEditorThatReports(t *testing.T) {
	cases := []struct {
		name string
		ls   *fakeLanguageServer
	}{
		{"no source", nil},
		{"source fails", &fakeLanguageServer{fail: errors.New("method not found")}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			x, _ := newLocalExecutor(t, map[string]string{"a.go": "package a\n"}, tc.ls)
			call(t, x, "read", `{"path":"a.go"}`)
			r := call(t, x, "edit", `{"path":"a.go","edits":[{"oldText":"package a","newText":"package BROKEN"}]}`)
			if r.IsError || strings.Contains(r.TextOf(), "problems") || r.Details["diagnostics"] != nil {
				t.Fatalf("edit = %q (details %v), want a plain success", r.TextOf(), r.Details["diagnostics"])
			}
			// A failed baseline means no question after the edit either:
			// every old problem would look new.
			if tc.ls != nil && len(tc.ls.waits()) != 1 {
				t.Fatalf("requests %v, want only the failed baseline", tc.ls.waits())
			}
		})
	}
}

func TestOnlyChangesAskTheEditor(t *testing.T) {
	ls := &fakeLanguageServer{}
	x, _ := newLocalExecutor(t, map[string]string{"a.go": "package a\n"}, ls)
	call(t, x, "read", `{"path":"a.go"}`)
	for _, args := range []string{
		`{"path":"a.go","edits":[{"oldText":"package a","newText":"package BROKEN"}],"dryRun":true}`,
		`{"path":"a.go","edits":[{"oldText":"package a","newText":"package a"}]}`,
		`{"path":"a.go","edits":[{"oldText":"nowhere","newText":"x"}]}`,
	} {
		call(t, x, "edit", args)
	}
	call(t, x, "write", `{"path":"a.go","content":"package a\n"}`)
	if w := ls.waits(); len(w) != 0 {
		t.Fatalf("a dry run, a no-op and failed calls asked the editor %d times", len(w))
	}
}

// diagnosticsSlack is the framework's bound on a diagnostics answer beyond
// the editor's wait (tools' diagnosticsSlack).
const diagnosticsSlack = time.Second

func TestAnEditorThatNeverAnswersCostsAtMostTheWait(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for the diagnostics timeouts")
	}
	ls := &fakeLanguageServer{block: true}
	x, _ := newLocalExecutor(t, map[string]string{"a.go": "package a\n"}, ls)
	call(t, x, "read", `{"path":"a.go"}`)
	start := time.Now()
	r := call(t, x, "edit", `{"path":"a.go","edits":[{"oldText":"package a","newText":"package b"}]}`)
	if r.IsError || !strings.Contains(r.TextOf(), "Edited a.go") {
		t.Fatalf("edit = %q, want a success", r.TextOf())
	}
	// The baseline timed out, so nothing was asked after the change.
	if took := time.Since(start); took > diagnosticsSlack+time.Second {
		t.Fatalf("edit took %v, want about the baseline timeout %v", took, diagnosticsSlack)
	}
}
