package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"

	"github.com/agentls/agentls/internal/mcp"
	"github.com/agentls/agentls/internal/policy"
	"github.com/agentls/agentls/internal/proc"
	"github.com/agentls/agentls/internal/session"
	"github.com/agentls/agentls/internal/settings"
	"github.com/agentls/agentls/internal/tools/builtin"
)

// cmdMCP serves the session's tools as an MCP server over stdio
// (newline-delimited JSON). Workspace folders: the client's roots, else
// --root, else the working directory.
func cmdMCP(g globalFlags, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("agentls mcp", flag.ContinueOnError)
	fs.SetOutput(stderr)
	g.register(fs)
	mode := fs.String("mode", "", "permission mode: default (calls the MCP host approves run; ask rules and destructive commands still ask), acceptEdits, readOnly, bypass (default: from the settings files, else default)")
	if code, done := parseSub(fs, args, stdout); done {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "agentls mcp: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	if m, ok := policy.ParseMode(*mode); *mode != "" && !ok {
		fmt.Fprintf(stderr, "agentls mcp: --mode %q: use default, acceptEdits, readOnly or bypass\n", *mode)
		return 2
	} else {
		*mode = m
	}
	log, _, closeLog, err := newLogger(g, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "agentls mcp:", err)
		return 2
	}
	defer closeLog()
	// A --root that cannot be opened is skipped with a warning; none usable
	// is a usage error, found before serving.
	folders, err := rootFolders("agentls mcp", g.roots, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "agentls mcp:", err)
		return 2
	}
	// Everything not needed to answer initialize happens beside or after
	// it: connecting costs the client little more than starting the
	// process. Signal handling is set up on a goroutine of its own (a
	// signal before that ends the process, with nothing to clean up yet).
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var signals sync.WaitGroup
	defer signals.Wait()
	defer cancel()
	signals.Go(func() {
		ch := make(chan os.Signal, 1)
		signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
		defer signal.Stop(ch)
		select {
		case <-ch:
			cancel()
		case <-ctx.Done():
		}
	})

	// The session is built once the client is initialized. "ask"
	// decisions go to the user through MCP elicitation, or come back as a
	// denial when the client cannot elicit.
	// Adopting orphans (a signal handler, a goroutine) waits for the
	// session too: no command runs before it. Serve returns only after Open
	// has, so the deferred call sees what Open set.
	closeOrphans := func() {}
	defer func() { closeOrphans() }()
	opts := mcp.Options{Version: version, Instructions: builtin.InstructionsFor(""), Log: log,
		Open: func(host mcp.Host) (*session.Session, error) {
			var wd *proc.Watchdog
			wd, closeOrphans = adoptOrphans(log)
			// The host confirms each call itself (unless its user allowed
			// it): what only agentls's default mode would ask about is
			// left to it. The user's ask rules, destructive commands and
			// the other built-in asks still ask through elicitation.
			return session.New(session.Options{Folders: folders, Log: log, TestTools: testTools(), Confirmer: mcp.Confirmer{},
				Editor: &settings.Settings{Mode: *mode}, HostApproves: true, Client: "MCP host",
				ModeHint: "start agentls mcp with --mode default (leaves such calls to the MCP host's approval), --mode acceptEdits (also allows edits inside the workspace) or --mode bypass (allows everything but deny rules)",
				// Results sized for what the host passes on uncut.
				HostCap: host.Cap, Watchdog: wd,
			})
		}}
	if err := mcp.Serve(ctx, stdin, stdout, opts); err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintln(stderr, "agentls mcp:", err)
		return 1
	}
	return 0
}
