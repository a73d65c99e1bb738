package tools_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/agentls/agentls/internal/editguard"
	"github.com/agentls/agentls/internal/ops/opstest"
	"github.com/agentls/agentls/internal/search"
	"github.com/agentls/agentls/internal/tools"
	"github.com/agentls/agentls/internal/tools/builtin"
)

// fuzzToolNames are the tools FuzzExecutorArguments calls; the last entry
// is a misspelt name, so the unknown-tool path is fuzzed too.
var fuzzToolNames = [...]string{"read", "ls", "grep", "find", "edit", "write", "bash", tools.ToolSearchName, "READ", "reed"}

// backquoted finds a field named the way validation messages name fields.
var backquoted = regexp.MustCompile("`[^`]+`")

// FuzzExecutorArguments sends arbitrary raw JSON arguments to every builtin
// tool through the executor (lookup → normalize → validate → decode →
// handler) over an in-memory workspace whose Exec refuses, so bash runs no
// command. Every result must carry a callId and content, an input error
// must say what to send, details.normalized lists strings, no handler may
// panic (the executor turns a panic into "internal error"), and the result
// must marshal.
func FuzzExecutorArguments(f *testing.F) {
	f.Setenv(search.BackendEnv, search.BackendGo) // no rg process on a Mem root
	seeds := []struct {
		tool uint8
		args string
	}{
		{0, `{"path":"a.go"}`},
		{0, `{"file_path":"a.go","offset":"2","limit":"1"}`},
		{0, `{"path":"a.go","offset":-3}`},
		{0, `{"path":"a.go","offset":1e300}`},
		{0, `"{\"path\":\"dir/b.txt\"}"`},
		{0, `{"path":"../x"}`},
		{1, `{}`},
		{1, `{"dir":"dir","limit":"0"}`},
		{2, `{"pattern":"func","context":2,"ignore_case":"true"}`},
		{2, `{"regex":"(","path":"a.go"}`},
		{3, `{"pattern":"**/*.go","limit":1}`},
		{3, `{"pattern":"[","path":"dir"}`},
		{4, `{"path":"a.go","edits":[{"oldText":"func A","newText":"func Z"}]}`},
		{4, `{"path":"a.go","old_string":"package a","new_string":"package b"}`},
		{4, `{"path":"a.go","edits":"[{\"old_str\":\"A\",\"new_str\":\"B\",\"replace_all\":true}]","dryRun":"true"}`},
		{4, `{"path":"a.go","edits":{"oldText":"x","newText":"y"}}`},
		{4, `{"path":"a.go","edits":[]}`},
		{5, `{"path":"new/c.txt","content":"hi\n"}`},
		{5, `{"file":"a.go","text":"x"}`},
		{6, `{"command":"ls","timeout":"5"}`},
		{6, `{"cmd":"rm -rf /","timeout":99999}`},
		{7, `{"query":"database","limit":50}`},
		{8, `{"path":"a.go"}`},
		{9, `null`},
		{0, `[1]`},
		{0, `{"path":`},
		{0, `{"path":null}`},
	}
	for _, s := range seeds {
		f.Add(s.tool, s.args)
	}
	reg := tools.NewRegistry()
	reg.MustRegister(builtin.Builtins(tools.DefaultLimits())...)
	reg.MustRegister(builtin.NewToolSearch(reg))
	f.Fuzz(func(t *testing.T, tool uint8, args string) {
		name := fuzzToolNames[int(tool)%len(fuzzToolNames)]
		mem := opstest.NewMem("/ws", map[string]string{
			"a.go":       "package a\n\nfunc A() {}\n\nfunc A2() {} // A\n",
			"dir/b.txt":  "one\ntwo\r\nthree",
			".gitignore": "*.log\n",
			"x.log":      "ignored\n",
			"bin.dat":    "\x00\x01\x02",
		})
		guard := editguard.New(mem)
		var logs bytes.Buffer
		x := &tools.Executor{
			Registry: reg,
			Env:      &tools.Env{FS: mem, Guard: guard},
			Log:      slog.New(slog.NewTextHandler(&logs, nil)),
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		// Read a.go first so edit and write get past the edit guard.
		if r := x.Call(ctx, tools.Request{Name: "read", Arguments: json.RawMessage(`{"path":"a.go"}`)}, nil); r.IsError {
			t.Fatalf("setup read failed: %s", r.TextOf())
		}
		req := tools.Request{Name: name, Arguments: json.RawMessage(args)}

		// The prepare path alone: a refusal must say what to send.
		if _, r, ok := x.PrepareCall(req, nil, true); !ok {
			checkResult(t, name, args, r)
			text := r.TextOf()
			if !backquoted.MatchString(text) && !strings.Contains(text, "Usage:") && !strings.Contains(text, "Available tools:") {
				t.Errorf("%s %s: input error names no field, usage or tool list: %q", name, args, text)
			}
		}

		start := time.Now()
		r := x.Call(ctx, req, nil)
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("%s %s: took %v", name, args, d)
		}
		checkResult(t, name, args, r)
		if strings.Contains(logs.String(), "tool panicked") {
			t.Fatalf("%s %s: handler panicked: %s\nlog: %s", name, args, r.TextOf(), logs.String())
		}
	})
}

// checkResult holds r to the invariants every result obeys.
func checkResult(t *testing.T, name, args string, r tools.Result) {
	t.Helper()
	if r.CallID == "" {
		t.Errorf("%s %s: result without callId", name, args)
	}
	if len(r.Content) == 0 {
		t.Errorf("%s %s: result without content (isError=%v, details %v)", name, args, r.IsError, r.Details)
	}
	if r.IsError && strings.TrimSpace(r.TextOf()) == "" {
		t.Errorf("%s %s: isError result with empty text", name, args)
	}
	if v, ok := r.Details["normalized"]; ok {
		list, isList := v.([]string)
		if !isList {
			t.Errorf("%s %s: details.normalized is %T, want []string", name, args, v)
		}
		for _, s := range list {
			if s == "" {
				t.Errorf("%s %s: details.normalized has an empty entry", name, args)
			}
		}
	}
	if _, err := json.Marshal(r); err != nil {
		t.Errorf("%s %s: result does not marshal: %v", name, args, err)
	}
}
