package e2e

// Text fidelity: what the bytes of a file become through edit and write,
// and which positions agentls sends to an editor. Written from docs/tools.md,
// docs/protocol.md, docs/protocol.md and docs/tools.md only. What read and grep
// show of encodings is in the scripts under cmd/agentls/testdata/script.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/agentls/agentls/test/harness"
)

func encodingsMustOK(t *testing.T, r harness.Result, what string) {
	t.Helper()
	if r.IsError {
		t.Fatalf("%s: unexpected isError: %s", what, r.Text())
	}
}

// encodingsNumbered renders lines as read's `%6d→text` body.
func encodingsNumbered(from int, lines ...string) string {
	var b strings.Builder
	for i, l := range lines {
		fmt.Fprintf(&b, "%6d→%s\n", from+i, l)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// encodingsEdit is an LSP TextEdit as agentls sends it.
type encodingsEdit struct {
	Range struct {
		Start struct{ Line, Character int } `json:"start"`
		End   struct{ Line, Character int } `json:"end"`
	} `json:"range"`
	NewText string `json:"newText"`
}

func encodingsEdits(t *testing.T, v any) []encodingsEdit {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out []encodingsEdit
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("edits %s: %v", raw, err)
	}
	return out
}

// encodingsOffset turns an LSP position into a byte offset of text. Lines end at
// \r\n, \n or \r (LSP 3.17); character counts units of enc ("utf-16",
// "utf-8", "utf-32"). A character past the line's end or inside a
// multi-unit character is an error: a server must not send one.
func encodingsOffset(text string, line, char int, enc string) (int, error) {
	off := 0
	for l := 0; l < line; l++ {
		i := strings.IndexAny(text[off:], "\r\n")
		if i < 0 {
			return 0, fmt.Errorf("line %d past the end (%d lines)", line, l+1)
		}
		off += i
		if strings.HasPrefix(text[off:], "\r\n") {
			off += 2
		} else {
			off++
		}
	}
	end := len(text)
	if i := strings.IndexAny(text[off:], "\r\n"); i >= 0 {
		end = off + i
	}
	units := 0
	for units < char {
		if off >= end {
			return 0, fmt.Errorf("character %d past the end of line %d (%d units)", char, line, units)
		}
		r, size := utf8.DecodeRuneInString(text[off:])
		switch enc {
		case "utf-8":
			units += size
		case "utf-32":
			units++
		default:
			units += utf16.RuneLen(r)
		}
		off += size
	}
	if units != char {
		return 0, fmt.Errorf("character %d splits a character on line %d", char, line)
	}
	return off, nil
}

// encodingsApply applies TextEdits (ranges in old) in encoding enc.
func encodingsApply(old string, edits []encodingsEdit, enc string) (string, error) {
	type span struct {
		s, e int
		text string
	}
	var spans []span
	for _, e := range edits {
		s, err := encodingsOffset(old, e.Range.Start.Line, e.Range.Start.Character, enc)
		if err != nil {
			return "", fmt.Errorf("start: %w", err)
		}
		en, err := encodingsOffset(old, e.Range.End.Line, e.Range.End.Character, enc)
		if err != nil {
			return "", fmt.Errorf("end: %w", err)
		}
		if en < s {
			return "", fmt.Errorf("range end before start: %+v", e.Range)
		}
		spans = append(spans, span{s, en, e.NewText})
	}
	sort.SliceStable(spans, func(i, j int) bool { return spans[i].s > spans[j].s })
	out := old
	for i, sp := range spans {
		if i > 0 && sp.e > spans[i-1].s {
			return "", fmt.Errorf("overlapping edits")
		}
		out = out[:sp.s] + sp.text + out[sp.e:]
	}
	return out, nil
}

const encodingsBOM = "\ufeff"

// encodingsCheckEdits applies details.edits to old (BOM not counted, as
// docs/tools.md says) and compares with want.
func encodingsCheckEdits(t *testing.T, details map[string]any, old, want, enc string) {
	t.Helper()
	edits := encodingsEdits(t, details["edits"])
	if len(edits) == 0 {
		t.Fatalf("details.edits empty: %v", details)
	}
	got, err := encodingsApply(strings.TrimPrefix(old, encodingsBOM), edits, enc)
	if err != nil {
		t.Fatalf("applying details.edits (%s) %+v to %q: %v", enc, edits, old, err)
	}
	if got != strings.TrimPrefix(want, encodingsBOM) {
		t.Errorf("details.edits (%s) applied to the old text give\n%q\nwant (new file without BOM)\n%q", enc, got, strings.TrimPrefix(want, encodingsBOM))
	}
}

// encodingsCheckDiff applies details.unifiedDiff to old (absent = new file) at
// rel with `git apply` and with `patch -p1`, and compares with want.
func encodingsCheckDiff(t *testing.T, diff, rel string, old *string, want string) {
	t.Helper()
	if diff == "" {
		t.Fatal("details.unifiedDiff empty")
	}
	for _, tool := range []string{"git", "patch"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Logf("%s not installed: not checked", tool)
			continue
		}
		dir := t.TempDir()
		if old != nil {
			writeFile(t, filepath.Join(dir, rel), *old)
		}
		patchFile := filepath.Join(t.TempDir(), "d.patch")
		writeFile(t, patchFile, diff)
		var cmd *exec.Cmd
		if tool == "git" {
			cmd = exec.Command("git", "apply", "--whitespace=nowarn", "--unsafe-paths", patchFile)
			cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CEILING_DIRECTORIES="+filepath.Dir(dir))
		} else {
			cmd = exec.Command("patch", "-p1", "--batch", "--no-backup-if-mismatch", "-i", patchFile)
		}
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("%s does not apply the unifiedDiff: %v\n%s\ndiff:\n%q", tool, err, out, diff)
			continue
		}
		got, err := os.ReadFile(filepath.Join(dir, rel))
		if err != nil {
			t.Errorf("%s: %v", tool, err)
			continue
		}
		if string(got) != want {
			t.Errorf("%s applied the unifiedDiff giving\n%q\nwant\n%q\ndiff:\n%q", tool, got, want, diff)
		}
	}
	wantMarker := !strings.HasSuffix(want, "\n") && want != "" || old != nil && *old != "" && !strings.HasSuffix(*old, "\n")
	if has := strings.Contains(diff, "\n\\ No newline at end of file\n"); has != wantMarker {
		t.Errorf("unifiedDiff has the \"\\ No newline at end of file\" marker: %v, want %v:\n%q", has, wantMarker, diff)
	}
}

