package e2e

// Contract tests of edit, write, bash, tool_search, extension tools and
// the protocol items around them, against design/TOOLS.md and PROTOCOL.md.
// Black-box: everything goes through the wire, as an editor would drive it.

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.lsp.dev/jsonrpc2"

	"github.com/agentls/agentls/test/harness"
)

// auditCall runs tools/call with an explicit callId (empty: none sent) and
// returns the result and the time the reply arrived.
func auditCall(t *testing.T, c *harness.Client, ctx context.Context, name, callID string, args any) (harness.Result, time.Time) {
	t.Helper()
	p := map[string]any{"name": name, "arguments": args}
	if callID != "" {
		p["callId"] = callID
	}
	var r harness.Result
	if err := c.Call(ctx, "tools/call", p, &r); err != nil {
		t.Fatalf("tools/call %s: %v", name, err)
	}
	return r, time.Now()
}

// auditDetailsNote is the tools/details notification of one call.
type auditDetailsNote struct {
	CallID  string         `json:"callId"`
	Tool    string         `json:"tool"`
	Details map[string]any `json:"details"`
}

func auditFindDetails(c *harness.Client, callID string) (auditDetailsNote, time.Time, bool) {
	n, ok := c.WaitNote(2*time.Second, func(n harness.Note) bool {
		if n.Method != "tools/details" {
			return false
		}
		var d auditDetailsNote
		json.Unmarshal(n.Params, &d)
		return d.CallID == callID
	})
	var d auditDetailsNote
	json.Unmarshal(n.Params, &d)
	return d, n.At, ok
}

// --- edit -------------------------------------------------------------------

// Every oldText is matched against the original file; the edits must be
// unique (unless replaceAll) and must not overlap; all apply or none.
func TestEditMatchingRules(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		file    string
		args    map[string]any
		isError bool
		want    string   // file content afterwards
		text    []string // in the result text
	}{
		{"matched against the original, not after earlier edits", "alpha beta\n",
			editCall("f.txt", "alpha", "beta", "beta", "gamma"), false, "beta gamma\n",
			[]string{"2 replacements"}},
		{"text produced by an earlier edit is not matched", "one\n",
			editCall("f.txt", "one", "two", "two", "three"), true, "one\n",
			[]string{"edit 2", "not found"}},
		{"ambiguous match lists lines and suggests context or replaceAll", "x = 1\nfoo\ny = 2\nz = 3\nfoo\n",
			editCall("f.txt", "foo", "bar"), true, "x = 1\nfoo\ny = 2\nz = 3\nfoo\n",
			[]string{"2", "5", "context", "replaceAll"}},
		{"replaceAll replaces every occurrence", "foo\nbar\nfoo\nfoo\n",
			map[string]any{"path": "f.txt", "edits": []any{map[string]any{"oldText": "foo", "newText": "baz", "replaceAll": true}}}, false, "baz\nbar\nbaz\nbaz\n",
			[]string{"3 replacements"}},
		{"overlapping edits are refused, naming both", "abcdef\n",
			editCall("f.txt", "abcd", "X", "cdef", "Y"), true, "abcdef\n",
			[]string{"1", "2", "overlap"}},
		{"all or nothing: a failing second edit leaves the first unapplied", "keep\nme\n",
			editCall("f.txt", "keep", "changed", "absent text", "x"), true, "keep\nme\n",
			[]string{"edit 2"}},
		{"identical result is a no change error", "same\n",
			editCall("f.txt", "same", "same"), true, "same\n",
			[]string{"no change"}},
		{"empty oldText is refused", "abc\n",
			editCall("f.txt", "", "x"), true, "abc\n", []string{"oldText"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, ws, ctx := start(t, map[string]string{"f.txt": tc.file})
			c.CallTool(ctx, "read", map[string]any{"path": "f.txt"})
			r := c.CallTool(ctx, "edit", tc.args)
			if r.IsError != tc.isError {
				t.Fatalf("isError = %v, want %v: %s", r.IsError, tc.isError, r.Text())
			}
			for _, w := range tc.text {
				if !strings.Contains(r.Text(), w) {
					t.Errorf("result lacks %q:\n%s", w, r.Text())
				}
			}
			if got := readFile(t, filepath.Join(ws, "f.txt")); got != tc.want {
				t.Errorf("file = %q, want %q", got, tc.want)
			}
		})
	}
}

// The matching ladder: each level is used only when the stricter ones find
// nothing, the level is reported (details.matchLevel and, for fuzzy levels,
// the text with a numbered snippet), and only the matched bytes change.
func TestEditMatchingLadder(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, file, old, new, want, level string
	}{
		{"exact", "a  \nfoo()\nb\t\n", "foo()", "bar()", "a  \nbar()\nb\t\n", "exact"},
		{"line endings: LF oldText in a CRLF file, newText gets CRLF",
			"keep  \r\nline one\r\nline two\r\nend\r\n", "line one\nline two\n", "first\nsecond\n",
			"keep  \r\nfirst\r\nsecond\r\nend\r\n", "lineEndings"},
		{"trailing whitespace ignored; other lines keep theirs",
			"other   \nfoo   \nbar\t\nzed  \n", "foo\nbar", "FOO\nBAR",
			"other   \nFOO\nBAR\t\nzed  \n", "trailingWhitespace"},
		{"typographic quotes and dashes folded",
			"x  \nsay(“hello” – world)\ny\n", `say("hello" - world)`, `say("bye")`,
			"x  \nsay(\"bye\")\ny\n", "unicode"},
		{"NBSP folded", "a\u00a0b\nc\n", "a b", "ab", "ab\nc\n", "unicode"},
		{"indentation: new text re-indented to the file's tabs",
			"func f() {\n\tif x {\n\t\treturn 1\n\t}\n}\n",
			"    if x {\n        return 1\n    }", "    if y {\n        return 2\n    }",
			"func f() {\n\tif y {\n\t\treturn 2\n\t}\n}\n", "indentation"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, ws, ctx := start(t, map[string]string{"f.txt": tc.file})
			c.CallTool(ctx, "read", map[string]any{"path": "f.txt"})
			r := c.CallTool(ctx, "edit", editCall("f.txt", tc.old, tc.new))
			if r.IsError {
				t.Fatalf("edit: %s", r.Text())
			}
			if got := readFile(t, filepath.Join(ws, "f.txt")); got != tc.want {
				t.Errorf("file = %q, want %q", got, tc.want)
			}
			if got := r.Details["matchLevel"]; got != tc.level {
				t.Errorf("details.matchLevel = %v, want %s", got, tc.level)
			}
			lines := strings.Split(r.Text(), "\n")
			if tc.level == "exact" {
				if len(lines) != 1 {
					t.Errorf("exact edit result is not one line: %q", r.Text())
				}
			} else {
				if !strings.Contains(lines[0], tc.level) {
					t.Errorf("fuzzy level not reported in the text: %q", r.Text())
				}
				if !regexp.MustCompile(`(?m)^\s*\d+→`).MatchString(r.Text()) {
					t.Errorf("fuzzy edit without a numbered snippet: %q", r.Text())
				}
			}
		})
	}
}

