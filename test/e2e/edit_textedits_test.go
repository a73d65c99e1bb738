package e2e

// The TextEdits of an edit's details are in the position encoding the
// client negotiated. What an edit does to the bytes and the rest of its
// details are pinned by the edit scripts (textedits_*, details_*).

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentls/agentls/test/harness"
)

// LSP 3.17: a client lists general.positionEncodings; the server answers
// with capabilities.positionEncoding (one offered, UTF-8 or UTF-16), and
// without one the positions are UTF-16. Whatever it declares, its TextEdits
// use it.
func TestEditTextEditsUseTheNegotiatedPositionEncoding(t *testing.T) {
	files := map[string]string{
		"two.txt":   "😀 中文 é x\r\nnext 😀 y\r\n",
		"multi.txt": "😀 héllo 中文 world\n𝄞 second 👍🏽 line\nthird\n",
	}
	for _, offered := range [][]string{{"utf-8"}, {"utf-32"}, {"utf-8", "utf-16"}, {"utf-16"}, {"utf-32", "utf-16"}} {
		t.Run(strings.Join(offered, ","), func(t *testing.T) {
			ws := newWorkspace(t, files)
			c := harness.Start(t, harness.Options{Root: ws})
			ctx := testCtx(t, sessionTimeout)
			res := c.Initialize(ctx, map[string]any{"initializationOptions": bypassOptions(), "capabilities": map[string]any{"general": map[string]any{"positionEncodings": offered}}})
			enc := "utf-16"
			if caps, _ := res["capabilities"].(map[string]any); caps != nil {
				if pe, ok := caps["positionEncoding"].(string); ok {
					enc = pe
				}
			}
			if enc != "utf-16" && (enc != "utf-8" || !slices.Contains(offered, enc)) {
				t.Fatalf("positionEncoding %q: not UTF-16, nor an offered UTF-8 (%v)", enc, offered)
			}
			for rel, e := range map[string][]string{
				"two.txt":   {"é x", "é X😀", "y", "Y"},
				"multi.txt": {"world\n𝄞 second 👍🏽", "mundo 🎉\nzweite"},
			} {
				mustRead(t, c, ctx, rel)
				r := c.CallTool(ctx, "edit", editCall(rel, e...))
				if r.IsError {
					t.Fatalf("edit %s: %s", rel, r.Text())
				}
				checkEdits(t, r.Details, files[rel], readFile(t, filepath.Join(ws, rel)), enc)
			}
			if got, want := readFile(t, filepath.Join(ws, "multi.txt")), "😀 héllo 中文 mundo 🎉\nzweite line\nthird\n"; got != want {
				t.Errorf("multi.txt %q, want %q", got, want)
			}
		})
	}
}
