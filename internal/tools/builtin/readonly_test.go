package builtin

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentls/agentls/internal/ops"
)

// Saved command output (a spill file, a read-only root) is refused by edit
// and write before any matching: an ambiguous oldText in a huge spill file
// used to be counted first.
func TestSpillFilesAreRefusedBeforeAnyWork(t *testing.T) {
	x, _ := newLocalExecutor(t, nil, nil)
	spillDir := t.TempDir()
	big := strings.Repeat("yyyy\n", 1<<20)
	if err := os.WriteFile(filepath.Join(spillDir, "bash-1.log"), []byte(big), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := x.Env.FS.(*ops.Local).AddReadOnlyRoot(spillDir); err != nil {
		t.Fatal(err)
	}
	spill := filepath.Join(spillDir, "bash-1.log")
	call(t, x, "read", fmt.Sprintf(`{"path":%q,"limit":1}`, spill))
	for _, args := range []string{
		fmt.Sprintf(`{"path":%q,"edits":[{"oldText":"yyyy","newText":"z"}]}`, spill),
		fmt.Sprintf(`{"path":%q,"content":"z"}`, spill),
	} {
		tool := "edit"
		if strings.Contains(args, "content") {
			tool = "write"
		}
		r := call(t, x, tool, args)
		if !r.IsError || !strings.Contains(r.TextOf(), "is read-only: it is saved command output") || strings.Contains(r.TextOf(), "matches") {
			t.Fatalf("%s of a spill file = %q, want the read-only refusal", tool, r.TextOf())
		}
	}
	if b, _ := os.ReadFile(spill); string(b) != big {
		t.Fatal("the spill file changed")
	}
}
