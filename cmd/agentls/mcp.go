package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"syscall"

	"github.com/agentls/agentls/internal/mcp"
	"github.com/agentls/agentls/internal/ops"
	"github.com/agentls/agentls/internal/session"
	"github.com/agentls/agentls/internal/tools"
)

// cmdMCP serves the session's tools as an MCP server over stdio
// (newline-delimited JSON). Workspace folders: the client's roots, else
// --root, else the working directory.
func cmdMCP(g globalFlags, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("agentls mcp", flag.ContinueOnError)
	fs.SetOutput(stderr)
	g.register(fs)
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "agentls mcp: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	log, _, closeLog, err := newLogger(g, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "agentls mcp:", err)
		return 2
	}
	defer closeLog()
	var folders []ops.FolderSpec
	for _, r := range g.roots {
		abs, err := filepath.Abs(r)
		if err != nil {
			fmt.Fprintln(stderr, "agentls mcp: --root:", err)
			return 2
		}
		folders = append(folders, ops.FolderSpec{Path: abs})
	}
	// A folder that cannot be opened is a usage error, found before serving.
	for _, f := range folders {
		if fi, err := os.Stat(f.Path); err != nil || !fi.IsDir() {
			fmt.Fprintf(stderr, "agentls mcp: --root %s is not a directory\n", f.Path)
			return 2
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	// One MCP client sends one call after another, and a call's latency is
	// mostly goroutine hand-offs (transport, the SDK's dispatch, the
	// handler): with one P and stdio in the poller they all run on one
	// thread, with no thread to wake in between. Tool work that blocks
	// (files, processes) still releases the P. GOMAXPROCS in the
	// environment overrides this.
	if os.Getenv("GOMAXPROCS") == "" {
		runtime.GOMAXPROCS(1)
	}
	if f, ok := stdin.(*os.File); ok {
		stdin = pollable(f)
	}
	if f, ok := stdout.(*os.File); ok {
		stdout = pollable(f)
	}

	// The session is built while the client initializes, so connecting
	// costs no more than starting the process. "ask" decisions go to the
	// user through MCP elicitation, or come back as a denial when the
	// client cannot elicit.
	opts := mcp.Options{Version: version, Instructions: tools.Instructions, Log: log,
		Open: func() (*session.Session, error) {
			return session.New(session.Options{Folders: folders, Log: log, TestTools: os.Getenv("AGENTLS_TEST_TOOLS") == "1", Confirmer: mcp.Confirmer{}})
		}}
	if err := mcp.Serve(ctx, stdin, stdout, opts); err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintln(stderr, "agentls mcp:", err)
		return 1
	}
	return 0
}
