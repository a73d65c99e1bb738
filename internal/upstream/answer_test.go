package upstream

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentls/agentls/internal/tools"
)

// envStdioServer makes the test binary a stdio MCP server with one tool,
// "count", which refuses a negative n with a JSON-RPC error.
const envStdioServer = "AGENTLS_UPSTREAM_TEST_STDIO_SERVER"

// crashN makes the fake server exit in the middle of the call.
const crashN = 999

func TestMain(m *testing.M) {
	if os.Getenv(envStdioServer) == "1" {
		srv := sdk.NewServer(&sdk.Implementation{Name: "fake", Version: "1"}, nil)
		sdk.AddTool(srv, &sdk.Tool{Name: "count", Description: "counts to n"}, func(ctx context.Context, req *sdk.CallToolRequest, in struct {
			N int `json:"n"`
		}) (*sdk.CallToolResult, any, error) {
			if in.N == crashN {
				os.Exit(3) // a crash while the call is in flight
			}
			if in.N < 0 {
				// A protocol error, as servers that check more than their
				// schema says answer.
				return nil, nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "n must not be negative"}
			}
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: strings.Repeat("x", in.N)}}}, nil, nil
		})
		srv.Run(context.Background(), &sdk.StdioTransport{})
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// A stdio server that answers a call with a JSON-RPC error (arguments its
// schema rejects) is up: the model is told to fix the arguments, not that
// the server crashed and restarts.
func TestStdioServerAnswersWithAnError(t *testing.T) {
	m, x, _ := startManager(t, ServerConfig{Name: "fake", Type: TransportStdio, Command: os.Args[0], Env: map[string]string{envStdioServer: "1"}, Dir: t.TempDir()})
	_ = m
	x.Registry.Activate("fake__count")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r := x.Call(ctx, tools.Request{Name: "fake__count", Arguments: json.RawMessage(`{"n":-1}`)}, nil)
	text := r.TextOf()
	if !r.IsError || !strings.Contains(text, `the MCP server "fake" answered with an error`) || !strings.Contains(text, `tool_search "fake__count"`) {
		t.Fatalf("call with arguments the server rejects: isError=%v %q", r.IsError, text)
	}
	if strings.Contains(text, "did not answer") || strings.Contains(text, "restarted") {
		t.Errorf("an answer was reported as a crash: %q", text)
	}
	// The server is still the one running: the next good call works.
	r = x.Call(ctx, tools.Request{Name: "fake__count", Arguments: json.RawMessage(`{"n":3}`)}, nil)
	if r.IsError || r.TextOf() != "xxx" {
		t.Errorf("the next call: isError=%v %q", r.IsError, r.TextOf())
	}
}

// After a call whose server crashed under it, the next call is told the
// server is restarting (or runs on the restarted one): it used to go to
// the dead connection and fail again with "did not answer".
func TestCallAfterACrashMidCallIsNotSentToTheDeadConnection(t *testing.T) {
	_, x, _ := startManager(t, ServerConfig{Name: "fake", Type: TransportStdio, Command: os.Args[0], Env: map[string]string{envStdioServer: "1"}, Dir: t.TempDir()})
	x.Registry.Activate("fake__count")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r := x.Call(ctx, tools.Request{Name: "fake__count", Arguments: json.RawMessage(`{"n":999}`)}, nil)
	if !r.IsError || !strings.Contains(r.TextOf(), `the MCP server "fake" did not answer`) {
		t.Fatalf("the call the server crashed under: isError=%v %q", r.IsError, r.TextOf())
	}
	r = x.Call(ctx, tools.Request{Name: "fake__count", Arguments: json.RawMessage(`{"n":3}`)}, nil)
	if text := r.TextOf(); strings.Contains(text, "did not answer") {
		t.Errorf("the next call went to the dead connection: %q", text)
	} else if r.IsError && !strings.Contains(text, "restarting in") {
		t.Errorf("the next call: %q, want the restart named", text)
	}
}
