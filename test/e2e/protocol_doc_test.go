package e2e

import (
	"errors"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"go.lsp.dev/jsonrpc2"
)

// docMethods returns the backticked method names in the first column of the
// table under the given "## " heading of docs/protocol.md.
func docMethods(t *testing.T, heading string) []string {
	t.Helper()
	b, err := os.ReadFile("../../docs/protocol.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	i := strings.Index(doc, "## "+heading+"\n")
	if i < 0 {
		t.Fatalf("docs/protocol.md has no %q section", heading)
	}
	section := doc[i+len(heading)+4:]
	if j := strings.Index(section, "\n## "); j >= 0 {
		section = section[:j]
	}
	var out []string
	for _, m := range regexp.MustCompile("(?m)^\\| `([^`]+)` \\|").FindAllStringSubmatch(section, -1) {
		out = append(out, m[1])
	}
	if len(out) == 0 {
		t.Fatalf("no methods under %q", heading)
	}
	return out
}

// Every client→server method the doc names is served: none answers
// MethodNotFound.
func TestProtocolDocClientMethodsAreServed(t *testing.T) {
	t.Parallel()
	c, _, ctx := start(t, nil)
	for _, m := range docMethods(t, "Client → server") {
		if m == "$/cancelRequest" || m == "workspace/didChangeWorkspaceFolders" || strings.HasPrefix(m, "textDocument/") {
			if err := c.Conn.Notify(ctx, m, map[string]any{"id": 999}); err != nil {
				t.Errorf("%s: %v", m, err)
			}
			continue
		}
		err := c.Call(ctx, m, map[string]any{"name": "read", "arguments": map[string]any{"path": "x"}, "calls": []any{}}, nil)
		var je *jsonrpc2.Error
		if errors.As(err, &je) && je.Code == jsonrpc2.MethodNotFound {
			t.Errorf("%s is documented but not served", m)
		}
	}
	// The connection is still healthy after the notifications.
	if err := c.Call(ctx, "tools/list", nil, nil); err != nil {
		t.Fatal(err)
	}
}

// Every server→client method the doc names is sent somewhere in the code.
func TestProtocolDocServerMethodsAreSent(t *testing.T) {
	t.Parallel()
	for _, m := range docMethods(t, "Server → client") {
		out, _ := exec.Command("git", "-C", "../..", "grep", "-l", "-F", `"`+m+`"`, "--", "internal/*.go", "cmd/*.go").Output()
		var prod []string
		for _, f := range strings.Fields(string(out)) {
			if !strings.HasSuffix(f, "_test.go") {
				prod = append(prod, f)
			}
		}
		if len(prod) == 0 {
			t.Errorf("%s is documented but no production code sends it", m)
		}
	}
}