// Every edit must keep every untouched byte, the BOM, the line-ending style,
// the final newline (or its absence) and the mode; its details must describe
// the change exactly (TextEdits in UTF-16 on the BOM-less old text, a diff
// that git apply and patch -p1 apply).
func TestTextEditPreservesBytes(t *testing.T) {
	cases := []struct {
		name          string
		old           string
		mode          os.FileMode
		oldText, repl string
		want          string
		replaceAll    bool
	}{
		{
			name: "CRLF+BOM+no final newline, LF oldText/newText", mode: 0o751,
			old:     encodingsBOM + "line1\r\n😀 emoji 中文 x  \r\nline3\r\nlast",
			oldText: "emoji 中文 x  \nline3", repl: "EMOJI 中文 y\nL3\nadded",
			want: encodingsBOM + "line1\r\n😀 EMOJI 中文 y\r\nL3\r\nadded\r\nlast",
		},
		{
			name: "CRLF with final newline, last line edited", mode: 0o600,
			old:     "a\r\nb\r\nlast line\r\n",
			oldText: "last line", repl: "final\nline",
			want: "a\r\nb\r\nfinal\r\nline\r\n",
		},
		{
			name: "LF no final newline, last line edited", mode: 0o644,
			old:     "keep  \n\tkeep\ttabs\nend",
			oldText: "end", repl: "END",
			want: "keep  \n\tkeep\ttabs\nEND",
		},
		{
			name: "LF file stays LF, lines inserted", mode: 0o644,
			old:     "one\ntwo\nthree\n",
			oldText: "two\n", repl: "2a\n2b\n",
			want: "one\n2a\n2b\nthree\n",
		},
		{
			name: "surrogate pairs before and after the match", mode: 0o644,
			old:     "😀😀 中文 y 👍🏽\r\nz\r\n",
			oldText: "y", repl: "🎉",
			want: "😀😀 中文 🎉 👍🏽\r\nz\r\n",
		},
		{
			name: "replaceAll across CJK lines", mode: 0o644, replaceAll: true,
			old:     "中x中\r\n文x\r\nx😀\r\n",
			oldText: "x", repl: "ŷ",
			want: "中ŷ中\r\n文ŷ\r\nŷ😀\r\n",
		},
		{
			name: "combining marks in oldText and newText", mode: 0o644,
			old:     "name = \"cafe\u0301\"\nother = \"e\u0301\"\n",
			oldText: "\"cafe\u0301\"", repl: "\"ne\u0301e\u0301\"",
			want: "name = \"ne\u0301e\u0301\"\nother = \"e\u0301\"\n",
		},
		{
			name: "LF file: newText's CRLF becomes LF", mode: 0o644,
			old:     "a\nb\nc\n",
			oldText: "b", repl: "B\r\nB2",
			want: "a\nB\nB2\nc\n",
		},
		{
			name: "lone CR line breaks kept", mode: 0o644,
			old:     "one\rtwo\rthree\rfour",
			oldText: "three", repl: "THREE",
			want: "one\rtwo\rTHREE\rfour",
		},
		{
			name: "indentation level re-indents with tabs in a CRLF file", mode: 0o644,
			old:     "x\r\n\t\tif x {\r\n\t\t\ty()\r\n\t\t}\r\n",
			oldText: "if x {\n\ty()\n}", repl: "if x {\n\tz()\n}",
			want: "x\r\n\t\tif x {\r\n\t\t\tz()\r\n\t\t}\r\n",
		},
		{
			name: "unicode level after an emoji maps back to the right bytes", mode: 0o644,
			old:     "😀 say \u201cquoted\u201d \u2014 ok\r\nnext \u201cquoted\u201d line\r\n",
			oldText: "\"quoted\" - ok", repl: "\"Q\" - ok",
			want: "😀 say \"Q\" - ok\r\nnext \u201cquoted\u201d line\r\n",
		},
		{
			name: "trailing whitespace level keeps other lines' trailing spaces", mode: 0o644,
			old:     "keep \t\r\nfoo  \r\nbar\t\r\nkeep2  \r\n",
			oldText: "foo\nbar", repl: "FOO\nBAR",
			want: "keep \t\r\nFOO\r\nBAR\t\r\nkeep2  \r\n", // the \t after "bar" is outside the matched text
		},
		{
			name: "CRLF oldText and newText in a CRLF file: no doubled CR", mode: 0o644,
			old:     "p\r\nq\r\nr\r\n",
			oldText: "p\r\nq", repl: "P\r\nQ\r\nQ2",
			want: "P\r\nQ\r\nQ2\r\nr\r\n",
		},
		{
			name: "mixed endings: untouched bytes and the edited line's ending kept", mode: 0o644,
			old:     "a\r\nb\nc\r\n",
			oldText: "b", repl: "B",
			want: "a\r\nB\nc\r\n",
		},
		{
			name: "BOM file, first line edited at its start", mode: 0o644,
			old:     encodingsBOM + "first 😀\r\nsecond",
			oldText: "first", repl: "1st",
			want: encodingsBOM + "1st 😀\r\nsecond",
		},
		{
			name: "BOM only, LF, delete a line", mode: 0o640,
			old:     encodingsBOM + "a\nb\nc\n",
			oldText: "b\n", repl: "",
			want: encodingsBOM + "a\nc\n",
		},
	}
	files := map[string]string{}
	for i, tc := range cases {
		files[fmt.Sprintf("d/e%02d.txt", i)] = tc.old
	}
	c, ws, ctx := start(t, files)
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rel := fmt.Sprintf("d/e%02d.txt", i)
			p := filepath.Join(ws, rel)
			if err := os.Chmod(p, tc.mode); err != nil {
				t.Fatal(err)
			}
			encodingsMustOK(t, c.CallTool(ctx, "read", map[string]any{"path": rel}), "read")
			r := c.CallTool(ctx, "edit", map[string]any{"path": rel, "edits": []any{map[string]any{"oldText": tc.oldText, "newText": tc.repl, "replaceAll": tc.replaceAll}}})
			encodingsMustOK(t, r, "edit")
			got := readFile(t, p)
			if got != tc.want {
				t.Errorf("file bytes\n%q\nwant\n%q", got, tc.want)
			}
			st, _ := os.Stat(p)
			if st.Mode().Perm() != tc.mode {
				t.Errorf("mode %v, want %v", st.Mode().Perm(), tc.mode)
			}
			encodingsCheckEdits(t, r.Details, tc.old, got, "utf-16")
			diff, _ := r.Details["unifiedDiff"].(string)
			encodingsCheckDiff(t, diff, rel, &tc.old, got)
			if r.Details["kind"] != "edit" {
				t.Errorf("details.kind %v", r.Details["kind"])
			}
			oh, _ := r.Details["oldHash"].(string)
			nh, _ := r.Details["newHash"].(string)
			if !strings.HasPrefix(oh, "sha256:") || !strings.HasPrefix(nh, "sha256:") || oh == nh {
				t.Errorf("hashes %q %q", oh, nh)
			}
		})
	}
}

