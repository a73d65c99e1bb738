package e2e

// What an edit does to a file's bytes and how its details describe the
// change: TextEdits in the negotiated position encoding (UTF-16 by default,
// a BOM not counted), a unified diff git apply and patch take, the hashes
// of the bytes, and the same in the tools/details notification.

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentls/agentls/test/harness"
)

// Every edit keeps every untouched byte, the BOM, the line-ending style,
// the final newline (or its absence) and the mode, whatever match level
// found it; its details describe the change exactly.
func TestEditKeepsBytesAndDetailsDescribeIt(t *testing.T) {
	cases := []struct {
		name       string
		old        string
		mode       os.FileMode
		edits      []string // oldText, newText pairs
		replaceAll bool
		want       string
		fuzzy      bool   // matched above the exact level (its result shows the lines)
		wantEdit   string // the one TextEdit, when pinned
		firstLine  int    // details.firstChangedLine, when pinned
	}{
		{name: "CRLF+BOM+no final newline, LF oldText/newText", mode: 0o751, fuzzy: true,
			old:   bom + "line1\r\n😀 emoji 中文 x  \r\nline3\r\nlast",
			edits: []string{"emoji 中文 x  \nline3", "EMOJI 中文 y\nL3\nadded"},
			want:  bom + "line1\r\n😀 EMOJI 中文 y\r\nL3\r\nadded\r\nlast"},
		{name: "CRLF with final newline, last line edited", mode: 0o600,
			old: "a\r\nb\r\nlast line\r\n", edits: []string{"last line", "final\nline"}, want: "a\r\nb\r\nfinal\r\nline\r\n"},
		{name: "LF no final newline, last line edited", mode: 0o644,
			old: "keep  \n\tkeep\ttabs\nend", edits: []string{"end", "END"}, want: "keep  \n\tkeep\ttabs\nEND"},
		{name: "LF file stays LF, lines inserted", mode: 0o644,
			old: "one\ntwo\nthree\n", edits: []string{"two\n", "2a\n2b\n"}, want: "one\n2a\n2b\nthree\n"},
		{name: "surrogate pairs before and after the match", mode: 0o644,
			old: "😀😀 中文 y 👍🏽\r\nz\r\n", edits: []string{"y", "🎉"}, want: "😀😀 中文 🎉 👍🏽\r\nz\r\n"},
		// 😀 is 2 units each, then space, 中, 文, space: y is at unit 8 of line 1.
		{name: "UTF-16 range after emoji and CJK in a BOM+CRLF file", mode: 0o644,
			old: bom + "first\r\n😀😀 中文 y z\r\n", edits: []string{"y", "Y"}, want: bom + "first\r\n😀😀 中文 Y z\r\n",
			wantEdit: `1:8-1:9 "Y"`, firstLine: 2},
		{name: "two edits, multi-line, emoji and a ZWJ sequence", mode: 0o644,
			old:   "# Überschrift 😀\nprice: 5€ 🚀 rocket\nname = \"Zoë\"\ntail ✓\nend\n",
			edits: []string{"price: 5€ 🚀 rocket\nname = \"Zoë\"", "price: 6€ 🛸 ufo\nname = \"Zoë 👩‍💻\"\nextra ü", "tail ✓", "tail ✗"},
			want:  "# Überschrift 😀\nprice: 6€ 🛸 ufo\nname = \"Zoë 👩‍💻\"\nextra ü\ntail ✗\nend\n", firstLine: 2},
		{name: "replaceAll across CJK lines", mode: 0o644, replaceAll: true,
			old: "中x中\r\n文x\r\nx😀\r\n", edits: []string{"x", "ŷ"}, want: "中ŷ中\r\n文ŷ\r\nŷ😀\r\n"},
		{name: "combining marks in oldText and newText", mode: 0o644,
			old: "name = \"cafe\u0301\"\nother = \"e\u0301\"\n", edits: []string{"\"cafe\u0301\"", "\"ne\u0301e\u0301\""},
			want: "name = \"ne\u0301e\u0301\"\nother = \"e\u0301\"\n"},
		{name: "NFC oldText matches an NFD file, only the match changes", mode: 0o644, fuzzy: true,
			old: "x = \"cafe\u0301\" // 😀\r\ny = 1\r\n", edits: []string{"\"café\"", "\"tea\""}, want: "x = \"tea\" // 😀\r\ny = 1\r\n"},
		{name: "LF file: newText's CRLF becomes LF", mode: 0o644,
			old: "a\nb\nc\n", edits: []string{"b", "B\r\nB2"}, want: "a\nB\nB2\nc\n"},
		{name: "lone CR line breaks kept", mode: 0o644,
			old: "one\rtwo\rthree\rfour", edits: []string{"three", "THREE"}, want: "one\rtwo\rTHREE\rfour"},
		{name: "indentation level re-indents with tabs in a CRLF file", mode: 0o644, fuzzy: true,
			old:   "x\r\n\t\tif x {\r\n\t\t\ty()\r\n\t\t}\r\n",
			edits: []string{"if x {\n\ty()\n}", "if x {\n\tz()\n}"}, want: "x\r\n\t\tif x {\r\n\t\t\tz()\r\n\t\t}\r\n"},
		{name: "unicode level after an emoji maps back to the right bytes", mode: 0o644, fuzzy: true,
			old:   "😀 say \u201cquoted\u201d \u2014 ok\r\nnext \u201cquoted\u201d line\r\n",
			edits: []string{"\"quoted\" - ok", "\"Q\" - ok"}, want: "😀 say \"Q\" - ok\r\nnext \u201cquoted\u201d line\r\n"},
		// The \t after "bar" is outside the matched text.
		{name: "trailing whitespace level keeps other lines' trailing spaces", mode: 0o644, fuzzy: true,
			old: "keep \t\r\nfoo  \r\nbar\t\r\nkeep2  \r\n", edits: []string{"foo\nbar", "FOO\nBAR"}, want: "keep \t\r\nFOO\r\nBAR\t\r\nkeep2  \r\n"},
		{name: "CRLF oldText and newText in a CRLF file: no doubled CR", mode: 0o644,
			old: "p\r\nq\r\nr\r\n", edits: []string{"p\r\nq", "P\r\nQ\r\nQ2"}, want: "P\r\nQ\r\nQ2\r\nr\r\n"},
		{name: "mixed endings: untouched bytes and the edited line's ending kept", mode: 0o644,
			old: "a\r\nb\nc\r\n", edits: []string{"b", "B"}, want: "a\r\nB\nc\r\n"},
		{name: "BOM file, first line edited at its start", mode: 0o644,
			old: bom + "first 😀\r\nsecond", edits: []string{"first", "1st"}, want: bom + "1st 😀\r\nsecond"},
		{name: "BOM only, LF, delete a line", mode: 0o640,
			old: bom + "a\nb\nc\n", edits: []string{"b\n", ""}, want: bom + "a\nc\n"},
		// Not round-tripped through U+FFFD; the hunk's context holds only valid text.
		{name: "bytes that are not UTF-8 elsewhere survive", mode: 0o644,
			old: "x\xff\xfe\n\xc3(\nl3\nl4\nl5\nl6\nl7\nlast\n", edits: []string{"last", "LAST"}, want: "x\xff\xfe\n\xc3(\nl3\nl4\nl5\nl6\nl7\nLAST\n"},
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
			mustRead(t, c, ctx, rel)
			args := editCall(rel, tc.edits...)
			for _, e := range args["edits"].([]any) {
				e.(map[string]any)["replaceAll"] = tc.replaceAll
			}
			r := c.CallTool(ctx, "edit", args)
			if r.IsError {
				t.Fatalf("edit: %s", r.Text())
			}
			got := readFile(t, p)
			if got != tc.want {
				t.Errorf("file bytes\n%q\nwant\n%q", got, tc.want)
			}
			if st, _ := os.Stat(p); st.Mode().Perm() != tc.mode {
				t.Errorf("mode %v, want %v", st.Mode().Perm(), tc.mode)
			}
			checkDetails(t, c, r, "edit", "edit", rel, &tc.old, got, "utf-16")
			diff, _ := r.Details["unifiedDiff"].(string)
			wantMarker := !strings.HasSuffix(tc.want, "\n") || !strings.HasSuffix(tc.old, "\n")
			if has := strings.Contains(diff, "\n\\ No newline at end of file\n"); has != wantMarker {
				t.Errorf("unifiedDiff has the \"\\ No newline at end of file\" marker: %v, want %v:\n%q", has, wantMarker, diff)
			}
			if (r.Details["matchLevel"] != "exact") != tc.fuzzy {
				t.Errorf("matchLevel %v, fuzzy match expected: %v", r.Details["matchLevel"], tc.fuzzy)
			}
			if edits := lspEdits(t, r.Details["edits"]); tc.wantEdit != "" && (len(edits) != 1 || edits[0].String() != tc.wantEdit) {
				t.Errorf("edits %v, want one edit %s (UTF-16, BOM not counted)", edits, tc.wantEdit)
			}
			if fl, _ := r.Details["firstChangedLine"].(float64); tc.firstLine != 0 && int(fl) != tc.firstLine {
				t.Errorf("firstChangedLine %v, want %d", fl, tc.firstLine)
			}
			if n := strings.Count(strings.TrimSpace(r.Text()), "\n"); n > 1 && !tc.fuzzy {
				t.Errorf("model text should be one or two lines:\n%s", r.Text())
			}
		})
	}
}

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
				old := files[rel]
				checkDetails(t, c, r, "edit", "edit", rel, &old, readFile(t, filepath.Join(ws, rel)), enc)
			}
			if got, want := readFile(t, filepath.Join(ws, "multi.txt")), "😀 héllo 中文 mundo 🎉\nzweite line\nthird\n"; got != want {
				t.Errorf("multi.txt %q, want %q", got, want)
			}
		})
	}
}
