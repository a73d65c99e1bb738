package e2e

// What an edit does to a file's bytes and how its details describe the
// change: TextEdits in the negotiated position encoding (UTF-16 by default,
// a BOM not counted), a unified diff git apply and patch take, the hashes
// of the bytes, and the same in the tools/details notification.

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
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

// ~200 generated (file, edits) pairs, LF or CRLF, with or without a BOM
// and a final newline: after each edit the file is what an exact
// replacement gives, and the details' TextEdits and diff each turn the old
// content into it byte for byte.
func TestEditTextEditsProperty(t *testing.T) {
	slow(t)
	c, ws, ctx := start(t, nil)
	rng := rand.New(rand.NewPCG(8, 2024))
	var cases []propCase
	for i := 0; len(cases) < 200 && i < 5000; i++ {
		if tc, ok := propGen(rng, len(cases)); ok {
			cases = append(cases, tc)
		}
	}
	if len(cases) < 200 {
		t.Fatalf("generator made only %d cases", len(cases))
	}
	failures := 0
	for i, tc := range cases {
		if failures >= 8 {
			t.Fatalf("stopping after %d failing cases", failures)
		}
		if !t.Run(tc.name, func(t *testing.T) {
			rel := fmt.Sprintf("p/case%03d.txt", i)
			writeFile(t, filepath.Join(ws, rel), tc.content)
			mustRead(t, c, ctx, rel)
			var es []any
			for _, e := range tc.edits {
				es = append(es, map[string]any{"oldText": e.Old, "newText": e.New, "replaceAll": e.All})
			}
			r := c.CallTool(ctx, "edit", map[string]any{"path": rel, "edits": es})
			if r.IsError {
				t.Fatalf("edit %#v of %q failed: %s", tc.edits, tc.content, r.Text())
			}
			got := readFile(t, filepath.Join(ws, rel))
			if got != tc.expected {
				t.Fatalf("file after edit %#v:\n%q\nwant\n%q", tc.edits, got, tc.expected)
			}
			checkDetails(t, c, r, "edit", "edit", rel, &tc.content, got, "utf-16")
		}) {
			failures++
		}
	}
}

// propEdit is one {oldText, newText, replaceAll}.
type propEdit struct {
	Old, New string
	All      bool
}

// countOverlapping counts occurrences of sub in s, overlapping ones included.
func countOverlapping(s, sub string) (n int, overlapping bool) {
	last := -1
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			if last >= 0 && i < last+len(sub) {
				overlapping = true
			}
			last = i
			n++
		}
	}
	return n, overlapping
}

// propGen generates one property case: a file and the edits to make.
type propCase struct {
	name     string
	content  string
	edits    []propEdit
	expected string
}

var propPieces = []string{"a", "bc", "def", "x", "Z9", "é", "ñö", "ß", "Ω", "中", "文字", "日本語", "😀", "🎉", "👍🏽", "𝄞", "\t", " ", "  ", "=", "{", "}", "(", ")", ";", "\"", "é", "ä"}

func propLine(rng *rand.Rand) string {
	var b strings.Builder
	for n := rng.IntN(7); n > 0; n-- {
		b.WriteString(propPieces[rng.IntN(len(propPieces))])
	}
	return b.String()
}

func propNewText(rng *rand.Rand, allowEmpty bool) string {
	var b strings.Builder
	for n := rng.IntN(4); n > 0 || (!allowEmpty && b.Len() == 0); n-- {
		b.WriteString(propPieces[rng.IntN(len(propPieces))])
		if rng.IntN(5) == 0 {
			b.WriteString("\n")
		}
	}
	return b.String()
}