// The exact UTF-16 range of a one-character edit after two emoji and two CJK
// characters on the second line of a BOM+CRLF file.
func TestTextEditRangeUTF16Exact(t *testing.T) {
	old := encodingsBOM + "first\r\n😀😀 中文 y z\r\n"
	c, _, ctx := start(t, map[string]string{"a.txt": old})
	encodingsMustOK(t, c.CallTool(ctx, "read", map[string]any{"path": "a.txt"}), "read")
	r := c.CallTool(ctx, "edit", map[string]any{"path": "a.txt", "edits": []any{map[string]any{"oldText": "y", "newText": "Y"}}})
	encodingsMustOK(t, r, "edit")
	edits := encodingsEdits(t, r.Details["edits"])
	// 😀 = 2 units each, space, 中, 文, space: y starts at unit 8 of line 1.
	if len(edits) != 1 || edits[0].Range.Start.Line != 1 || edits[0].Range.Start.Character != 8 || edits[0].Range.End.Line != 1 || edits[0].Range.End.Character != 9 || edits[0].NewText != "Y" {
		t.Errorf("edits %+v, want one edit 1:8-1:9 \"Y\" (UTF-16, BOM not counted)", edits)
	}
	if fl, _ := r.Details["firstChangedLine"].(float64); fl != 2 {
		t.Errorf("firstChangedLine %v, want 2", r.Details["firstChangedLine"])
	}
}

// LSP: a client lists general.positionEncodings; the server answers with
// capabilities.positionEncoding, and without one the positions are UTF-16.
// Whatever agentls announces, its TextEdits (and the didChange positions it
// reads) must use it.
func TestTextEditPositionEncodingNegotiated(t *testing.T) {
	old := "😀 中文 é x\r\nnext 😀 y\r\n"
	for _, offered := range [][]string{{"utf-8"}, {"utf-32"}, {"utf-8", "utf-16"}, {"utf-16"}} {
		t.Run(strings.Join(offered, ","), func(t *testing.T) {
			ws := newWorkspace(t, map[string]string{"a.txt": old})
			c := harness.Start(t, harness.Options{Root: ws})
			ctx := testCtx(t, sessionTimeout)
			res := c.Initialize(ctx, map[string]any{"initializationOptions": bypassOptions(), "capabilities": map[string]any{"general": map[string]any{"positionEncodings": offered}}})
			enc := "utf-16"
			if caps, ok := res["capabilities"].(map[string]any); ok {
				if pe, ok := caps["positionEncoding"].(string); ok {
					enc = pe
					found := false
					for _, o := range offered {
						found = found || o == pe
					}
					if !found && pe != "utf-16" {
						t.Errorf("positionEncoding %q was not offered (%v)", pe, offered)
					}
				}
			}
			t.Logf("offered %v, positions in %s", offered, enc)
			encodingsMustOK(t, c.CallTool(ctx, "read", map[string]any{"path": "a.txt"}), "read")
			r := c.CallTool(ctx, "edit", map[string]any{"path": "a.txt", "edits": []any{
				map[string]any{"oldText": "é x", "newText": "é X😀"},
				map[string]any{"oldText": "y", "newText": "Y"},
			}})
			encodingsMustOK(t, r, "edit")
			encodingsCheckEdits(t, r.Details, old, readFile(t, filepath.Join(ws, "a.txt")), enc)
		})
	}
}

