package mcp

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentls/agentls/internal/ops"
	"github.com/agentls/agentls/internal/session"
	"github.com/agentls/agentls/internal/tools"
	"github.com/agentls/agentls/internal/tools/builtin"
)

// Each host's cap comes from the table by its clientInfo.name; any other
// client, or none named, gets UnknownHostBytes.
func TestHostOfKnowsTheHostsCaps(t *testing.T) {
	for name, want := range map[string]tools.HostCap{
		"codex-mcp-client":      {Bytes: 10_000},
		"gemini-cli-mcp-client": {Bytes: 39_000},
		"opencode":              {Bytes: 51_200, Lines: 2000},
		"claude-code":           {Bytes: 25_000},
		"agentls":               {},
		"Visual Studio Code":    {Bytes: UnknownHostBytes},
		"":                      {Bytes: UnknownHostBytes},
	} {
		if got := HostOf(name); got.Cap != want || got.Name != name {
			t.Errorf("HostOf(%q) = %+v, want cap %+v", name, got, want)
		}
	}
}

// Every tool listed has a title: the built-in tools their own, others one
// made of the name.
func TestListedToolsHaveTitles(t *testing.T) {
	for _, bt := range builtin.Builtins(tools.DefaultLimits()) {
		st, err := sdkTool(bt)
		if err != nil {
			t.Fatal(err)
		}
		if st.Title == "" || st.Title == bt.Name {
			t.Errorf("%s: title %q", bt.Name, st.Title)
		}
	}
	for name, want := range map[string]string{"my_tool": "My tool", "github__search_issues": "Search issues (github)", "x": "X"} {
		tl, err := tools.NewTool(name, "d", map[string]any{"type": "object"})
		if err != nil {
			t.Fatal(err)
		}
		if st, _ := sdkTool(tl); st.Title != want {
			t.Errorf("%s: title %q, want %q", name, st.Title, want)
		}
	}
}

// The session is opened for the host the Go SDK client named (the
// client agentls itself uses for upstream servers), with that host's cap:
// the descriptions it lists state the lowered numbers.
func TestSessionOpensForTheConnectingHost(t *testing.T) {
	for name, want := range map[string]string{
		"codex-mcp-client": "A result is at most 2000 lines and 10000 bytes",
		"agentls":          "A result is at most 2000 lines and 51200 bytes",
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			st, ct := sdk.NewInMemoryTransports()
			got := make(chan Host, 1)
			srv := New(Options{Version: "test", Log: slog.New(slog.DiscardHandler), Open: func(h Host) (*session.Session, error) {
				got <- h
				return session.New(session.Options{Folders: []ops.FolderSpec{{Path: dir}}, Log: slog.New(slog.DiscardHandler), NoUpstream: true, AuditDir: "-", HostCap: h.Cap})
			}})
			done := make(chan error, 1)
			go func() { done <- srv.Run(ctx, st) }()
			cs, err := sdk.NewClient(&sdk.Implementation{Name: name, Version: "1"}, nil).Connect(ctx, ct, nil)
			if err != nil {
				t.Fatal(err)
			}
			list, err := cs.ListTools(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			if h := <-got; h != HostOf(name) {
				t.Errorf("opened for %+v, want %+v", h, HostOf(name))
			}
			for _, tl := range list.Tools {
				if tl.Name == "read" && !strings.Contains(tl.Description, want) {
					t.Errorf("read's description lacks %q", want)
				}
			}
			cs.Close()
			cancel()
			<-done
		})
	}
}