// Uniqueness is required at every level: two regions equal after folding
// are ambiguous, and nothing is written.
func TestEditFuzzyLevelRequiresUniqueness(t *testing.T) {
	t.Parallel()
	file := "say(“hi”)\nmid\nsay(”hi“)\n"
	c, ws, ctx := start(t, map[string]string{"f.txt": file})
	c.CallTool(ctx, "read", map[string]any{"path": "f.txt"})
	r := c.CallTool(ctx, "edit", editCall("f.txt", `say("hi")`, "x"))
	if !r.IsError || !strings.Contains(r.Text(), "1") || !strings.Contains(r.Text(), "3") || !strings.Contains(r.Text(), "replaceAll") {
		t.Fatalf("ambiguous fuzzy match: isError=%v %s", r.IsError, r.Text())
	}
	if got := readFile(t, filepath.Join(ws, "f.txt")); got != file {
		t.Fatalf("file changed: %q", got)
	}
}

// BOM, CRLF, missing final newline and the file mode survive an edit, and
// the write replaces the file by rename (new inode, no temp file left).
func TestEditPreservesBOMEndingsFinalNewlineModeAtomically(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, file, old, new, want string
		mode                       os.FileMode
	}{
		{"BOM + CRLF + no final newline, 0755", "\xEF\xBB\xBFone\r\ntwo\r\nthree", "two", "TWO", "\xEF\xBB\xBFone\r\nTWO\r\nthree", 0o755},
		{"no final newline kept when newText ends in one", "a\nb", "b", "c\n", "a\nc", 0o600},
		{"final newline kept when the edit eats it", "a\nb\n", "b\n", "c", "a\nc\n", 0o640},
		{"CRLF file gets CRLF for newText lines", "x\r\ny\r\n", "y", "y1\ny2", "x\r\ny1\r\ny2\r\n", 0o644},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, ws, ctx := start(t, nil)
			p := filepath.Join(ws, "f.txt")
			if err := os.WriteFile(p, []byte(tc.file), tc.mode); err != nil {
				t.Fatal(err)
			}
			os.Chmod(p, tc.mode)
			var before syscall.Stat_t
			syscall.Stat(p, &before)
			c.CallTool(ctx, "read", map[string]any{"path": "f.txt"})
			if r := c.CallTool(ctx, "edit", editCall("f.txt", tc.old, tc.new)); r.IsError {
				t.Fatalf("edit: %s", r.Text())
			}
			if got := readFile(t, p); got != tc.want {
				t.Errorf("file = %q, want %q", got, tc.want)
			}
			fi, _ := os.Stat(p)
			if fi.Mode().Perm() != tc.mode {
				t.Errorf("mode = %v, want %v", fi.Mode().Perm(), tc.mode)
			}
			var after syscall.Stat_t
			syscall.Stat(p, &after)
			if after.Ino == before.Ino {
				t.Errorf("inode unchanged (%d): the file was rewritten in place, not replaced by rename", after.Ino)
			}
			entries, _ := os.ReadDir(ws)
			if len(entries) != 1 {
				var names []string
				for _, e := range entries {
					names = append(names, e.Name())
				}
				t.Errorf("directory holds %v, want only f.txt (temp file left?)", names)
			}
		})
	}
}

// 0 matches: the closest region with line numbers and visible whitespace.
func TestEditNotFoundShowsClosestRegion(t *testing.T) {
	t.Parallel()
	file := "package main\n\nfunc main() {\n\tfmt.Println(\"hello world\")  \n}\n"
	c, ws, ctx := start(t, map[string]string{"m.go": file})
	c.CallTool(ctx, "read", map[string]any{"path": "m.go"})
	r := c.CallTool(ctx, "edit", editCall("m.go", "    fmt.Println(\"hello, world\")", "x"))
	if !r.IsError {
		t.Fatalf("not an error: %s", r.Text())
	}
	txt := r.Text()
	if !strings.Contains(txt, "4") || !strings.Contains(txt, "→fmt.Println") || !strings.Contains(txt, "··") {
		t.Errorf("no closest region with line number 4 and visible tab/spaces:\n%s", txt)
	}
	if got := readFile(t, filepath.Join(ws, "m.go")); got != file {
		t.Fatal("file changed")
	}
}

// The one-line result format of TOOLS.md, with replacement count and spans.
func TestEditResultLineFormat(t *testing.T) {
	t.Parallel()
	c, _, ctx := start(t, map[string]string{"src/a.go": auditLines(50)})
	c.CallTool(ctx, "read", map[string]any{"path": "src/a.go"})
	r := c.CallTool(ctx, "edit", editCall("src/a.go", "line 10\nline 11\nline 12\n", "ten\neleven\ntwelve\n", "line 40\n", "forty\n"))
	if r.IsError {
		t.Fatal(r.Text())
	}
	if got, want := r.Text(), "Edited src/a.go: 2 replacements, lines 10-12 and 40."; got != want {
		t.Errorf("result = %q, want %q", got, want)
	}
}