// Unicode folding in the ladder: an NFC oldText against an NFD file matches
// (NFKC level), and only the matched bytes change.
func TestTextEditNFCAgainstNFD(t *testing.T) {
	old := "x = \"cafe\u0301\" // 😀\r\ny = 1\r\n"
	c, ws, ctx := start(t, map[string]string{"a.txt": old})
	encodingsMustOK(t, c.CallTool(ctx, "read", map[string]any{"path": "a.txt"}), "read")
	r := c.CallTool(ctx, "edit", map[string]any{"path": "a.txt", "edits": []any{map[string]any{"oldText": "\"café\"", "newText": "\"tea\""}}})
	encodingsMustOK(t, r, "edit")
	want := "x = \"tea\" // 😀\r\ny = 1\r\n"
	got := readFile(t, filepath.Join(ws, "a.txt"))
	if got != want {
		t.Errorf("file %q, want %q", got, want)
	}
	if r.Details["matchLevel"] == "exact" {
		t.Errorf("matchLevel exact for an NFC/NFD pair")
	}
	encodingsCheckEdits(t, r.Details, old, got, "utf-16")
	encodingsCheckDiff(t, r.Details["unifiedDiff"].(string), "a.txt", &old, got)
}

func TestTextEditDetailsNoteMatchesResult(t *testing.T) {
	old := "α\r\nβ 😀\r\n"
	c, ws, ctx := start(t, map[string]string{"a.txt": old})
	encodingsMustOK(t, c.CallTool(ctx, "read", map[string]any{"path": "a.txt"}), "read")
	r := c.CallTool(ctx, "edit", map[string]any{"path": "a.txt", "edits": []any{map[string]any{"oldText": "β", "newText": "γ"}}})
	encodingsMustOK(t, r, "edit")
	n, ok := c.WaitNote(5*time.Second, func(n harness.Note) bool { return n.Method == "tools/details" })
	if !ok {
		t.Fatal("no tools/details notification")
	}
	var p struct {
		CallID  string         `json:"callId"`
		Tool    string         `json:"tool"`
		Details map[string]any `json:"details"`
	}
	json.Unmarshal(n.Params, &p)
	if p.CallID != r.CallID || p.Tool != "edit" {
		t.Errorf("note callId %q tool %q, result callId %q", p.CallID, p.Tool, r.CallID)
	}
	for _, k := range []string{"unifiedDiff", "oldHash", "newHash", "kind", "uri"} {
		if fmt.Sprint(p.Details[k]) != fmt.Sprint(r.Details[k]) {
			t.Errorf("tools/details %s = %v, result %v", k, p.Details[k], r.Details[k])
		}
	}
	encodingsCheckEdits(t, p.Details, old, readFile(t, filepath.Join(ws, "a.txt")), "utf-16")
}

// A chain of edits: each edit's oldHash is the previous edit's newHash, and
// a dryRun writes nothing but reports the same diff.
func TestTextEditHashChainAndDryRun(t *testing.T) {
	old := "a 😀\r\nb\r\n"
	c, ws, ctx := start(t, map[string]string{"a.txt": old})
	encodingsMustOK(t, c.CallTool(ctx, "read", map[string]any{"path": "a.txt"}), "read")
	dry := c.CallTool(ctx, "edit", map[string]any{"path": "a.txt", "dryRun": true, "edits": []any{map[string]any{"oldText": "b", "newText": "B"}}})
	encodingsMustOK(t, dry, "dry run")
	if got := readFile(t, filepath.Join(ws, "a.txt")); got != old {
		t.Fatalf("dryRun wrote: %q", got)
	}
	encodingsCheckDiff(t, fmt.Sprint(dry.Details["unifiedDiff"]), "a.txt", &old, "a 😀\r\nB\r\n")
	r1 := c.CallTool(ctx, "edit", map[string]any{"path": "a.txt", "edits": []any{map[string]any{"oldText": "b", "newText": "B"}}})
	encodingsMustOK(t, r1, "edit 1")
	if r1.Details["unifiedDiff"] != dry.Details["unifiedDiff"] {
		t.Errorf("dryRun diff %q differs from the real one %q", dry.Details["unifiedDiff"], r1.Details["unifiedDiff"])
	}
	r2 := c.CallTool(ctx, "edit", map[string]any{"path": "a.txt", "edits": []any{map[string]any{"oldText": "a 😀", "newText": "A"}}})
	encodingsMustOK(t, r2, "edit 2")
	if r2.Details["oldHash"] != r1.Details["newHash"] {
		t.Errorf("edit 2 oldHash %v != edit 1 newHash %v", r2.Details["oldHash"], r1.Details["newHash"])
	}
	if got := readFile(t, filepath.Join(ws, "a.txt")); got != "A\r\nB\r\n" {
		t.Errorf("file %q", got)
	}
}

