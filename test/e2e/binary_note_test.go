package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentls/agentls/test/harness"
)

// grep of a text file whose first NUL byte comes after its first 8 KiB
// finds nothing (the file is binary to both backends) and says so, naming
// where the NUL is and how to search it anyway; it used to answer "No
// matches" as if the line were not there.
func TestGrepSaysAFileWithALateNULWasSkippedAsBinary(t *testing.T) {
	t.Parallel()
	for _, backend := range []string{"rg", "go"} {
		t.Run(backend, func(t *testing.T) {
			ws := t.TempDir()
			body := "needle here\n" + strings.Repeat("text line\n", 2000) + "\x00\n"
			if err := os.WriteFile(filepath.Join(ws, "late.txt"), []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
			c := harness.Start(t, harness.Options{Root: ws, Env: []string{"AGENTLS_GREP_BACKEND=" + backend, "XDG_CACHE_HOME=" + t.TempDir()}})
			ctx := testCtx(t, 30e9)
			c.Initialize(ctx, map[string]any{"initializationOptions": bypassOptions()})
			r := c.CallTool(ctx, "grep", map[string]any{"pattern": "needle", "path": "late.txt"})
			text := r.Text()
			if got, _ := r.Details["backend"].(string); got != backend {
				t.Skipf("backend %q in use, not %q (rg missing?)", got, backend)
			}
			if !strings.Contains(text, "late.txt is a binary file") || !strings.Contains(text, "the first at byte 20012") || !strings.Contains(text, "grep -a") {
				t.Errorf("grep of a file with a NUL at byte 20012: %q; want it named binary and skipped", text)
			}
		})
	}
}