// propGen builds a case or returns false when the random choice is unusable.
func propGen(rng *rand.Rand, i int) (propCase, bool) {
	crlf := rng.IntN(3) == 0
	withBOM := rng.IntN(5) == 0
	eol := "\n"
	if crlf {
		eol = "\r\n"
	}
	nl := 1 + rng.IntN(10)
	lines := make([]string, nl)
	for k := range lines {
		lines[k] = propLine(rng)
		// Give some lines a unique tag so whole-line edits find unique text.
		if rng.IntN(2) == 0 {
			lines[k] += fmt.Sprintf("#%d", k)
		}
	}
	body := strings.Join(lines, eol)
	if rng.IntN(4) != 0 {
		body += eol
	}
	if strings.TrimSpace(body) == "" {
		return propCase{}, false
	}
	prefix := ""
	if withBOM {
		prefix = bom
	}
	conv := func(s string) string { // newText's LF become CRLF in a CRLF file
		if !crlf {
			return s
		}
		return strings.ReplaceAll(s, "\n", "\r\n")
	}
	// boundaries: rune starts not splitting CRLF.
	var cuts []int
	for k := range body {
		if k > 0 && body[k-1] == '\r' && body[k] == '\n' {
			continue
		}
		cuts = append(cuts, k)
	}
	cuts = append(cuts, len(body))
	lineSpan := func(a, b int) (int, int) { // byte span of lines a..b with terminators
		s := 0
		for k := 0; k < a; k++ {
			s += len(lines[k]) + len(eol)
		}
		e := s
		for k := a; k <= b; k++ {
			e += len(lines[k])
			if k < nl-1 || strings.HasSuffix(body, eol) {
				e += len(eol)
			}
		}
		if e > len(body) {
			e = len(body)
		}
		return s, e
	}
	type region struct {
		s, e int
		nt   string
	}
	var regs []region
	kind := rng.IntN(8)
	name := ""
	switch kind {
	case 0, 1, 2: // random substring
		name = "substring"
		a := cuts[rng.IntN(len(cuts)-1)]
		bIdx := sort.SearchInts(cuts, a) + 1 + rng.IntN(min(12, len(cuts)-sort.SearchInts(cuts, a)-1))
		regs = append(regs, region{s: a, e: cuts[bIdx], nt: propNewText(rng, true)})
	case 3: // delete whole lines
		name = "deleteLines"
		a := rng.IntN(nl)
		b := a + rng.IntN(min(3, nl-a))
		s, e := lineSpan(a, b)
		regs = append(regs, region{s: s, e: e})
	case 4: // insert after a line
		name = "insertAfterLine"
		a := rng.IntN(nl)
		s, e := lineSpan(a, a)
		nt := body[s:e]
		if !strings.HasSuffix(nt, eol) {
			nt += "\n"
		}
		regs = append(regs, region{s: s, e: e, nt: strings.ReplaceAll(nt, "\r\n", "\n") + propNewText(rng, false) + "\n"})
	case 5: // first or last line replaced
		name = "firstOrLastLine"
		a := 0
		if rng.IntN(2) == 0 {
			a = nl - 1
		}
		s, e := lineSpan(a, a)
		e = s + len(lines[a])
		regs = append(regs, region{s: s, e: e, nt: propNewText(rng, true)})
	case 6: // two disjoint edits in one call
		name = "twoEdits"
		if len(cuts) < 6 {
			return propCase{}, false
		}
		p := rng.Perm(len(cuts))[:4]
		sort.Ints(p)
		if p[1] == p[2] {
			return propCase{}, false
		}
		regs = append(regs, region{s: cuts[p[0]], e: cuts[p[1]], nt: propNewText(rng, true)}, region{s: cuts[p[2]] + 0, e: cuts[p[3]], nt: propNewText(rng, true)})
		if regs[0].e >= regs[1].s {
			return propCase{}, false
		}
	case 7: // replaceAll of a short piece
		name = "replaceAll"
		piece := propPieces[rng.IntN(len(propPieces))]
		n, ov := countOverlapping(body, piece)
		if n < 2 || ov || strings.TrimSpace(piece) == "" {
			return propCase{}, false
		}
		nt := propNewText(rng, true)
		if conv(nt) == piece {
			return propCase{}, false
		}
		exp, ok := keepFinalNewline(body, strings.ReplaceAll(body, piece, conv(nt)), eol)
		if !ok {
			return propCase{}, false
		}
		return propCase{
			name:     fmt.Sprintf("%03d-%s-crlf=%v-bom=%v", i, name, crlf, withBOM),
			content:  prefix + body,
			edits:    []propEdit{{Old: piece, New: nt, All: true}},
			expected: prefix + exp,
		}, true
	}
	var edits []propEdit
	expected := body
	for k := len(regs) - 1; k >= 0; k-- {
		r := regs[k]
		old := body[r.s:r.e]
		if old == "" || strings.TrimSpace(old) == "" {
			return propCase{}, false
		}
		if n, _ := countOverlapping(body, old); n != 1 {
			return propCase{}, false
		}
		if conv(r.nt) == old {
			return propCase{}, false
		}
		send := old
		if crlf && strings.Contains(old, "\r\n") && rng.IntN(2) == 0 {
			lf := strings.ReplaceAll(old, "\r\n", "\n")
			if n, _ := countOverlapping(body, lf); n == 0 && !strings.HasPrefix(lf, "\n") && !strings.HasSuffix(lf, "\n") {
				send = lf
			}
		}
		edits = append([]propEdit{{Old: send, New: r.nt}}, edits...)
		expected = expected[:r.s] + conv(r.nt) + expected[r.e:]
	}
	expected, ok := keepFinalNewline(body, expected, eol)
	if !ok || expected == body {
		return propCase{}, false
	}
	return propCase{
		name:     fmt.Sprintf("%03d-%s-crlf=%v-bom=%v", i, name, crlf, withBOM),
		content:  prefix + body,
		edits:    edits,
		expected: prefix + expected,
	}, true
}

// keepFinalNewline applies the contract's "the final newline is preserved"
// to an edited body: a file that ended with a line break still does, one
// that did not still does not.
func keepFinalNewline(before, after, eol string) (string, bool) {
	if after == "" {
		return "", false
	}
	had := strings.HasSuffix(before, "\n")
	has := strings.HasSuffix(after, "\n")
	switch {
	case had && !has:
		after += eol
	case !had && has:
		after = strings.TrimSuffix(strings.TrimSuffix(after, "\n"), "\r")
	}
	return after, true
}