// tools/details arrives before the reply and carries the contract's fields:
// a git-style unified diff that applies, LSP TextEdits (UTF-16) in the old
// text that reproduce the new one, firstChangedLine, matchLevel and
// sha256 hashes of the old and new content.
func TestEditDetailsPayload(t *testing.T) {
	t.Parallel()
	old := "first\nhéllo 😀 world\nmiddle\nlast line\n"
	c, ws, ctx := start(t, map[string]string{"d/x.txt": old})
	c.CallTool(ctx, "read", map[string]any{"path": "d/x.txt"})
	r, replyAt := auditCall(t, c, ctx, "edit", "det-1", editCall("d/x.txt", "world", "planet", "last line", "end"))
	if r.IsError {
		t.Fatal(r.Text())
	}
	newText := readFile(t, filepath.Join(ws, "d/x.txt"))
	n, at, ok := auditFindDetails(c, "det-1")
	if !ok {
		t.Fatal("no tools/details notification with the call's callId")
	}
	if !at.Before(replyAt) {
		t.Errorf("tools/details arrived at %v, after the reply at %v", at, replyAt)
	}
	if n.Tool != "edit" {
		t.Errorf("tools/details tool = %q", n.Tool)
	}
	d := n.Details
	if d["kind"] != "edit" || !strings.HasPrefix(fmt.Sprint(d["uri"]), "file://") || !strings.HasSuffix(fmt.Sprint(d["uri"]), "/d/x.txt") {
		t.Errorf("kind/uri = %v %v", d["kind"], d["uri"])
	}
	if d["matchLevel"] != "exact" {
		t.Errorf("matchLevel = %v", d["matchLevel"])
	}
	if d["firstChangedLine"] != 2.0 {
		t.Errorf("firstChangedLine = %v, want 2 (1-based, like the result text)", d["firstChangedLine"])
	}
	if want := fmt.Sprintf("sha256:%x", sha256.Sum256([]byte(old))); d["oldHash"] != want {
		t.Errorf("oldHash = %v, want %s", d["oldHash"], want)
	}
	if want := fmt.Sprintf("sha256:%x", sha256.Sum256([]byte(newText))); d["newHash"] != want {
		t.Errorf("newHash = %v, want %s", d["newHash"], want)
	}
	edits, _ := d["edits"].([]any)
	if len(edits) == 0 {
		t.Fatalf("no TextEdits: %v", d["edits"])
	}
	if got := applyTextEdits(t, old, edits); got != newText {
		t.Errorf("TextEdits applied to the old text give %q, want %q (edits %v)", got, newText, edits)
	}
	diff, _ := d["unifiedDiff"].(string)
	if !strings.Contains(diff, "--- a/d/x.txt\n+++ b/d/x.txt\n") || !strings.Contains(diff, "@@ -") {
		t.Errorf("unified diff is not git style:\n%s", diff)
	}
	// The diff applies with git apply to the old content.
	tmp := t.TempDir()
	writeFiles(t, tmp, map[string]string{"d/x.txt": old})
	cmd := exec.Command("git", "apply", "-")
	cmd.Dir, cmd.Stdin = tmp, strings.NewReader(diff)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git apply: %v\n%s\n%s", err, out, diff)
	}
	if got := readFile(t, filepath.Join(tmp, "d/x.txt")); got != newText {
		t.Errorf("git apply result = %q, want %q", got, newText)
	}
	// The reply carries the same details (for logs).
	if r.Details["newHash"] != d["newHash"] {
		t.Errorf("reply details differ from tools/details")
	}
}

// dryRun returns the diff, writes nothing (bytes and mtime), and the read
// stamp stays good for the real edit.
func TestEditDryRunWritesNothing(t *testing.T) {
	t.Parallel()
	c, ws, ctx := start(t, map[string]string{"f.txt": "alpha\nbeta\n"})
	p := filepath.Join(ws, "f.txt")
	past := time.Now().Add(-time.Hour).Truncate(time.Second)
	os.Chtimes(p, past, past)
	c.CallTool(ctx, "read", map[string]any{"path": "f.txt"})
	args := editCall("f.txt", "beta", "gamma")
	args["dryRun"] = true
	r := c.CallTool(ctx, "edit", args)
	if r.IsError || !strings.Contains(r.Text(), "-beta") || !strings.Contains(r.Text(), "+gamma") {
		t.Fatalf("dry run: %s", r.Text())
	}
	if d, _ := r.Details["unifiedDiff"].(string); !strings.Contains(d, "+gamma") {
		t.Errorf("dry run details lack the diff: %v", r.Details)
	}
	fi, _ := os.Stat(p)
	if got := readFile(t, p); got != "alpha\nbeta\n" || !fi.ModTime().Equal(past) {
		t.Fatalf("dry run wrote: %q mtime %v", got, fi.ModTime())
	}
	if r := c.CallTool(ctx, "edit", editCall("f.txt", "beta", "gamma")); r.IsError {
		t.Fatalf("edit after dry run: %s", r.Text())
	}
}

// Lenient input: a legacy single edit (also in other agents' spelling) and
// edits as a JSON string are accepted.
func TestEditLenientInput(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		args map[string]any
	}{
		{"legacy {path, oldText, newText}", map[string]any{"path": "f.txt", "oldText": "one", "newText": "ONE"}},
		{"legacy old_string/new_string with file_path", map[string]any{"file_path": "f.txt", "old_string": "one", "new_string": "ONE"}},
		{"edits as a JSON string", map[string]any{"path": "f.txt", "edits": `[{"oldText": "one", "newText": "ONE"}]`}},
		{"edits as a single object", map[string]any{"path": "f.txt", "edits": map[string]any{"oldText": "one", "newText": "ONE"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, ws, ctx := start(t, map[string]string{"f.txt": "one two\n"})
			c.CallTool(ctx, "read", map[string]any{"path": "f.txt"})
			r := c.CallTool(ctx, "edit", tc.args)
			if r.IsError {
				t.Fatalf("refused: %s", r.Text())
			}
			if got := readFile(t, filepath.Join(ws, "f.txt")); got != "ONE two\n" {
				t.Fatalf("file = %q", got)
			}
			if r.Details["normalized"] == nil {
				t.Errorf("repair not reported in details.normalized: %v", r.Details)
			}
		})
	}
}

// The lines named in the result are where the changes now are: after an
// edit that turned line 2 into three lines, the change at old line 40 is at
// line 42 of the file the model will read next.
func TestEditResultNamesNewFileLines(t *testing.T) {
	t.Parallel()
	c, _, ctx := start(t, map[string]string{"a.txt": auditLines(50)})
	c.CallTool(ctx, "read", map[string]any{"path": "a.txt"})
	r := c.CallTool(ctx, "edit", editCall("a.txt", "line 2\n", "two\ntwo-b\ntwo-c\n", "line 40\n", "forty\n"))
	if got, want := r.Text(), "Edited a.txt: 2 replacements, lines 2-4 and 42."; got != want {
		t.Errorf("result = %q, want %q", got, want)
	}
}

// Where fuzzy matching was used, the snippet shows the changed lines, also
// when the fuzzy edit is not the first one in the file.
func TestEditFuzzySnippetShowsTheFuzzyChange(t *testing.T) {
	t.Parallel()
	file := "foo\n" + strings.Repeat("y\n", 31) + "say(“q”)\n"
	c, _, ctx := start(t, map[string]string{"f.txt": file})
	c.CallTool(ctx, "read", map[string]any{"path": "f.txt"})
	r := c.CallTool(ctx, "edit", editCall("f.txt", "foo", "FOO", `say("q")`, "say(Q)"))
	if r.IsError {
		t.Fatal(r.Text())
	}
	if !regexp.MustCompile(`33→say\(Q\)`).MatchString(r.Text()) {
		t.Errorf("the fuzzily changed line 33 is not in the snippet:\n%s", r.Text())
	}
}