func TestTextWriteBytes(t *testing.T) {
	cases := []struct {
		name, path, content string
	}{
		{"CRLF no final newline", "n/crlf.txt", "x\r\ny"},
		{"BOM kept in content", "n/bom.txt", encodingsBOM + "bom\nline\n"},
		{"emoji CJK combining", "n/deep/dir/u.txt", "😀 中文 e\u0301\n\tend\n"},
		{"lone CR", "n/cr.txt", "a\rb\r"},
		{"empty", "n/empty.txt", ""},
	}
	c, ws, ctx := start(t, map[string]string{"keep.txt": "k"})
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := c.CallTool(ctx, "write", map[string]any{"path": tc.path, "content": tc.content})
			encodingsMustOK(t, r, "write")
			if got := readFile(t, filepath.Join(ws, tc.path)); got != tc.content {
				t.Errorf("file bytes %q, want exactly the content %q", got, tc.content)
			}
			if r.Details["kind"] != "create" {
				t.Errorf("details.kind %v, want create", r.Details["kind"])
			}
			if tc.content != "" {
				encodingsCheckDiff(t, fmt.Sprint(r.Details["unifiedDiff"]), tc.path, nil, tc.content)
				encodingsCheckEdits(t, r.Details, "", tc.content, "utf-16")
			}
		})
	}
	t.Run("replace CRLF file keeps mode, writes content as given", func(t *testing.T) {
		p := filepath.Join(ws, "old.txt")
		os.WriteFile(p, []byte("a\r\n😀b\r\n"), 0o640)
		os.Chmod(p, 0o640)
		encodingsMustOK(t, c.CallTool(ctx, "read", map[string]any{"path": "old.txt"}), "read")
		content := "x😀\ny"
		r := c.CallTool(ctx, "write", map[string]any{"path": "old.txt", "content": content})
		encodingsMustOK(t, r, "write")
		if got := readFile(t, p); got != content {
			t.Errorf("bytes %q, want %q", got, content)
		}
		if st, _ := os.Stat(p); st.Mode().Perm() != 0o640 {
			t.Errorf("mode %v, want 0640", st.Mode().Perm())
		}
		if r.Details["kind"] != "write" {
			t.Errorf("kind %v", r.Details["kind"])
		}
		old := "a\r\n😀b\r\n"
		encodingsCheckDiff(t, fmt.Sprint(r.Details["unifiedDiff"]), "old.txt", &old, content)
		encodingsCheckEdits(t, r.Details, old, content, "utf-16")
	})
}

// Text document sync: incremental changes in UTF-16 positions around emoji;
// read shows the document; a change outside the text drops the document
// with a window/logMessage warning and read goes back to the disk.
func TestTextSyncIncrementalUTF16(t *testing.T) {
	disk := "disk 1\r\ndisk 2\r\n"
	c, ws, ctx := start(t, map[string]string{"doc.txt": disk})
	uri := fileURI(filepath.Join(ws, "doc.txt"))
	notify := func(method string, params any) {
		t.Helper()
		if err := c.Conn.Notify(ctx, method, params); err != nil {
			t.Fatal(err)
		}
	}
	rng := func(sl, sc, el, ec int) map[string]any {
		return map[string]any{"start": map[string]any{"line": sl, "character": sc}, "end": map[string]any{"line": el, "character": ec}}
	}
	notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{"uri": uri, "languageId": "plaintext", "version": 1,
		"text": "a😀b 中\r\n👍🏽 end\r\n"}})
	notify("textDocument/didChange", map[string]any{"textDocument": map[string]any{"uri": uri, "version": 2}, "contentChanges": []any{
		// After "a😀" (1 + 2 units): insert X.
		map[string]any{"range": rng(0, 3, 0, 3), "text": "X"},
		// Line 1 "👍🏽 end": 👍 (2) + 🏽 (2) + space = 5; replace "end" (5-8).
		map[string]any{"range": rng(1, 5, 1, 8), "text": "fin😀"},
		// Replace "中" on line 0: "a😀Xb " is 1+2+1+1+1 = 6 units.
		map[string]any{"range": rng(0, 6, 0, 7), "text": "文\r\nnew"},
	}})
	r := c.CallTool(ctx, "read", map[string]any{"path": "doc.txt"})
	encodingsMustOK(t, r, "read")
	want := encodingsNumbered(1, "a😀Xb 文", "new", "👍🏽 fin😀")
	if !strings.Contains(r.Text(), want) {
		t.Errorf("read of the open document:\n%q\nwant lines\n%q", r.Text(), want)
	}
	if !strings.Contains(r.Text(), "unsaved text from the editor") {
		t.Errorf("no note that the editor's text differs from the disk: %q", r.Text())
	}
	if v, _ := r.Details["editorVersion"].(float64); v != 2 {
		t.Errorf("details.editorVersion %v, want 2", r.Details["editorVersion"])
	}
	// A range past the end of the text.
	notify("textDocument/didChange", map[string]any{"textDocument": map[string]any{"uri": uri, "version": 3}, "contentChanges": []any{
		map[string]any{"range": rng(40, 0, 40, 1), "text": "zzz"},
	}})
	if _, ok := c.WaitNote(5*time.Second, func(n harness.Note) bool {
		if n.Method != "window/logMessage" {
			return false
		}
		var m struct {
			Type    int    `json:"type"`
			Message string `json:"message"`
		}
		json.Unmarshal(n.Params, &m)
		return m.Type == 2 && strings.Contains(m.Message, "doc.txt")
	}); !ok {
		var all []string
		for _, n := range c.Notes("window/logMessage") {
			all = append(all, string(n.Params))
		}
		t.Errorf("no window/logMessage warning naming doc.txt after an impossible change; logs: %v", all)
	}
	r = c.CallTool(ctx, "read", map[string]any{"path": "doc.txt"})
	encodingsMustOK(t, r, "read after drop")
	if !strings.Contains(r.Text(), encodingsNumbered(1, "disk 1", "disk 2")) || strings.Contains(r.Text(), "zzz") || strings.Contains(r.Text(), "unsaved") {
		t.Errorf("after the drop read must show the disk: %q", r.Text())
	}
}

