package mcp

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentls/agentls/internal/ops"
	"github.com/agentls/agentls/internal/session"
)

// BenchmarkReadThroughServer is one MCP tools/call of read, client and
// server in one process (no pipes): the per-call cost of the SDK's
// dispatch, our middleware and the executor. bench/mcp measures the same
// over stdio against server-filesystem.
func BenchmarkReadThroughServer(b *testing.B) {
	_, cs, dir := start(b, nil)
	params := &sdk.CallToolParams{Name: "read", Arguments: map[string]any{"path": dir + "/a.txt"}}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		r, err := cs.CallTool(ctx, params)
		if err != nil || r.IsError {
			b.Fatal(err, r)
		}
	}
}

// BenchmarkReadOverLines is the server's side of bench/mcp's read: a
// 40-line file read through Serve's line transport, the client being a
// pipe that writes a fixed request line and reads the answer line, so
// nearly all the time and allocations measured are the server's.
func BenchmarkReadOverLines(b *testing.B) {
	dir := b.TempDir()
	var content strings.Builder
	for j := range 40 {
		fmt.Fprintf(&content, "line %d of file\n", j)
	}
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte(content.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	sess, err := session.New(session.Options{Folders: []ops.FolderSpec{{Path: dir}}, Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	defer sess.Close()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- Serve(context.Background(), inR, outW, Options{Session: sess, Version: "bench"}) }()
	roundTrip := lineClient(b, inW, outR)
	call := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read","arguments":{"path":%q}}}`, filepath.Join(dir, "a.txt"))
	if reply := roundTrip(call); !strings.Contains(reply, "a.txt, lines 1-40 of 40") || strings.Contains(reply, `"isError":true`) {
		b.Fatalf("read answered %s", reply)
	}
	b.ReportAllocs()
	for b.Loop() {
		roundTrip(call)
	}
	inW.Close()
	if err := <-done; err != nil {
		b.Fatal(err)
	}
}

const initializedLine = `{"jsonrpc":"2.0","method":"notifications/initialized"}`

// lineClient initializes the server at the other end of the pipes and
// returns a round trip: one request line written, its reply line read.
func lineClient(b *testing.B, in io.Writer, out io.Reader) func(line string) string {
	r := bufio.NewReader(out)
	roundTrip := func(line string) string {
		if _, err := io.WriteString(in, line+"\n"); err != nil {
			b.Fatal(err)
		}
		if line == initializedLine {
			return ""
		}
		reply, err := r.ReadString('\n')
		if err != nil {
			b.Fatal(err)
		}
		return reply
	}
	roundTrip(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`)
	roundTrip(initializedLine)
	return roundTrip
}

// BenchmarkFloorOverLines is BenchmarkReadOverLines's reference, run in the
// same process: the smallest go-sdk server (bench/mcp/sdkserver's, a no-op
// tool answering "ok") on the SDK's IOTransport over the same pipes and
// lines. The difference between the two is what agentls adds per call.
func BenchmarkFloorOverLines(b *testing.B) {
	srv := sdk.NewServer(&sdk.Implementation{Name: "floor", Version: "1"}, nil)
	type noArgs struct{}
	sdk.AddTool(srv, &sdk.Tool{Name: "none", Description: "returns ok"},
		func(context.Context, *sdk.CallToolRequest, noArgs) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "ok\n"}}}, nil, nil
		})
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- srv.Run(context.Background(), &sdk.IOTransport{Reader: inR, Writer: outW}) }()
	roundTrip := lineClient(b, inW, outR)
	call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"none","arguments":{}}}`
	if reply := roundTrip(call); !strings.Contains(reply, `"ok\n"`) {
		b.Fatalf("the floor answered %s", reply)
	}
	b.ReportAllocs()
	for b.Loop() {
		roundTrip(call)
	}
	inW.Close()
	<-done
}