// Paths for edit and write (shared rules): escapes, NUL, device paths and
// symlinks leading outside are refused; a leading @ and absolute paths
// inside the workspace are accepted.
func TestEditWritePaths(t *testing.T) {
	t.Parallel()
	outside := t.TempDir()
	writeFiles(t, outside, map[string]string{"secret.txt": "outside\n"})
	c, ws, ctx := start(t, map[string]string{"in.txt": "inside\n"})
	if err := os.Symlink(filepath.Join(outside, "secret.txt"), filepath.Join(ws, "link.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(ws, "linkdir")); err != nil {
		t.Fatal(err)
	}
	refused := []struct{ tool, path string }{
		{"write", "../escape.txt"},
		{"write", "sub/../../escape.txt"},
		{"write", "a\x00b.txt"},
		{"write", "/dev/null"},
		{"write", "link.txt"},
		{"write", "linkdir/new.txt"},
		{"write", filepath.Join(outside, "abs.txt")},
		{"edit", "link.txt"},
	}
	for _, tc := range refused {
		var r harness.Result
		if tc.tool == "write" {
			r = c.CallTool(ctx, "write", map[string]any{"path": tc.path, "content": "pwned\n"})
		} else {
			r = c.CallTool(ctx, "edit", editCall(tc.path, "outside", "pwned"))
		}
		if !r.IsError {
			t.Errorf("%s %q accepted: %s", tc.tool, tc.path, r.Text())
		}
	}
	if got := readFile(t, filepath.Join(outside, "secret.txt")); got != "outside\n" {
		t.Fatalf("file outside changed: %q", got)
	}
	if es, _ := os.ReadDir(outside); len(es) != 1 {
		t.Fatalf("files created outside: %v", es)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(ws), "escape.txt")); err == nil {
		t.Fatal("escape.txt created outside")
	}
	if r := c.CallTool(ctx, "write", map[string]any{"path": "@at.txt", "content": "x\n"}); r.IsError || readFile(t, filepath.Join(ws, "at.txt")) != "x\n" {
		t.Errorf("leading @ not normalized: %s", r.Text())
	}
	c.CallTool(ctx, "read", map[string]any{"path": filepath.Join(ws, "in.txt")})
	if r := c.CallTool(ctx, "edit", editCall(filepath.Join(ws, "in.txt"), "inside", "edited")); r.IsError {
		t.Errorf("absolute path inside the workspace refused: %s", r.Text())
	}
}

// The initialize result's instructions cover the points TOOLS.md lists.
func TestInstructions(t *testing.T) {
	t.Parallel()
	c := harness.Start(t, harness.Options{Root: t.TempDir()})
	res := c.Initialize(t.Context(), bypass())
	ins := strings.ToLower(fmt.Sprint(res["instructions"]))
	for _, w := range []string{"read a file before editing", "search", "guess", "cat", "grep", "find", "oldtext", "unique"} {
		if !strings.Contains(ins, w) {
			t.Errorf("instructions lack %q:\n%s", w, res["instructions"])
		}
	}
}

// --- write ------------------------------------------------------------------

// write: a new file needs no read and gets kind "create"; replacing needs a
// fresh stamp (an external change after the read is refused); details carry
// a diff against the old content; the mode is kept.
func TestWriteContract(t *testing.T) {
	t.Parallel()
	c, ws, ctx := start(t, map[string]string{"old.txt": "one\ntwo\n"})
	p := filepath.Join(ws, "old.txt")
	os.Chmod(p, 0o751)

	r, _ := auditCall(t, c, ctx, "write", "w-create", map[string]any{"path": "a/b/c/new.txt", "content": "hi\n"})
	if r.IsError {
		t.Fatal(r.Text())
	}
	if d, _, ok := auditFindDetails(c, "w-create"); !ok || d.Details["kind"] != "create" || !strings.Contains(fmt.Sprint(d.Details["unifiedDiff"]), "+hi") {
		t.Errorf("create details = %+v", d)
	}

	c.CallTool(ctx, "read", map[string]any{"path": "old.txt"})
	time.Sleep(10 * time.Millisecond)
	os.WriteFile(p, []byte("one\nTWO\n"), 0o751) // same size, changed after the read
	r = c.CallTool(ctx, "write", map[string]any{"path": "old.txt", "content": "mine\n"})
	if !r.IsError || !strings.Contains(r.Text(), "read") {
		t.Fatalf("write over a file changed since the read: %s", r.Text())
	}
	if got := readFile(t, p); got != "one\nTWO\n" {
		t.Fatalf("external change lost: %q", got)
	}

	c.CallTool(ctx, "read", map[string]any{"path": "old.txt"})
	var before, after syscall.Stat_t
	syscall.Stat(p, &before)
	r, _ = auditCall(t, c, ctx, "write", "w-replace", map[string]any{"path": "old.txt", "content": "one\nthree\n"})
	if r.IsError {
		t.Fatal(r.Text())
	}
	d, _, ok := auditFindDetails(c, "w-replace")
	diff := fmt.Sprint(d.Details["unifiedDiff"])
	if !ok || d.Details["kind"] != "write" || !strings.Contains(diff, "-TWO") || !strings.Contains(diff, "+three") {
		t.Errorf("replace details = %+v", d)
	}
	if syscall.Stat(p, &after); after.Ino == before.Ino {
		t.Errorf("write replaced the file in place (same inode), not by rename")
	}
	if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o751 {
		t.Errorf("mode after write = %v, want 0751", fi.Mode().Perm())
	}
	// Identical content: "no change" (docs/tools.md).
	if r := c.CallTool(ctx, "write", map[string]any{"path": "old.txt", "content": "one\nthree\n"}); !r.IsError || !strings.Contains(r.Text(), "no change") {
		t.Errorf("identical write: %s", r.Text())
	}
}

// --- bash -------------------------------------------------------------------

