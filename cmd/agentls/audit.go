package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"

	"github.com/agentls/agentls/internal/audit"
)

// defaultAuditTail is how many entries `agentls audit` prints by default.
const defaultAuditTail = 20

// cmdAudit prints the newest audit log entries, across sessions.
func cmdAudit(g globalFlags, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("agentls audit", flag.ContinueOnError)
	fs.SetOutput(stderr)
	n := fs.Int("tail", defaultAuditTail, "print the last N entries across sessions, oldest first (0: all)")
	dir := fs.String("dir", "", "audit directory (default: $"+audit.EnvDir+", else $XDG_STATE_HOME/agentls/audit, else ~/.local/state/agentls/audit)")
	asJSON := fs.Bool("json", false, "print the stored JSON lines instead of one readable line per entry")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: agentls audit [--tail N] [--dir D] [--json]\n")
		fs.PrintDefaults()
	}
	if code, done := parseSub(fs, args, stdout); done {
		return code
	}
	if fs.NArg() > 0 || *n < 0 {
		fs.Usage()
		return 2
	}
	d := *dir
	if d == "" {
		var err error
		if d, err = audit.DefaultDir(); err != nil {
			fmt.Fprintf(stderr, "agentls audit: %v\n", err)
			return 1
		}
	}
	if *asJSON {
		var buf bytes.Buffer
		if err := audit.Tail(d, *n, &buf); err != nil {
			fmt.Fprintf(stderr, "agentls audit: %v\n", err)
			return 1
		}
		stdout.Write(buf.Bytes())
		return 0
	}
	entries, err := audit.TailEntries(d, *n)
	if err != nil {
		fmt.Fprintf(stderr, "agentls audit: %v\n", err)
		return 1
	}
	if len(entries) == 0 {
		fmt.Fprintf(stderr, "agentls audit: no entries in %s\n", d)
		return 0
	}
	for _, e := range entries {
		fmt.Fprintln(stdout, audit.Format(e))
	}
	return 0
}
