package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
)

// One bad --root used to end `agentls mcp` (and went unchecked elsewhere):
// it is skipped with a warning naming it, and only all bad is an error.
func TestRootFlagSkipsABadRootAndFailsWhenNoneIsUsable(t *testing.T) {
	good := t.TempDir()
	missing := filepath.Join(good, "missing")
	var stderr bytes.Buffer
	specs, err := rootFolders("agentls mcp", []string{missing, good}, &stderr)
	if err != nil || len(specs) != 1 || specs[0].Path != good {
		t.Fatalf("rootFolders = %+v, %v; want only %s", specs, err, good)
	}
	if w := stderr.String(); !strings.Contains(w, "warning: --root "+missing+" (does not exist) skipped") {
		t.Errorf("warning does not name the bad root: %q", w)
	}

	stderr.Reset()
	specs, err = rootFolders("agentls mcp", []string{missing, filepath.Join(good, "also-missing")}, &stderr)
	if err == nil || !strings.Contains(err.Error(), missing) || !strings.Contains(err.Error(), "also-missing") {
		t.Fatalf("all roots bad: specs=%+v err=%v; want an error naming both", specs, err)
	}
	if specs, err := rootFolders("agentls", nil, &stderr); err != nil || specs != nil {
		t.Errorf("no --root: %+v, %v; want no folders and no error", specs, err)
	}
}