func TestBashEnvironmentAndDescription(t *testing.T) {
	t.Parallel()
	c, ws, ctx := start(t, map[string]string{"sub/dir/x.txt": "x\n"})
	real, _ := filepath.EvalSymlinks(ws)
	cases := []struct {
		name    string
		args    map[string]any
		isError bool
		want    string
	}{
		{"cwd defaults to the workspace root", map[string]any{"command": "pwd -P"}, false, real},
		{"cwd inside the workspace", map[string]any{"command": "pwd -P", "cwd": "sub/dir"}, false, filepath.Join(real, "sub/dir")},
		{"cwd absolute inside the workspace", map[string]any{"command": "pwd -P", "cwd": filepath.Join(ws, "sub")}, false, filepath.Join(real, "sub")},
		{"cwd that is a file is refused", map[string]any{"command": "pwd", "cwd": "sub/dir/x.txt"}, true, "not a directory"},
		{"stdin is /dev/null", map[string]any{"command": "readlink /proc/self/fd/0"}, false, "/dev/null"},
		{"pagers and prompts disabled", map[string]any{"command": `echo "[$PAGER][$GIT_PAGER][$GIT_TERMINAL_PROMPT]"`}, false, "[cat][cat][0]"},
		{"own process group", map[string]any{"command": "ps -o pgid= -p $$; ps -o pid= -p $$"}, false, ""},
		{"non-zero exit is an error with the code", map[string]any{"command": "echo out; exit 7"}, true, "7"},
		{"negative timeout is refused", map[string]any{"command": "true", "timeout": -5}, true, "timeout"},
		{"numeric string timeout accepted", map[string]any{"command": "echo ok", "timeout": "5"}, false, "ok"},
		{"timeout 600 (the maximum) accepted", map[string]any{"command": "echo ok", "timeout": 600}, false, "ok"},
		{"timeout 601 refused, naming the maximum", map[string]any{"command": "echo ok", "timeout": 601}, true, "600"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := c.CallTool(ctx, "bash", tc.args)
			if r.IsError != tc.isError {
				t.Fatalf("isError = %v: %s", r.IsError, r.Text())
			}
			if !strings.Contains(r.Text(), tc.want) {
				t.Errorf("result lacks %q:\n%s", tc.want, r.Text())
			}
			if tc.name == "own process group" {
				f := strings.Fields(r.Text())
				if len(f) < 2 || f[0] != f[1] {
					t.Errorf("the shell is not its process group's leader: %q", r.Text())
				}
			}
			if tc.name == "non-zero exit is an error with the code" && r.Details["exitCode"] != 7.0 {
				t.Errorf("details.exitCode = %v", r.Details["exitCode"])
			}
		})
	}

	var list struct {
		Tools []map[string]any `json:"tools"`
	}
	if err := c.Call(ctx, "tools/list", nil, &list); err != nil {
		t.Fatal(err)
	}
	for _, tool := range list.Tools {
		if tool["name"] != "bash" {
			continue
		}
		desc := tool["description"].(string)
		for _, w := range []string{"default 120", "maximum 600", "2000 lines", "51200 bytes", "/dev/null", "PAGER=cat", "GIT_TERMINAL_PROMPT=0"} {
			if !strings.Contains(desc, w) {
				t.Errorf("bash description lacks %q", w)
			}
		}
		timeout := tool["inputSchema"].(map[string]any)["properties"].(map[string]any)["timeout"].(map[string]any)
		if timeout["maximum"] != 600.0 {
			t.Errorf("schema timeout.maximum = %v", timeout["maximum"])
		}
		ann := tool["annotations"].(map[string]any)
		if ann["readOnlyHint"] != false {
			t.Errorf("bash readOnlyHint = %v", ann["readOnlyHint"])
		}
	}
}

// Timeout: a grandchild that ignores SIGTERM is SIGKILLed after the grace.
func TestBashTimeoutKillsTermIgnoringGrandchild(t *testing.T) {
	t.Parallel()
	c, _, ctx := start(t, nil)
	arg := fmt.Sprintf("1000.%d7", time.Now().UnixNano()%100000)
	t.Cleanup(func() { auditKillArg(arg) })
	t0 := time.Now()
	r := c.CallTool(ctx, "bash", map[string]any{"command": fmt.Sprintf(`sh -c 'trap "" TERM; sleep %s' & wait`, arg), "timeout": 1})
	d := time.Since(t0)
	if !r.IsError || !strings.Contains(r.Text(), "Timed out") || !strings.Contains(r.Text(), "SIGKILL") {
		t.Fatalf("result: %s", r.Text())
	}
	if d > 5*time.Second {
		t.Errorf("took %v; timeout 1 s + 2 s grace", d)
	}
	waitGone(t, arg, 3*time.Second)
}

// A grandchild that moved to its own session still counts as a grandchild
// of the command (TOOLS.md: "no grandchild survives").
func TestBashTimeoutKillsSetsidGrandchild(t *testing.T) {
	t.Parallel()
	c, _, ctx := start(t, nil)
	arg := fmt.Sprintf("1000.%d8", time.Now().UnixNano()%100000)
	t.Cleanup(func() { auditKillArg(arg) })
	r := c.CallTool(ctx, "bash", map[string]any{"command": fmt.Sprintf(`setsid sleep %s >/dev/null 2>&1 < /dev/null & sleep 30`, arg), "timeout": 1})
	if !r.IsError || !strings.Contains(r.Text(), "Timed out") {
		t.Fatalf("result: %s", r.Text())
	}
	waitGone(t, arg, 3*time.Second)
}

// auditKillArg kills leftover processes this test started (matched by a
// unique argument), so a failing test leaves nothing behind.
func auditKillArg(arg string) {
	for _, pid := range processesWithArg(arg) {
		syscall.Kill(pid, syscall.SIGKILL)
	}
}

// A child backgrounded with plain `&` holding stdout/stderr does not hang.
func TestBashBackgroundChildDoesNotHang(t *testing.T) {
	t.Parallel()
	c, _, ctx := start(t, nil)
	arg := fmt.Sprintf("100.%d9", time.Now().UnixNano()%100000)
	t.Cleanup(func() { auditKillArg(arg) })
	t0 := time.Now()
	r := c.CallTool(ctx, "bash", map[string]any{"command": fmt.Sprintf("sleep %s & echo started", arg)})
	if r.IsError || !strings.Contains(r.Text(), "started") {
		t.Fatalf("%s", r.Text())
	}
	if d := time.Since(t0); d > 2*time.Second {
		t.Errorf("took %v with a background child holding the pipes", d)
	}
}

// Progress: the output tail streams as tools/progress with callId and tool,
// at least 50 ms apart per call.
func TestBashProgressThrottled(t *testing.T) {
	t.Parallel()
	c, _, ctx := start(t, nil)
	r, replyAt := auditCall(t, c, ctx, "bash", "prog-1", map[string]any{"command": "for i in $(seq 1 150); do echo line $i; sleep 0.005; done"})
	if r.IsError {
		t.Fatal(r.Text())
	}
	var times []time.Time
	for _, n := range c.Notes("tools/progress") {
		var p map[string]any
		json.Unmarshal(n.Params, &p)
		if p["callId"] != "prog-1" {
			continue
		}
		if p["tool"] != "bash" {
			t.Errorf("progress tool = %v", p["tool"])
		}
		if n.At.After(replyAt) {
			t.Errorf("progress after the reply")
		}
		times = append(times, n.At)
	}
	if len(times) < 3 {
		t.Fatalf("only %d progress notifications for a ~1 s command", len(times))
	}
	minGap := time.Hour
	for i := 1; i < len(times); i++ {
		minGap = min(minGap, times[i].Sub(times[i-1]))
	}
	t.Logf("%d progress notes, smallest gap %v", len(times), minGap)
	// Receipt times jitter; a server that does not throttle sends them ~5 ms apart.
	if minGap < 35*time.Millisecond {
		t.Errorf("progress notifications %v apart, want ≥ 50 ms", minGap)
	}
}