// A change splitting a surrogate pair, or a whole-text change, are handled
// without corrupting what read shows.
func TestTextSyncWholeTextChange(t *testing.T) {
	c, ws, ctx := start(t, map[string]string{"doc.txt": "disk\n"})
	uri := fileURI(filepath.Join(ws, "doc.txt"))
	c.Conn.Notify(ctx, "textDocument/didOpen", map[string]any{"textDocument": map[string]any{"uri": uri, "languageId": "plaintext", "version": 1, "text": "disk\n"}})
	c.Conn.Notify(ctx, "textDocument/didChange", map[string]any{"textDocument": map[string]any{"uri": uri, "version": 5}, "contentChanges": []any{
		map[string]any{"text": "whole 😀\r\nnew text"},
	}})
	r := c.CallTool(ctx, "read", map[string]any{"path": "doc.txt"})
	encodingsMustOK(t, r, "read")
	if !strings.Contains(r.Text(), encodingsNumbered(1, "whole 😀", "new text")) {
		t.Errorf("read %q", r.Text())
	}
	if v, _ := r.Details["editorVersion"].(float64); v != 5 {
		t.Errorf("editorVersion %v", r.Details["editorVersion"])
	}
	c.Conn.Notify(ctx, "textDocument/didClose", map[string]any{"textDocument": map[string]any{"uri": uri}})
	r = c.CallTool(ctx, "read", map[string]any{"path": "doc.txt"})
	if !strings.Contains(r.Text(), encodingsNumbered(1, "disk")) {
		t.Errorf("after didClose read must show the disk: %q", r.Text())
	}
}

// edit of an open document through workspace/applyEdit: the edits carry
// UTF-16 ranges into the editor's text (no BOM, the editor's line endings),
// in documentChanges (versioned) and changes alike.
func TestTextSyncApplyEditRanges(t *testing.T) {
	disk := "top\r\n😀😀 中 target 👍🏽\r\nbottom\r\n"
	ws := newWorkspace(t, map[string]string{"doc.txt": disk})
	uri := fileURI(filepath.Join(ws, "doc.txt"))
	c := harness.Start(t, harness.Options{Root: ws})
	var mu sync.Mutex
	doc := "top\r\n😀😀 中 target 👍🏽 unsaved\r\nbottom\r\n" // differs from the disk
	version := 1
	var applied []string
	var applyErr []string
	ctx := testCtx(t, sessionTimeout)
	c.OnRequest = func(rctx context.Context, method string, params json.RawMessage) (any, error) {
		if method != "workspace/applyEdit" {
			return nil, fmt.Errorf("unexpected %s", method)
		}
		var p struct {
			Edit struct {
				DocumentChanges []struct {
					TextDocument struct {
						URI     string `json:"uri"`
						Version int    `json:"version"`
					} `json:"textDocument"`
					Edits []encodingsEdit `json:"edits"`
				} `json:"documentChanges"`
				Changes map[string][]encodingsEdit `json:"changes"`
			} `json:"edit"`
		}
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, err
		}
		mu.Lock()
		defer mu.Unlock()
		if len(p.Edit.DocumentChanges) != 1 || p.Edit.DocumentChanges[0].TextDocument.Version != version {
			applyErr = append(applyErr, fmt.Sprintf("documentChanges %s, want one at version %d", params, version))
			return map[string]any{"applied": false, "failureReason": "bad"}, nil
		}
		dc := p.Edit.DocumentChanges[0]
		next, err := encodingsApply(doc, dc.Edits, "utf-16")
		if err != nil {
			applyErr = append(applyErr, err.Error())
			return map[string]any{"applied": false, "failureReason": err.Error()}, nil
		}
		for u, ch := range p.Edit.Changes {
			alt, err := encodingsApply(doc, ch, "utf-16")
			if err != nil || alt != next {
				applyErr = append(applyErr, fmt.Sprintf("changes[%s] give %q (%v), documentChanges %q", u, alt, err, next))
			}
		}
		doc = next
		version++
		applied = append(applied, next)
		c.Conn.Notify(ctx, "textDocument/didChange", map[string]any{"textDocument": map[string]any{"uri": uri, "version": version},
			"contentChanges": []any{map[string]any{"text": next}}})
		return map[string]any{"applied": true}, nil
	}
	c.Initialize(ctx, map[string]any{
		"initializationOptions": bypassOptions(),
		"capabilities":          map[string]any{"experimental": map[string]any{"agentls": map[string]any{"applyEdit": true}}},
	})
	c.Conn.Notify(ctx, "textDocument/didOpen", map[string]any{"textDocument": map[string]any{"uri": uri, "languageId": "plaintext", "version": 1, "text": doc}})
	encodingsMustOK(t, c.CallTool(ctx, "read", map[string]any{"path": "doc.txt"}), "read")
	r := c.CallTool(ctx, "edit", map[string]any{"path": "doc.txt", "edits": []any{map[string]any{"oldText": "target 👍🏽 unsaved\nbottom", "newText": "hit 🎯\nlast"}}})
	encodingsMustOK(t, r, "edit")
	mu.Lock()
	defer mu.Unlock()
	for _, e := range applyErr {
		t.Error(e)
	}
	want := "top\r\n😀😀 中 hit 🎯\r\nlast\r\n"
	if len(applied) != 1 || applied[0] != want {
		t.Errorf("the editor's document after applyEdit: %q, want %q", applied, want)
	}
	if !strings.Contains(r.Text(), "in the editor") {
		t.Errorf("result does not say the change is in the editor: %q", r.Text())
	}
	if got := readFile(t, filepath.Join(ws, "doc.txt")); got != disk {
		t.Errorf("disk changed: %q", got)
	}
	if r.Details["inEditor"] != true {
		t.Errorf("details.inEditor %v", r.Details["inEditor"])
	}
	encodingsCheckEdits(t, r.Details, "top\r\n😀😀 中 target 👍🏽 unsaved\r\nbottom\r\n", want, "utf-16")
}

