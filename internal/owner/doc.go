// Package owner tells whether the process a file or directory is named
// after (its pid in the name) still runs: atomic writes' temp files, spill
// directories and audit logs of running agentls processes are kept, those
// of dead ones cleaned up. It is a leaf: proc, spill, ops and audit all
// use it.
package owner