// Output cut by bytes: the tail keeps at most 50 KB, the notice gives the
// spill file's path and the lines shown, and read opens the spill file.
func TestBashByteLimitAndSpillNotice(t *testing.T) {
	t.Parallel()
	c, _, ctx := start(t, nil)
	r := c.CallTool(ctx, "bash", map[string]any{"command": `for i in $(seq 1 1000); do printf 'row %04d %s\n' $i xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx; done`})
	if r.IsError {
		t.Fatal(r.Text())
	}
	txt := r.Text()
	m := regexp.MustCompile(`lines (\d+)-(\d+) of (\d+)`).FindStringSubmatch(txt)
	if m == nil || m[2] != "1000" || m[3] != "1000" {
		t.Fatalf("no line range in the notice:\n%.500s", txt)
	}
	spill, _ := r.Details["spillPath"].(string)
	if spill == "" || !strings.Contains(txt, spill) {
		t.Fatalf("spill path %q not in the notice:\n%.500s", spill, txt)
	}
	tailStart := strings.Index(txt, "row ")
	if tail := txt[tailStart:]; len(tail) > 51200 {
		t.Errorf("tail is %d bytes, want ≤ 51200", len(tail))
	}
	if !strings.Contains(txt, "row 1000 ") || strings.Contains(txt, "row 0001 ") {
		t.Errorf("the tail is not the end of the output")
	}
	rr := c.CallTool(ctx, "read", map[string]any{"path": spill, "offset": 1, "limit": 2})
	if rr.IsError || !strings.Contains(rr.Text(), "row 0001") {
		t.Fatalf("read spill: %s", rr.Text())
	}
}

// Failure-looking lines of the cut part are listed (at most 20, with their
// line numbers) before the tail.
func TestBashFailureLinesFromTheCutPart(t *testing.T) {
	t.Parallel()
	c, _, ctx := start(t, nil)
	t.Run("one buried failure", func(t *testing.T) {
		r := c.CallTool(ctx, "bash", map[string]any{"command": `for i in $(seq 1 3000); do if [ $i = 500 ]; then echo "--- FAIL: TestBuried (0.01s)"; else echo ok $i; fi; done`})
		txt := r.Text()
		i := strings.Index(txt, "FAIL: TestBuried")
		j := strings.Index(txt, "ok 2999")
		if i < 0 || j < 0 || i > j {
			t.Fatalf("buried failure not listed before the tail:\n%.600s", txt)
		}
		if !regexp.MustCompile(`500\D{1,4}--- FAIL: TestBuried`).MatchString(txt) {
			t.Errorf("failure line without its line number 500:\n%.600s", txt)
		}
	})
	t.Run("at most 20", func(t *testing.T) {
		r := c.CallTool(ctx, "bash", map[string]any{"command": `for i in $(seq 1 30); do echo "error: problem $i"; done; seq 1 2500`})
		txt := r.Text()
		n := strings.Count(txt, "error: problem")
		if n != 20 {
			t.Errorf("%d failure lines listed, want 20:\n%.1500s", n, txt)
		}
		if !strings.Contains(txt, "problem 1\n") {
			t.Errorf("the first failure is not listed")
		}
	})
	t.Run("Traceback panic and exit status", func(t *testing.T) {
		r := c.CallTool(ctx, "bash", map[string]any{"command": `echo "Traceback (most recent call last):"; echo "panic: boom"; echo "exit status 2"; seq 1 2500`})
		for _, w := range []string{"Traceback (most", "panic: boom", "exit status 2"} {
			if !strings.Contains(r.Text(), w) {
				t.Errorf("%q not listed", w)
			}
		}
	})
}

// Files a command changes are listed and their stamps marked stale;
// deletion counts as a change.
func TestBashDeletionOfAReadFileIsListed(t *testing.T) {
	t.Parallel()
	c, _, ctx := start(t, map[string]string{"a.txt": "a\n", "b.txt": "b\n"})
	c.CallTool(ctx, "read", map[string]any{"path": "a.txt"})
	c.CallTool(ctx, "read", map[string]any{"path": "b.txt"})
	r := c.CallTool(ctx, "bash", map[string]any{"command": "rm a.txt; echo more >> b.txt"})
	if r.IsError || !strings.Contains(r.Text(), "a.txt") || !strings.Contains(r.Text(), "b.txt") {
		t.Fatalf("changed files not listed: %s", r.Text())
	}
	if cf := fmt.Sprint(r.Details["changedFiles"]); !strings.Contains(cf, "a.txt") || !strings.Contains(cf, "b.txt") {
		t.Errorf("details.changedFiles = %v", r.Details["changedFiles"])
	}
	if e := c.CallTool(ctx, "edit", editCall("b.txt", "b", "c")); !e.IsError {
		t.Fatalf("stale stamp not enforced: %s", e.Text())
	}
}

// Labels from the parsed command, seen through tools/confirm in default
// mode: read-only commands run without asking; others ask with a preview
// saying whether they are read-only and destructive.
func TestBashLabels(t *testing.T) {
	t.Parallel()
	c, s, ws, ctx := startConfirm(t, map[string]string{"a.txt": "a\n"}, "")
	cases := []struct {
		cmd         string
		asks        bool
		destructive bool
	}{
		{"ls -la | grep a; cat a.txt", false, false},
		{"git status && wc -l $(echo a.txt)", false, false},
		{"echo hi > /dev/null", false, false},
		{"touch b", true, false},
		{"ls > out.txt", true, false}, // a new file: nothing overwritten (docs: "`>` onto a file")
		{"ls > a.txt", true, true},
		{"cat a.txt | tee out.txt", true, false},
		{"rm -rf build", true, true},
		{"echo $(rm -f a.txt)", true, true},
		{"git push --force origin main", true, true},
		{"ls && (cd . && rm a.txt)", true, true},
	}
	for _, tc := range cases {
		t.Run(tc.cmd, func(t *testing.T) {
			before := s.count()
			s.answers = []map[string]any{{"decision": "rejectOnce"}}
			r := c.CallTool(ctx, "bash", map[string]any{"command": tc.cmd})
			asked := s.count() > before
			if asked != tc.asks {
				t.Fatalf("asked = %v, want %v (result %s)", asked, tc.asks, r.Text())
			}
			if !asked {
				return
			}
			s.mu.Lock()
			q := s.asked[len(s.asked)-1]
			s.mu.Unlock()
			prev, _ := q["preview"].(map[string]any)
			if prev == nil || prev["kind"] != "command" || prev["readOnly"] != false || prev["destructive"] != tc.destructive {
				t.Errorf("preview = %v, want readOnly false, destructive %v", prev, tc.destructive)
			}
			if !r.IsError || !strings.Contains(r.Text(), "denied by the user") {
				t.Errorf("rejected call: %s", r.Text())
			}
		})
	}
	if _, err := os.Stat(filepath.Join(ws, "a.txt")); err != nil {
		t.Fatalf("a rejected command ran: %v", err)
	}
}