// Bytes that are not UTF-8 elsewhere in the file survive an edit: the
// file is not round-tripped through U+FFFD.
func TestTextEditKeepsInvalidUTF8Bytes(t *testing.T) {
	old := "x\xff\xfe\n\xc3(\nl3\nl4\nl5\nl6\nl7\nlast\n"
	c, ws, ctx := start(t, map[string]string{"a.txt": old})
	encodingsMustOK(t, c.CallTool(ctx, "read", map[string]any{"path": "a.txt"}), "read")
	r := c.CallTool(ctx, "edit", map[string]any{"path": "a.txt", "edits": []any{map[string]any{"oldText": "last", "newText": "LAST"}}})
	encodingsMustOK(t, r, "edit")
	want := "x\xff\xfe\n\xc3(\nl3\nl4\nl5\nl6\nl7\nLAST\n"
	if got := readFile(t, filepath.Join(ws, "a.txt")); got != want {
		t.Errorf("file %q, want %q", got, want)
	}
	// The hunk's context (l5-l7) holds only valid text: the diff applies.
	encodingsCheckDiff(t, fmt.Sprint(r.Details["unifiedDiff"]), "a.txt", &old, want)
}

// Without the applyEdit capability, an open document with unsaved changes
// is not edited on disk.
func TestTextSyncUnsavedRefusedWithoutApplyEdit(t *testing.T) {
	disk := "a 😀\r\nb\r\n"
	c, ws, ctx := start(t, map[string]string{"doc.txt": disk, "same.txt": "s 😀\r\n"})
	for name, text := range map[string]string{"doc.txt": "a 😀\r\nb typed\r\n", "same.txt": "s 😀\r\n"} {
		c.Conn.Notify(ctx, "textDocument/didOpen", map[string]any{"textDocument": map[string]any{"uri": fileURI(filepath.Join(ws, name)), "languageId": "plaintext", "version": 1, "text": text}})
	}
	encodingsMustOK(t, c.CallTool(ctx, "read", map[string]any{"path": "doc.txt"}), "read")
	r := c.CallTool(ctx, "edit", map[string]any{"path": "doc.txt", "edits": []any{map[string]any{"oldText": "a 😀", "newText": "A"}}})
	if !r.IsError || !strings.Contains(r.Text(), "save or revert") {
		t.Errorf("want isError asking to save or revert, got %v %q", r.IsError, r.Text())
	}
	if got := readFile(t, filepath.Join(ws, "doc.txt")); got != disk {
		t.Errorf("disk changed: %q", got)
	}
	// An open document equal to the disk is edited on disk as usual.
	encodingsMustOK(t, c.CallTool(ctx, "read", map[string]any{"path": "same.txt"}), "read")
	r = c.CallTool(ctx, "edit", map[string]any{"path": "same.txt", "edits": []any{map[string]any{"oldText": "s 😀", "newText": "S 🎉"}}})
	encodingsMustOK(t, r, "edit of a clean open document")
	if got := readFile(t, filepath.Join(ws, "same.txt")); got != "S 🎉\r\n" {
		t.Errorf("same.txt %q", got)
	}
}

