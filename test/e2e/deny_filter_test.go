package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// denyWorkspace is 120 denied files that sort before three visible ones,
// all holding "needle": a filter applied after the limit (or to rendered
// text) loses the visible ones.
func denyWorkspace() map[string]string {
	files := map[string]string{}
	for i := 1; i <= 120; i++ {
		files[fmt.Sprintf("secret/s%03d.txt", i)] = "needle\n"
	}
	for i := 1; i <= 3; i++ {
		files[fmt.Sprintf("zpub%d.txt", i)] = "needle\n"
	}
	return files
}

func denyParams() map[string]any {
	return map[string]any{"initializationOptions": map[string]any{
		"mode":        "bypass",
		"permissions": map[string]any{"deny": []any{"Read(secret/**)"}},
	}}
}

// rgLogger puts an rg on PATH that records its arguments, one call per
// line, and runs the real rg; it returns the PATH entry and the log.
func rgLogger(t *testing.T) (env, log string) {
	t.Helper()
	real, err := exec.LookPath("rg")
	if err != nil {
		t.Skip("rg is not installed")
	}
	dir := t.TempDir()
	log = filepath.Join(dir, "rg.log")
	script := fmt.Sprintf("#!/bin/sh\nprintf '%%s\\n' \"$*\" >> %q\nexec %q \"$@\"\n", log, real)
	if err := os.WriteFile(filepath.Join(dir, "rg"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return "PATH=" + dir + string(os.PathListSeparator) + os.Getenv("PATH"), log
}

// grep with both backends: the denied files are counted, never searched
// (rg is only handed the files it may open) and never shown. find and ls are
// permissions/deny_rule_filters_before_the_limit.txtar.
func TestGrepDenyRuleDoesNotEatTheLimit(t *testing.T) {
	t.Parallel()
	for _, backend := range []string{"rg", "go"} {
		t.Run(backend, func(t *testing.T) {
			var env []string
			log := ""
			if backend == "go" {
				env = append(env, "AGENTLS_GREP_BACKEND=go")
			} else {
				var path string
				path, log = rgLogger(t)
				env = append(env, path)
			}
			c, _, ctx := startWith(t, denyWorkspace(), denyParams(), env...)
			r := c.CallTool(ctx, "grep", map[string]any{"pattern": "needle"})
			wantResult(t, "grep", r, false, "zpub1.txt:1: needle", "zpub2.txt:1: needle", "zpub3.txt:1: needle",
				"[120 files not searched: the permission rules do not allow reading them.]")
			wantLacks(t, "grep", r.Text(), "secret/", "matches shown", "limit 100")
			if got := r.Details["backend"]; got != backend {
				t.Fatalf("backend %v, want %s", got, backend)
			}
			r = c.CallTool(ctx, "grep", map[string]any{"pattern": "needle", "path": "secret/s001.txt"})
			wantResult(t, "grep a denied file", r, true, "denied by the rule Read(secret/**)")
			wantLacks(t, "grep a denied file", r.Text(), "secret/s001.txt:1")
			if log != "" {
				// rg was only ever handed files it may open: it never
				// walked a directory holding denied ones on its own.
				data, err := os.ReadFile(log)
				if err != nil {
					t.Fatalf("rg was not run: %v", err)
				}
				if strings.Contains(string(data), "secret") {
					t.Fatalf("rg was asked about denied files:\n%s", data)
				}
				if !strings.Contains(string(data), "zpub1.txt") {
					t.Fatalf("rg was not handed the visible files:\n%s", data)
				}
			}
		})
	}
}