// --- tool_search and extension tools -----------------------------------------

func auditToolDef(name, command string, extra map[string]any) string {
	def := map[string]any{
		"name": name, "description": "Audit tool " + name + ".",
		"inputSchema": map[string]any{"type": "object", "properties": map[string]any{
			"a": map[string]any{"type": "string"}, "b": map[string]any{"type": "string"}}, "required": []any{"a"}},
		"command": command,
	}
	for k, v := range extra {
		def[k] = v
	}
	b, _ := json.Marshal(def)
	return string(b)
}

func auditListNames(t *testing.T, c *harness.Client, ctx context.Context, params map[string]any) map[string]map[string]any {
	t.Helper()
	var list struct {
		Tools []map[string]any `json:"tools"`
	}
	if err := c.Call(ctx, "tools/list", params, &list); err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]any{}
	for _, tool := range list.Tools {
		out[tool["name"].(string)] = tool
	}
	return out
}

// Extension tools: missing optional placeholder substitutes nothing, values
// are one quoted word, bad files are reported and skipped, name rules hold,
// the definition's timeout runs through the bash machinery.
func TestExtensionTools(t *testing.T) {
	t.Parallel()
	files := map[string]string{
		".agentls/tools/echoer.json":   auditToolDef("echoer", `printf '[%s]' {{a}} {{b}}`, map[string]any{"deferred": false}),
		".agentls/tools/slow.json":     auditToolDef("slow", `sleep 30; : {{a}}`, map[string]any{"deferred": false, "timeout": 1}),
		".agentls/tools/broken.json":   `{"name": "broken", "description": `,
		".agentls/tools/badname.json":  auditToolDef("bad name!", "echo x", map[string]any{"deferred": false}),
		".agentls/tools/toolong.json":  auditToolDef(strings.Repeat("x", 65), "echo x", map[string]any{"deferred": false}),
		".agentls/tools/collide.json":  auditToolDef("Read", "echo x", map[string]any{"deferred": false}),
		".agentls/tools/collide2.json": auditToolDef("bash", "echo x", map[string]any{"deferred": false}),
		".agentls/tools/lister.json": `{"name": "lister", "description": "List.", "deferred": false, "command": "printf '<%s>' {{items}}",
			"inputSchema": {"type": "object", "properties": {"items": {"type": "array", "items": {"type": "string"}}}}}`,
		".agentls/tools/deferred.json": auditToolDef("zeta_hidden", "echo hidden {{a}}", map[string]any{"deferred": true}),
	}
	c, _, ctx := start(t, files)
	t.Run("missing optional substitutes nothing", func(t *testing.T) {
		r := c.CallTool(ctx, "echoer", map[string]any{"a": "x y"})
		if r.IsError || strings.TrimSpace(r.Text()) != "[x y]" {
			t.Fatalf("got %q, want [x y]", r.Text())
		}
		r = c.CallTool(ctx, "echoer", map[string]any{"a": "1", "b": "$HOME"})
		if r.IsError || strings.TrimSpace(r.Text()) != "[1][$HOME]" {
			t.Fatalf("got %q, want [1][$HOME]", r.Text())
		}
	})
	t.Run("array argument: one quoted word per element", func(t *testing.T) {
		r := c.CallTool(ctx, "lister", map[string]any{"items": []any{"a b", "$(id)", "c"}})
		if r.IsError || strings.TrimSpace(r.Text()) != "<a b><$(id)><c>" {
			t.Fatalf("got %q", r.Text())
		}
	})
	t.Run("timeout from the definition", func(t *testing.T) {
		t0 := time.Now()
		r := c.CallTool(ctx, "slow", map[string]any{"a": "x"})
		if !r.IsError || !strings.Contains(r.Text(), "Timed out") || time.Since(t0) > 4*time.Second {
			t.Fatalf("after %v: %s", time.Since(t0), r.Text())
		}
	})
	t.Run("bad files reported and skipped", func(t *testing.T) {
		for _, f := range []string{"broken.json", "badname.json", "toolong.json", "collide.json", "collide2.json"} {
			if _, ok := c.WaitNote(2*time.Second, func(n harness.Note) bool {
				return n.Method == "window/logMessage" && strings.Contains(string(n.Params), f)
			}); !ok {
				t.Errorf("%s not reported with window/logMessage", f)
			}
		}
		all := auditListNames(t, c, ctx, map[string]any{"includeDeferred": true})
		for _, n := range []string{"broken", "bad name!", strings.Repeat("x", 65), "Read"} {
			if _, ok := all[n]; ok {
				t.Errorf("invalid tool %q is listed", n)
			}
		}
		if all["bash"]["_meta"].(map[string]any)["source"] == "extension" || !strings.Contains(fmt.Sprint(all["bash"]["description"]), "Run a shell command") {
			t.Errorf("the core bash tool was replaced: %v", all["bash"]["_meta"])
		}
		if _, ok := all["echoer"]; !ok {
			t.Error("a valid tool was not loaded")
		}
	})
	t.Run("includeDeferred lists deferred tools", func(t *testing.T) {
		active := auditListNames(t, c, ctx, nil)
		if _, ok := active["zeta_hidden"]; ok {
			t.Fatal("a deferred tool is active before tool_search")
		}
		if _, ok := active["tool_search"]; !ok {
			t.Error("tool_search is not always active")
		}
		all := auditListNames(t, c, ctx, map[string]any{"includeDeferred": true})
		z, ok := all["zeta_hidden"]
		if !ok || z["_meta"].(map[string]any)["deferred"] != true {
			t.Fatalf("includeDeferred: %v", z)
		}
	})
}

