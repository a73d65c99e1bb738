package builtin

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentls/agentls/internal/editguard"
	"github.com/agentls/agentls/internal/ops"
)

// A missing path that is a typo of an existing one is answered with the
// existing one, of the kind the tool takes; a path like nothing there
// gets the tool's plain hint.
func TestMissingPathsSuggestNearNames(t *testing.T) {
	x, dir := newTestExecutor(t, map[string][]byte{
		"src/main.go":      []byte("package main\n"),
		"src/handler.go":   []byte("package main\n"),
		"docs/readme.md":   []byte("hi\n"),
		"scripts/build.sh": []byte("echo\n"),
	})
	guard := editguard.New(x.Env.FS)
	x.Env.Guard = guard
	cases := []struct {
		tool, args string
		want       string // "" = no suggestion
		hint       string
	}{
		{"read", `{"path":"src/mian.go"}`, "Did you mean: src/main.go?", ""},
		{"ls", `{"path":"srcc"}`, "Did you mean: src?", "Use find to locate it"},
		{"ls", `{"path":"src/main.goo"}`, "", "Use find to locate it"}, // ls takes directories
		{"find", `{"pattern":"*.go","path":"scrips"}`, "Did you mean: scripts?", "Use ls to look at its parent directory."},
		{"grep", `{"pattern":"x","path":"dosc"}`, "Did you mean: docs?", "omit path to search everything"},
		{"grep", `{"pattern":"x","path":"src/handlr.go"}`, "Did you mean: src/handler.go?", "omit path to search everything"},
		{"edit", `{"path":"src/hanlder.go","old_string":"a","new_string":"b"}`, "Did you mean: src/handler.go?", "To create a new file, use write."},
		{"edit", `{"path":"zzz/qqq.go","old_string":"a","new_string":"b"}`, "", "use write to create it"},
		{"ls", `{"path":"nothing/like/it"}`, "", "Use find to locate it"},
		{"bash", `{"command":"ls","cwd":"scrpits"}`, "Did you mean: scripts?", "omit cwd to run in the workspace root"},
	}
	for _, tc := range cases {
		r := call(t, x, tc.tool, tc.args)
		text := r.TextOf()
		if !r.IsError {
			t.Errorf("%s %s: not an error: %s", tc.tool, tc.args, text)
			continue
		}
		if tc.want == "" && strings.Contains(text, "Did you mean") || tc.want != "" && !strings.Contains(text, tc.want) {
			t.Errorf("%s %s: want suggestion %q, got: %s", tc.tool, tc.args, tc.want, text)
		}
		if tc.hint != "" && !strings.Contains(text, tc.hint) {
			t.Errorf("%s %s: lost its hint %q: %s", tc.tool, tc.args, tc.hint, text)
		}
	}
	// The mistyped edit wrote nothing.
	if _, err := os.Stat(filepath.Join(dir, "src", "hanlder.go")); !os.IsNotExist(err) {
		t.Errorf("edit of a missing file created it: %v", err)
	}
}

// A suggestion in a folder other than the first is named as the model must
// send it: absolutely, as every path of that folder is shown.
func TestSuggestionInASecondFolderIsAbsolute(t *testing.T) {
	x, dir := newTestExecutor(t, map[string][]byte{
		"a/x.txt":         []byte("a\n"),
		"b/notes/todo.md": []byte("b\n"),
	})
	if err := x.Env.FS.SetFolders([]ops.FolderSpec{{Path: dir + "/a"}, {Path: dir + "/b"}}); err != nil {
		t.Fatal(err)
	}
	r := call(t, x, "read", `{"path":"`+dir+`/b/notes/tood.md"}`)
	want := "Did you mean: " + dir + "/b/notes/todo.md?"
	if !r.IsError || !strings.Contains(r.TextOf(), want) {
		t.Fatalf("want %q in: %s", want, r.TextOf())
	}
	if s, _, _ := strings.Cut(strings.SplitAfter(r.TextOf(), "Did you mean: ")[1], "?"); !strings.Contains(call(t, x, "read", `{"path":"`+s+`"}`).TextOf(), "1→b") {
		t.Errorf("the suggested path %q does not read the file", s)
	}
}

// For src/net/http/server.go in a tree holding net/http/server.go (the
// request has one directory too many), that file was listed last, after
// names merely near server.go; an exact suffix match comes first.
func TestSuggestionThatIsAnExactSuffixComesFirst(t *testing.T) {
	x, _ := newTestExecutor(t, map[string][]byte{
		"net/http/server.go":   []byte("package http\n"),
		"crypto/tls/server.go": []byte("package tls\n"),
		"log/syslog/server.go": []byte("package syslog\n"),
		"mime/server.go":       []byte("package mime\n"),
		"pkg/util/handler.go":  []byte("package util\n"),
		"a/handler.go":         []byte("package a\n"),
	})
	r := call(t, x, "read", `{"path":"src/net/http/server.go"}`)
	if !strings.Contains(r.TextOf(), "Did you mean: net/http/server.go,") {
		t.Errorf("want net/http/server.go first: %s", r.TextOf())
	}
	r = call(t, x, "read", `{"path":"util/handler.go"}`)
	if !strings.Contains(r.TextOf(), "Did you mean: pkg/util/handler.go") {
		t.Errorf("want pkg/util/handler.go first: %s", r.TextOf())
	}
}