// Editors keep a UTF-8 BOM out of the document text (docs/tools.md: "as
// editors keep it out of the document"). An open document equal to the
// disk but for the BOM is not "unsaved", is edited on disk with the BOM
// kept, and TextEdits do not count the BOM.
func TestTextSyncBOMDocumentEqualsDisk(t *testing.T) {
	disk := encodingsBOM + "first 😀\r\nsecond\r\n"
	c, ws, ctx := start(t, map[string]string{"doc.txt": disk})
	c.Conn.Notify(ctx, "textDocument/didOpen", map[string]any{"textDocument": map[string]any{"uri": fileURI(filepath.Join(ws, "doc.txt")), "languageId": "plaintext", "version": 1,
		"text": strings.TrimPrefix(disk, encodingsBOM)}})
	r := c.CallTool(ctx, "read", map[string]any{"path": "doc.txt"})
	encodingsMustOK(t, r, "read")
	if strings.Contains(r.Text(), "unsaved") {
		t.Errorf("document equal to the disk (BOM aside) reported as unsaved: %q", r.Text())
	}
	e := c.CallTool(ctx, "edit", map[string]any{"path": "doc.txt", "edits": []any{map[string]any{"oldText": "first", "newText": "1st"}}})
	encodingsMustOK(t, e, "edit")
	want := encodingsBOM + "1st 😀\r\nsecond\r\n"
	if got := readFile(t, filepath.Join(ws, "doc.txt")); got != want {
		t.Errorf("file %q, want %q", got, want)
	}
	// The edit is minimal ("fir" -> "1", the "st" kept) and starts at
	// 0:0: the BOM is not counted.
	edits := encodingsEdits(t, e.Details["edits"])
	if len(edits) != 1 || edits[0].Range.Start.Line != 0 || edits[0].Range.Start.Character != 0 {
		t.Errorf("edits %+v, want one edit starting at 0:0 (BOM not counted)", edits)
	}
	encodingsCheckEdits(t, e.Details, disk, want, "utf-16")

	// The editor reloads the changed file (the BOM again left out); the
	// next edit needs no new read and keeps the BOM too.
	c.Conn.Notify(ctx, "textDocument/didChange", map[string]any{"textDocument": map[string]any{"uri": fileURI(filepath.Join(ws, "doc.txt")), "version": 2},
		"contentChanges": []any{map[string]any{"text": strings.TrimPrefix(want, encodingsBOM)}}})
	encodingsMustOK(t, c.CallTool(ctx, "edit", map[string]any{"path": "doc.txt", "edits": []any{map[string]any{"oldText": "second", "newText": "2nd"}}}), "second edit")
	if got, want := readFile(t, filepath.Join(ws, "doc.txt")), encodingsBOM+"1st 😀\r\n2nd\r\n"; got != want {
		t.Errorf("after the second edit: file %q, want %q", got, want)
	}
}

// The same for a UTF-16 file: the editor's document is the decoded text;
// when it equals what read decodes from the disk, nothing is unsaved.
func TestTextSyncUTF16DocumentEqualsDisk(t *testing.T) {
	text := "héllo 😀\nworld\n"
	disk := []byte{0xff, 0xfe}
	for _, u := range utf16.Encode([]rune(text)) {
		disk = append(disk, byte(u), byte(u>>8))
	}
	c, ws, ctx := start(t, map[string]string{"doc.txt": string(disk)})
	c.Conn.Notify(ctx, "textDocument/didOpen", map[string]any{"textDocument": map[string]any{"uri": fileURI(filepath.Join(ws, "doc.txt")), "languageId": "plaintext", "version": 1, "text": text}})
	r := c.CallTool(ctx, "read", map[string]any{"path": "doc.txt"})
	encodingsMustOK(t, r, "read")
	if strings.Contains(r.Text(), "unsaved") || !strings.Contains(r.Text(), encodingsNumbered(1, "héllo 😀", "world")) {
		t.Errorf("UTF-16 document equal to the disk: %q", r.Text())
	}
}

// Positions at the very ends are inside the text: the end of a line before
// its CRLF, the end of a last line without a newline, and the empty line
// after a final newline.
func TestTextSyncBoundaryPositions(t *testing.T) {
	cases := []struct {
		name, open string
		line, char int
		want       []string
	}{
		{"end of a CRLF line", "ab\r\ncd\r\n", 0, 2, []string{"abX", "cd"}},
		{"end of text without final newline", "ab\r\n😀", 1, 2, []string{"ab", "😀X"}},
		{"line after the final newline", "ab\ncd\n", 2, 0, []string{"ab", "cd", "X"}},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			name := fmt.Sprintf("b%d.txt", i)
			c, ws, ctx := start(t, map[string]string{name: "disk\n"})
			uri := fileURI(filepath.Join(ws, name))
			c.Conn.Notify(ctx, "textDocument/didOpen", map[string]any{"textDocument": map[string]any{"uri": uri, "languageId": "plaintext", "version": 1, "text": tc.open}})
			pos := map[string]any{"line": tc.line, "character": tc.char}
			c.Conn.Notify(ctx, "textDocument/didChange", map[string]any{"textDocument": map[string]any{"uri": uri, "version": 2},
				"contentChanges": []any{map[string]any{"range": map[string]any{"start": pos, "end": pos}, "text": "X"}}})
			r := c.CallTool(ctx, "read", map[string]any{"path": name})
			encodingsMustOK(t, r, "read")
			if !strings.Contains(r.Text(), encodingsNumbered(1, tc.want...)) {
				t.Errorf("read %q, want lines %q", r.Text(), tc.want)
			}
			for _, n := range c.Notes("window/logMessage") {
				if strings.Contains(string(n.Params), name) {
					t.Errorf("unexpected log: %s", n.Params)
				}
			}
		})
	}
}

// A Latin-1 file's invalid UTF-8 reaches the client as U+FFFD and the
// connection survives (the default json/v2 codec would fail the reply).
func TestInvalidUTF8SurvivesTheWire(t *testing.T) {
	t.Parallel()
	c, ws, ctx := start(t, nil)
	if err := os.WriteFile(filepath.Join(ws, "latin1.txt"), []byte("caf\xe9 cr\xe8me\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := c.CallTool(ctx, "read", map[string]any{"path": "latin1.txt"})
	if r.IsError || !strings.Contains(r.Text(), "caf\uFFFD cr\uFFFDme") || !strings.Contains(r.Text(), "not valid UTF-8") {
		t.Fatalf("read latin1 = %q", r.Text())
	}
	if r := c.CallTool(ctx, "read", map[string]any{"path": "latin1.txt"}); r.IsError {
		t.Fatal("connection did not survive")
	}
}