// tool_search finds tools by a parameter name, returns the full schema,
// activates the match and sends tools/listChanged.
func TestToolSearchByParameterName(t *testing.T) {
	t.Parallel()
	def := map[string]any{
		"name": "obscure_task", "description": "Do a thing.",
		"inputSchema": map[string]any{"type": "object", "properties": map[string]any{
			"quuxfrobnicator": map[string]any{"type": "integer", "description": "how many", "minimum": 1}}},
		"command": "echo n={{quuxfrobnicator}}",
	}
	b, _ := json.Marshal(def)
	files := map[string]string{".agentls/tools/obscure.json": string(b),
		".agentls/tools/other.json": auditToolDef("other_task", "echo other {{a}}", nil)}
	c, _, ctx := start(t, files)
	r := c.CallTool(ctx, "tool_search", map[string]any{"query": "quuxfrobnicator"})
	if r.IsError || !strings.Contains(r.Text(), "obscure_task") {
		t.Fatalf("search: %s", r.Text())
	}
	if !strings.Contains(r.Text(), `"minimum"`) || !strings.Contains(r.Text(), "how many") {
		t.Errorf("search result lacks the full schema:\n%s", r.Text())
	}
	if i := strings.Index(r.Text(), "other_task"); i >= 0 && i < strings.Index(r.Text(), "obscure_task") {
		t.Errorf("other_task ranked first")
	}
	if _, ok := c.WaitNote(2*time.Second, func(n harness.Note) bool { return n.Method == "tools/listChanged" }); !ok {
		t.Fatal("no tools/listChanged")
	}
	if _, ok := auditListNames(t, c, ctx, nil)["obscure_task"]; !ok {
		t.Fatal("not activated")
	}
	if r := c.CallTool(ctx, "obscure_task", map[string]any{"quuxfrobnicator": 3}); r.IsError || !strings.Contains(r.Text(), "n=3") {
		t.Fatalf("call: %s", r.Text())
	}
}

// --- protocol -----------------------------------------------------------------

// A generated callId (none sent) is echoed in the reply and stamped on the
// call's notifications.
func TestGeneratedCallIDStampsNotifications(t *testing.T) {
	t.Parallel()
	c, _, ctx := start(t, map[string]string{"a.txt": "x\n"})
	c.CallTool(ctx, "read", map[string]any{"path": "a.txt"})
	r, _ := auditCall(t, c, ctx, "edit", "", editCall("a.txt", "x", "y"))
	if r.IsError || r.CallID == "" {
		t.Fatalf("callId %q: %s", r.CallID, r.Text())
	}
	if _, _, ok := auditFindDetails(c, r.CallID); !ok {
		t.Errorf("no tools/details stamped with the generated callId %q", r.CallID)
	}
	r, _ = auditCall(t, c, ctx, "bash", "", map[string]any{"command": "echo hi; sleep 0.1"})
	if _, ok := c.WaitNote(time.Second, func(n harness.Note) bool {
		return n.Method == "tools/progress" && strings.Contains(string(n.Params), `"callId":"`+r.CallID+`"`)
	}); !ok {
		t.Errorf("no tools/progress stamped with the generated callId %q", r.CallID)
	}
}

// callBatch: concurrency-safe calls run in parallel; the others one at a
// time in call order; results come back in call order.
func TestCallBatchConcurrencyAndOrder(t *testing.T) {
	t.Parallel()
	c, ws, ctx := start(t, nil)
	var out struct {
		Results []harness.Result `json:"results"`
	}
	var calls []any
	for i := range 4 {
		calls = append(calls, map[string]any{"name": "test_block", "arguments": map[string]any{"seconds": 0.4}, "callId": fmt.Sprint("p", i)})
	}
	t0 := time.Now()
	if err := c.Call(ctx, "tools/callBatch", map[string]any{"calls": calls}, &out); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(t0); d > 1200*time.Millisecond {
		t.Errorf("4 concurrency-safe 0.4 s calls took %v (not parallel)", d)
	}
	for i, r := range out.Results {
		if r.CallID != fmt.Sprint("p", i) {
			t.Errorf("result %d has callId %q", i, r.CallID)
		}
	}

	calls = nil
	for i := range 3 {
		// The first sleeps longest: run in parallel, the log would be 3 2 1.
		cmd := fmt.Sprintf("sleep 0.%d; echo %d >> log.txt", 3-i, i+1)
		calls = append(calls, map[string]any{"name": "bash", "arguments": map[string]any{"command": cmd}})
	}
	if err := c.Call(ctx, "tools/callBatch", map[string]any{"calls": calls}, &out); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, filepath.Join(ws, "log.txt")); got != "1\n2\n3\n" {
		t.Errorf("non-concurrency-safe calls ran out of order: %q", got)
	}
}

// $/cancelRequest on a tools/callBatch replies -32800.
func TestCancelBatch(t *testing.T) {
	t.Parallel()
	c, _, ctx := start(t, nil)
	errCh := make(chan error, 1)
	go func() {
		var out any
		// A fresh client's ids are sequential: initialize is 1, this is 2.
		_, err := c.Conn.Call(ctx, "tools/callBatch", map[string]any{"calls": []any{
			map[string]any{"name": "test_block", "arguments": map[string]any{"seconds": 20}},
		}}, &out)
		errCh <- err
	}()
	if _, ok := c.WaitNote(5*time.Second, func(n harness.Note) bool { return n.Method == "tools/progress" }); !ok {
		t.Fatal("the batch never started")
	}
	c.Conn.Notify(ctx, "$/cancelRequest", map[string]any{"id": 2})
	select {
	case err := <-errCh:
		var je *jsonrpc2.Error
		if !errors.As(err, &je) || je.Code != -32800 {
			t.Fatalf("err = %v, want -32800", err)
		}
	case <-time.After(3 * time.Second):
		t.Fatal("cancelled batch did not reply")
	}
}

// workspace/externalChange for a read file deleted outside agentls.
func TestExternalDeletionIsAnnounced(t *testing.T) {
	t.Parallel()
	c, ws, ctx := start(t, map[string]string{"gone.txt": "x\n"})
	c.CallTool(ctx, "read", map[string]any{"path": "gone.txt"})
	os.Remove(filepath.Join(ws, "gone.txt"))
	n, ok := c.WaitNote(2*time.Second, func(n harness.Note) bool {
		return n.Method == "workspace/externalChange" && strings.Contains(string(n.Params), "gone.txt")
	})
	if !ok {
		t.Fatal("no workspace/externalChange for a deleted file")
	}
	var p map[string]any
	json.Unmarshal(n.Params, &p)
	if p["kind"] != "deleted" || p["readStale"] != true || !strings.HasPrefix(fmt.Sprint(p["uri"]), "file://") {
		t.Errorf("notification = %s", n.Params)
	}
}

// auditLines is a file of n lines "line 1" … "line n".
func auditLines(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	return b.String()
}
