package main

import (
	"fmt"
	"io"
)

// cmdAudit prints the audit log.
func cmdAudit(g globalFlags, args []string, stdout, stderr io.Writer) int {
	fmt.Fprintln(stderr, "agentls audit: not built yet")
	return 2
}
