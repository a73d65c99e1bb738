package e2e

// Contract tests of issue 4 (edit guard, edit, write, inline-diff details),
// written from docs/tools.md, docs/protocol.md, the acceptance list and
// docs/tools.md / docs/protocol.md only. Helpers are prefixed a8e.

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/agentls/agentls/test/harness"
)

const textEditsBOM = "\uFEFF"

// textEditsStart starts agentls on a fresh workspace in acceptEdits mode (edits
// inside the workspace run unasked) with extra initialize params merged in.
func textEditsStart(t *testing.T, extra map[string]any) (*harness.Client, string, context.Context, map[string]any) {
	t.Helper()
	ws := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	t.Cleanup(cancel)
	c := harness.Start(t, harness.Options{Root: ws})
	params := map[string]any{"initializationOptions": map[string]any{"mode": "acceptEdits"}}
	for k, v := range extra {
		params[k] = v
	}
	res := c.Initialize(ctx, params)
	return c, ws, ctx, res
}

func textEditsPut(t *testing.T, ws, name, body string, mode os.FileMode) {
	t.Helper()
	p := filepath.Join(ws, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), mode); err != nil {
		t.Fatal(err)
	}
}

func textEditsDisk(t *testing.T, ws, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(ws, name))
	if err != nil {
		t.Fatalf("reading %s: %v", name, err)
	}
	return string(b)
}

func textEditsRead(t *testing.T, c *harness.Client, ctx context.Context, path string) {
	t.Helper()
	if r := c.CallTool(ctx, "read", map[string]any{"path": path}); r.IsError {
		t.Fatalf("read %s: %s", path, r.Text())
	}
}

// textEditsEdit is one {oldText, newText, replaceAll?}.
type textEditsEdit struct {
	Old, New string
	All      bool
}

func textEditsEditArgs(path string, edits ...textEditsEdit) map[string]any {
	var es []any
	for _, e := range edits {
		m := map[string]any{"oldText": e.Old, "newText": e.New}
		if e.All {
			m["replaceAll"] = true
		}
		es = append(es, m)
	}
	return map[string]any{"path": path, "edits": es}
}

func textEditsDoEdit(t *testing.T, c *harness.Client, ctx context.Context, path string, edits ...textEditsEdit) harness.Result {
	t.Helper()
	return c.CallTool(ctx, "edit", textEditsEditArgs(path, edits...))
}

// textEditsPos converts an LSP position to a byte offset in text. enc is "utf-16"
// or "utf-8". A position inside a CRLF pair or past a line's end is an error
// (a precise server never produces one).
func textEditsPos(text string, line, char int, enc string) (int, error) {
	start := 0
	for l := 0; l < line; l++ {
		i := strings.IndexByte(text[start:], '\n')
		if i < 0 {
			return 0, fmt.Errorf("line %d beyond the text (%d lines)", line, l+1)
		}
		start += i + 1
	}
	end := len(text)
	if i := strings.IndexByte(text[start:], '\n'); i >= 0 {
		end = start + i
		if end > start && text[end-1] == '\r' {
			end--
		}
	}
	off, units := start, 0
	for units < char {
		if off >= end {
			return 0, fmt.Errorf("character %d past the end of line %d (%q)", char, line, text[start:end])
		}
		r, size := utf8.DecodeRuneInString(text[off:])
		switch {
		case enc == "utf-8":
			units += size
		case r >= 0x10000:
			units += 2
		default:
			units++
		}
		off += size
	}
	if units != char {
		return 0, fmt.Errorf("character %d splits a character on line %d", char, line)
	}
	return off, nil
}

// textEditsApplyTextEdits applies LSP TextEdits (ranges in text) and fails on
// overlapping or invalid ranges.
func textEditsApplyTextEdits(text string, raw any, enc string) (string, error) {
	list, ok := raw.([]any)
	if !ok {
		return "", fmt.Errorf("edits is %T, not a list", raw)
	}
	type span struct {
		s, e int
		nt   string
	}
	var spans []span
	for _, it := range list {
		m, _ := it.(map[string]any)
		rg, _ := m["range"].(map[string]any)
		st, _ := rg["start"].(map[string]any)
		en, _ := rg["end"].(map[string]any)
		nt, ok := m["newText"].(string)
		if st == nil || en == nil || !ok {
			return "", fmt.Errorf("malformed TextEdit %v", it)
		}
		s, err := textEditsPos(text, int(st["line"].(float64)), int(st["character"].(float64)), enc)
		if err != nil {
			return "", fmt.Errorf("start: %w", err)
		}
		e, err := textEditsPos(text, int(en["line"].(float64)), int(en["character"].(float64)), enc)
		if err != nil {
			return "", fmt.Errorf("end: %w", err)
		}
		if e < s {
			return "", fmt.Errorf("range end before start in %v", it)
		}
		spans = append(spans, span{s, e, nt})
	}
	sort.SliceStable(spans, func(i, j int) bool { return spans[i].s < spans[j].s })
	var b strings.Builder
	at := 0
	for _, sp := range spans {
		if sp.s < at {
			return "", fmt.Errorf("overlapping TextEdits")
		}
		b.WriteString(text[at:sp.s])
		b.WriteString(sp.nt)
		at = sp.e
	}
	b.WriteString(text[at:])
	return b.String(), nil
}

var textEditsHunkRE = regexp.MustCompile(`^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@`)

// textEditsApplyDiff applies a unified diff of one file to old, checking every
// hunk header's line counts against its body.
func textEditsApplyDiff(old, diff string) (string, error) {
	oldLines := strings.SplitAfter(old, "\n")
	if oldLines[len(oldLines)-1] == "" {
		oldLines = oldLines[:len(oldLines)-1]
	}
	dl := strings.SplitAfter(diff, "\n")
	var out []string
	next := 0 // index into oldLines
	hunks := 0
	for i := 0; i < len(dl); i++ {
		m := textEditsHunkRE.FindStringSubmatch(dl[i])
		if m == nil {
			continue
		}
		hunks++
		num := func(s string, def int) int {
			if s == "" {
				return def
			}
			n, _ := strconv.Atoi(s)
			return n
		}
		oStart, oCount, nCount := num(m[1], 0), num(m[2], 1), num(m[4], 1)
		from := oStart - 1
		if oCount == 0 {
			from = oStart
		}
		if from < next || from > len(oldLines) {
			return "", fmt.Errorf("hunk %q out of order", dl[i])
		}
		out = append(out, oldLines[next:from]...)
		next = from
		gotO, gotN := 0, 0
		var body []string
		var kinds []byte
		for i+1 < len(dl) && dl[i+1] != "" && strings.ContainsRune(" +-\\", rune(dl[i+1][0])) && !textEditsHunkRE.MatchString(dl[i+1]) {
			i++
			l := dl[i]
			if l[0] == '\\' {
				if len(body) == 0 {
					return "", fmt.Errorf("stray no-newline marker")
				}
				body[len(body)-1] = strings.TrimSuffix(body[len(body)-1], "\n")
				continue
			}
			if (l[0] == '-' || l[0] == '+') && (strings.HasPrefix(l, "--- ") || strings.HasPrefix(l, "+++ ")) && gotO == oCount && gotN == nCount {
				i--
				break
			}
			body = append(body, l[1:])
			kinds = append(kinds, l[0])
			switch l[0] {
			case ' ':
				gotO++
				gotN++
			case '-':
				gotO++
			case '+':
				gotN++
			}
			if gotO == oCount && gotN == nCount && (i+1 >= len(dl) || !strings.HasPrefix(dl[i+1], "\\")) {
				break
			}
		}
		if gotO != oCount || gotN != nCount {
			return "", fmt.Errorf("hunk %q: body has %d old / %d new lines", strings.TrimSpace(dl[i]), gotO, gotN)
		}
		for k, l := range body {
			switch kinds[k] {
			case ' ', '-':
				if next >= len(oldLines) || oldLines[next] != l {
					got := "<EOF>"
					if next < len(oldLines) {
						got = oldLines[next]
					}
					return "", fmt.Errorf("hunk line %q does not match old line %d %q", l, next+1, got)
				}
				if kinds[k] == ' ' {
					out = append(out, l)
				}
				next++
			case '+':
				out = append(out, l)
			}
		}
	}
	if hunks == 0 {
		return "", fmt.Errorf("no hunks in %q", diff)
	}
	out = append(out, oldLines[next:]...)
	return strings.Join(out, ""), nil
}

// textEditsCount counts occurrences of sub in s, overlapping ones included.
func textEditsCount(s, sub string) (n int, overlapping bool) {
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

func textEditsHash(s string) string { return fmt.Sprintf("sha256:%x", sha256.Sum256([]byte(s))) }

// textEditsDetailsNote returns the tools/details notification of callID.
func textEditsDetailsNote(c *harness.Client, callID string) (map[string]any, bool) {
	for _, n := range c.Notes("tools/details") {
		var p struct {
			CallID  string         `json:"callId"`
			Tool    string         `json:"tool"`
			Details map[string]any `json:"details"`
		}
		if json.Unmarshal(n.Params, &p) == nil && p.CallID == callID {
			return p.Details, true
		}
	}
	return nil, false
}

// textEditsCheckDetails checks the reply's edit details against the contents
// before (raw bytes, BOM included) and after. TextEdits are in the editor's
// view, where a UTF-8 BOM is not part of the text.
func textEditsCheckDetails(t *testing.T, c *harness.Client, r harness.Result, kind, before, after, enc string) {
	t.Helper()
	d := r.Details
	if d["kind"] != kind {
		t.Errorf("details.kind = %v, want %s", d["kind"], kind)
	}
	if !strings.HasPrefix(fmt.Sprint(d["uri"]), "file:///") {
		t.Errorf("details.uri = %v, want a file URI", d["uri"])
	}
	text := strings.TrimPrefix(before, textEditsBOM)
	got, err := textEditsApplyTextEdits(text, d["edits"], enc)
	if err != nil {
		t.Errorf("TextEdits %v do not apply to %q: %v", d["edits"], text, err)
	} else if strings.HasPrefix(after, textEditsBOM) && strings.HasPrefix(before, textEditsBOM) {
		got = textEditsBOM + got
	}
	if err == nil && got != after {
		t.Errorf("TextEdits applied to the old text give\n%q\nthe file holds\n%q\nedits %v", got, after, d["edits"])
	}
	diff, _ := d["unifiedDiff"].(string)
	if patched, err := textEditsApplyDiff(before, diff); err != nil {
		t.Errorf("unifiedDiff does not apply: %v\n%s", err, diff)
	} else if patched != after {
		t.Errorf("unifiedDiff applied gives %q, file holds %q\n%s", patched, after, diff)
	}
	if d["oldHash"] != textEditsHash(before) || d["newHash"] != textEditsHash(after) {
		t.Errorf("hashes old %v new %v, want %s %s (sha256 of the bytes)", d["oldHash"], d["newHash"], textEditsHash(before), textEditsHash(after))
	}
	fl, _ := d["firstChangedLine"].(float64)
	if fl < 1 {
		t.Errorf("firstChangedLine = %v", d["firstChangedLine"])
	}
	note, ok := textEditsDetailsNote(c, r.CallID)
	if !ok {
		t.Errorf("no tools/details notification for %s before its reply", r.CallID)
		return
	}
	for _, k := range []string{"kind", "uri", "unifiedDiff", "edits", "firstChangedLine", "matchLevel", "oldHash", "newHash"} {
		a, _ := json.Marshal(note[k])
		b, _ := json.Marshal(d[k])
		if string(a) != string(b) {
			t.Errorf("tools/details %s = %s, reply details %s = %s", k, a, k, b)
		}
	}
}

// textEditsGen generates one property case: a file and the edits to make.
type textEditsCase struct {
	name     string
	content  string
	edits    []textEditsEdit
	expected string
}

var textEditsPieces = []string{"a", "bc", "def", "x", "Z9", "é", "ñö", "ß", "Ω", "中", "文字", "日本語", "😀", "🎉", "👍🏽", "𝄞", "\t", " ", "  ", "=", "{", "}", "(", ")", ";", "\"", "é", "ä"}

func textEditsLine(rng *rand.Rand) string {
	var b strings.Builder
	for n := rng.IntN(7); n > 0; n-- {
		b.WriteString(textEditsPieces[rng.IntN(len(textEditsPieces))])
	}
	return b.String()
}

func textEditsNewText(rng *rand.Rand, allowEmpty bool) string {
	var b strings.Builder
	for n := rng.IntN(4); n > 0 || (!allowEmpty && b.Len() == 0); n-- {
		b.WriteString(textEditsPieces[rng.IntN(len(textEditsPieces))])
		if rng.IntN(5) == 0 {
			b.WriteString("\n")
		}
	}
	return b.String()
}

// textEditsGen builds a case or returns false when the random choice is unusable.
func textEditsGen(rng *rand.Rand, i int) (textEditsCase, bool) {
	crlf := rng.IntN(3) == 0
	bom := rng.IntN(5) == 0
	eol := "\n"
	if crlf {
		eol = "\r\n"
	}
	nl := 1 + rng.IntN(10)
	lines := make([]string, nl)
	for k := range lines {
		lines[k] = textEditsLine(rng)
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
		return textEditsCase{}, false
	}
	prefix := ""
	if bom {
		prefix = textEditsBOM
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
		all  bool
		lf   bool // send oldText with LF only (line-endings level)
	}
	var regs []region
	kind := rng.IntN(8)
	name := ""
	switch kind {
	case 0, 1, 2: // random substring
		name = "substring"
		a := cuts[rng.IntN(len(cuts)-1)]
		bIdx := sort.SearchInts(cuts, a) + 1 + rng.IntN(min(12, len(cuts)-sort.SearchInts(cuts, a)-1))
		regs = append(regs, region{s: a, e: cuts[bIdx], nt: textEditsNewText(rng, true)})
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
		regs = append(regs, region{s: s, e: e, nt: strings.ReplaceAll(nt, "\r\n", "\n") + textEditsNewText(rng, false) + "\n"})
	case 5: // first or last line replaced
		name = "firstOrLastLine"
		a := 0
		if rng.IntN(2) == 0 {
			a = nl - 1
		}
		s, e := lineSpan(a, a)
		e = s + len(lines[a])
		regs = append(regs, region{s: s, e: e, nt: textEditsNewText(rng, true)})
	case 6: // two disjoint edits in one call
		name = "twoEdits"
		if len(cuts) < 6 {
			return textEditsCase{}, false
		}
		p := rng.Perm(len(cuts))[:4]
		sort.Ints(p)
		if p[1] == p[2] {
			return textEditsCase{}, false
		}
		regs = append(regs, region{s: cuts[p[0]], e: cuts[p[1]], nt: textEditsNewText(rng, true)}, region{s: cuts[p[2]] + 0, e: cuts[p[3]], nt: textEditsNewText(rng, true)})
		if regs[0].e >= regs[1].s {
			return textEditsCase{}, false
		}
	case 7: // replaceAll of a short piece
		name = "replaceAll"
		piece := textEditsPieces[rng.IntN(len(textEditsPieces))]
		n, ov := textEditsCount(body, piece)
		if n < 2 || ov || strings.TrimSpace(piece) == "" {
			return textEditsCase{}, false
		}
		nt := textEditsNewText(rng, true)
		if conv(nt) == piece {
			return textEditsCase{}, false
		}
		exp, ok := textEditsFinalNewline(body, strings.ReplaceAll(body, piece, conv(nt)), eol)
		if !ok {
			return textEditsCase{}, false
		}
		return textEditsCase{
			name:     fmt.Sprintf("%03d-%s-crlf=%v-bom=%v", i, name, crlf, bom),
			content:  prefix + body,
			edits:    []textEditsEdit{{Old: piece, New: nt, All: true}},
			expected: prefix + exp,
		}, true
	}
	var edits []textEditsEdit
	expected := body
	for k := len(regs) - 1; k >= 0; k-- {
		r := regs[k]
		old := body[r.s:r.e]
		if old == "" || strings.TrimSpace(old) == "" {
			return textEditsCase{}, false
		}
		if n, _ := textEditsCount(body, old); n != 1 {
			return textEditsCase{}, false
		}
		if conv(r.nt) == old {
			return textEditsCase{}, false
		}
		send := old
		if crlf && strings.Contains(old, "\r\n") && rng.IntN(2) == 0 {
			lf := strings.ReplaceAll(old, "\r\n", "\n")
			if n, _ := textEditsCount(body, lf); n == 0 && !strings.HasPrefix(lf, "\n") && !strings.HasSuffix(lf, "\n") {
				send = lf
			}
		}
		edits = append([]textEditsEdit{{Old: send, New: r.nt}}, edits...)
		expected = expected[:r.s] + conv(r.nt) + expected[r.e:]
	}
	expected, ok := textEditsFinalNewline(body, expected, eol)
	if !ok || expected == body {
		return textEditsCase{}, false
	}
	return textEditsCase{
		name:     fmt.Sprintf("%03d-%s-crlf=%v-bom=%v", i, name, crlf, bom),
		content:  prefix + body,
		edits:    edits,
		expected: prefix + expected,
	}, true
}

// textEditsFinalNewline applies the contract's "the final newline is preserved"
// to an edited body: a file that ended with a line break still does, one
// that did not still does not.
func textEditsFinalNewline(before, after, eol string) (string, bool) {
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

// TestEditResultTextEditsProperty: ~200 generated (file, edit) pairs; after
// each edit the file must be what an exact replacement gives, and the
// details' TextEdits (UTF-16) and unified diff must each turn the old
// content into the file on disk byte for byte.
func TestEditResultTextEditsProperty(t *testing.T) {
	slow(t)
	c, ws, ctx, _ := textEditsStart(t, nil)
	rng := rand.New(rand.NewPCG(8, 2024))
	var cases []textEditsCase
	for i := 0; len(cases) < 200 && i < 5000; i++ {
		if tc, ok := textEditsGen(rng, len(cases)); ok {
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
		ok := t.Run(tc.name, func(t *testing.T) {
			name := fmt.Sprintf("p/case%03d.txt", i)
			textEditsPut(t, ws, name, tc.content, 0o644)
			textEditsRead(t, c, ctx, name)
			r := textEditsDoEdit(t, c, ctx, name, tc.edits...)
			if r.IsError {
				t.Fatalf("edit %s of %q failed: %s", fmt.Sprintf("%#v", tc.edits), tc.content, r.Text())
			}
			got := textEditsDisk(t, ws, name)
			if got != tc.expected {
				t.Fatalf("file after edit %#v:\n%q\nwant\n%q", tc.edits, got, tc.expected)
			}
			// Positions in the editor's view: the BOM is not text.
			textEditsCheckDetails(t, c, r, "edit", tc.content, got, "utf-16")
		})
		if !ok {
			failures++
		}
	}
}

// TestEditResultPositionEncoding: LSP 3.17 lets a client offer position
// encodings; a server that does not answer with capabilities.positionEncoding
// means UTF-16. Whatever it declares, the TextEdits must follow it.
func TestEditResultPositionEncoding(t *testing.T) {
	for _, offer := range [][]string{{"utf-8"}, {"utf-8", "utf-16"}, {"utf-32", "utf-16"}} {
		t.Run(strings.Join(offer, ","), func(t *testing.T) {
			c, ws, ctx, res := textEditsStart(t, map[string]any{"capabilities": map[string]any{"general": map[string]any{"positionEncodings": offer}}})
			enc := "utf-16"
			if caps, _ := res["capabilities"].(map[string]any); caps != nil {
				if pe, ok := caps["positionEncoding"].(string); ok {
					enc = pe
				}
			}
			if enc != "utf-16" && enc != "utf-8" {
				t.Fatalf("server declared positionEncoding %q", enc)
			}
			before := "😀 héllo 中文 world\n𝄞 second 👍🏽 line\nthird\n"
			textEditsPut(t, ws, "e.txt", before, 0o644)
			textEditsRead(t, c, ctx, "e.txt")
			r := textEditsDoEdit(t, c, ctx, "e.txt", textEditsEdit{Old: "world\n𝄞 second 👍🏽", New: "mundo 🎉\nzweite"})
			if r.IsError {
				t.Fatal(r.Text())
			}
			after := textEditsDisk(t, ws, "e.txt")
			if want := "😀 héllo 中文 mundo 🎉\nzweite line\nthird\n"; after != want {
				t.Fatalf("file %q, want %q", after, want)
			}
			textEditsCheckDetails(t, c, r, "edit", before, after, enc)
		})
	}
}

// textEditsWaitChange// waits for workspace/externalChange naming name, received after since.
func textEditsWaitChange(c *harness.Client, name string, since time.Time, d time.Duration) (map[string]any, bool) {
	n, ok := c.WaitNote(d, func(n harness.Note) bool {
		return n.Method == "workspace/externalChange" && n.At.After(since) && strings.HasSuffix(textEditsURI(n.Params), "/"+name)
	})
	if !ok {
		return nil, false
	}
	var m map[string]any
	json.Unmarshal(n.Params, &m)
	return m, true
}

func textEditsURI(raw json.RawMessage) string {
	var m struct {
		URI string `json:"uri"`
	}
	json.Unmarshal(raw, &m)
	return m.URI
}

// TestEditResultExternalChanges: a change after the read is refused with a
// message naming it and asking for a re-read, the external content kept;
// a change that leaves the content as read (touch, chmod, a same-content
// atomic save or re-create) is let through ("same content → refresh the
// stamp and go").
func TestEditResultExternalChanges(t *testing.T) {
	slow(t)
	c, ws, ctx, _ := textEditsStart(t, nil)
	const before = "line one\nline two\nline three\n"
	edit := textEditsEdit{Old: "line two", New: "line 2"}
	cases := []struct {
		name    string
		change  func(t *testing.T, p string)
		refused bool
		wantErr []string
		kind    string // externalChange kind expected ("" = not checked)
	}{
		{name: "inPlaceWrite", change: func(t *testing.T, p string) {
			textEditsMust(t, os.WriteFile(p, []byte("line one\nline TWO changed\nline three\n"), 0o644))
		}, refused: true, wantErr: []string{"changed since you read it", "ead it again", "line"}, kind: "changed"},
		{name: "inPlaceSameSizeSameTick", change: func(t *testing.T, p string) {
			st, _ := os.Stat(p)
			textEditsMust(t, os.WriteFile(p, []byte("line one\nline TWO\nline three\n"), 0o644))
			textEditsMust(t, os.Chtimes(p, st.ModTime(), st.ModTime()))
		}, refused: true, wantErr: []string{"changed since you read it", "ead it again"}},
		{name: "atomicSaveNewContent", change: func(t *testing.T, p string) {
			textEditsRenameOver(t, p, "line one\nline two edited elsewhere\nline three\n")
		}, refused: true, wantErr: []string{"changed since you read it", "ead it again"}, kind: "changed"},
		{name: "atomicSaveSameContent", change: func(t *testing.T, p string) { textEditsRenameOver(t, p, before) }},
		{name: "deleteRecreateSame", change: func(t *testing.T, p string) {
			textEditsMust(t, os.Remove(p))
			textEditsMust(t, os.WriteFile(p, []byte(before), 0o644))
		}},
		{name: "deleteRecreateDifferent", change: func(t *testing.T, p string) {
			textEditsMust(t, os.Remove(p))
			textEditsMust(t, os.WriteFile(p, []byte("line one\nline two\nline three\nline four\n"), 0o644))
		}, refused: true, wantErr: []string{"changed since you read it", "ead it again"}},
		{name: "touch", change: func(t *testing.T, p string) {
			future := time.Now().Add(time.Hour)
			textEditsMust(t, os.Chtimes(p, future, future))
		}},
		{name: "chmodExecutable", change: func(t *testing.T, p string) { textEditsMust(t, os.Chmod(p, 0o755)) }},
		{name: "chmodReadOnly", change: func(t *testing.T, p string) { textEditsMust(t, os.Chmod(p, 0o444)) },
			refused: true, wantErr: []string{"chmod u+w"}},
		{name: "deleted", change: func(t *testing.T, p string) { textEditsMust(t, os.Remove(p)) },
			refused: true, kind: "deleted"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			name := "ext/" + tc.name + ".txt"
			p := filepath.Join(ws, name)
			textEditsPut(t, ws, name, before, 0o644)
			textEditsRead(t, c, ctx, name)
			since := time.Now()
			tc.change(t, p)
			var after []byte
			if b, err := os.ReadFile(p); err == nil {
				after = b
			}
			st0, _ := os.Stat(p)
			if tc.name == "atomicSaveSameContent" || tc.name == "touch" {
				// The content is as read: a note, if any, must not call the read stale.
				if note, ok := textEditsWaitChange(c, tc.name+".txt", since, 500*time.Millisecond); ok && note["readStale"] != false {
					t.Errorf("externalChange %v after a change that kept the content, want readStale false", note)
				}
			}
			if tc.kind != "" {
				// A late note about our own put says readStale false: the
				// change under test is the one that makes the read stale.
				n, ok := c.WaitNote(5*time.Second, func(n harness.Note) bool {
					return n.Method == "workspace/externalChange" && n.At.After(since) &&
						strings.HasSuffix(textEditsURI(n.Params), "/"+tc.name+".txt") && bytes.Contains(n.Params, []byte(`"readStale":true`))
				})
				var note map[string]any
				json.Unmarshal(n.Params, &note)
				if !ok {
					t.Errorf("no workspace/externalChange for %s", name)
				} else if note["kind"] != tc.kind || note["readStale"] != true {
					t.Errorf("externalChange %v, want kind %s readStale true", note, tc.kind)
					time.Sleep(200 * time.Millisecond)
					for _, n := range c.Notes("workspace/externalChange") {
						if strings.HasSuffix(textEditsURI(n.Params), "/"+tc.name+".txt") {
							t.Logf("  note at +%v: %s", n.At.Sub(since), n.Params)
						}
					}
				}
			}
			r := textEditsDoEdit(t, c, ctx, name, edit)
			if tc.refused {
				if !r.IsError {
					t.Fatalf("edit after %s succeeded: %q; file %q", tc.name, r.Text(), textEditsDisk(t, ws, name))
				}
				for _, s := range tc.wantErr {
					if !strings.Contains(r.Text(), s) {
						t.Errorf("refusal %q lacks %q", r.Text(), s)
					}
				}
				if after == nil {
					if _, err := os.Stat(p); err == nil {
						t.Errorf("refused edit re-created the deleted file")
					}
					return
				}
				if got := textEditsDisk(t, ws, name); got != string(after) {
					t.Errorf("external change lost: file %q, want %q", got, after)
				}
				if st, _ := os.Stat(p); st.Mode() != st0.Mode() {
					t.Errorf("mode changed %v → %v", st0.Mode(), st.Mode())
				}
				// After a fresh read the edit goes through (unless read-only).
				if tc.name != "chmodReadOnly" && strings.Contains(string(after), "line two\n") {
					textEditsRead(t, c, ctx, name)
					if r := textEditsDoEdit(t, c, ctx, name, edit); r.IsError {
						t.Errorf("edit after re-read: %s", r.Text())
					}
				}
				return
			}
			if r.IsError {
				t.Fatalf("edit after %s refused: %s", tc.name, r.Text())
			}
			if got, want := textEditsDisk(t, ws, name), strings.Replace(before, "line two", "line 2", 1); got != want {
				t.Errorf("file %q, want %q", got, want)
			}
			if st, _ := os.Stat(p); st.Mode() != st0.Mode() {
				t.Errorf("mode %v after edit, was %v", st.Mode(), st0.Mode())
			}
		})
	}
}

func textEditsMust(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// textEditsRenameOver saves p the way vim and VS Code do: a temp file renamed over.
func textEditsRenameOver(t *testing.T, p, body string) {
	t.Helper()
	tmp := filepath.Join(filepath.Dir(p), ".ext-save~")
	textEditsMust(t, os.WriteFile(tmp, []byte(body), 0o644))
	textEditsMust(t, os.Rename(tmp, p))
}

// TestEditResultConcurrency: 50 edits of one file in one batch and as 50
// parallel calls all land; edits of different files in parallel all land;
// no temp file is left behind.
func TestEditResultConcurrency(t *testing.T) {
	slow(t)
	c, ws, ctx, _ := textEditsStart(t, nil)
	const n = 50
	mk := func() (string, string) {
		var b, w strings.Builder
		for i := 0; i < n; i++ {
			fmt.Fprintf(&b, "line %02d — ü😀\n", i)
			fmt.Fprintf(&w, "LINE %02d — ü😀\n", i)
		}
		return b.String(), w.String()
	}
	before, want := mk()
	editOf := func(path string, i int) map[string]any {
		return textEditsEditArgs(path, textEditsEdit{Old: fmt.Sprintf("line %02d", i), New: fmt.Sprintf("LINE %02d", i)})
	}
	t.Run("batch", func(t *testing.T) {
		textEditsPut(t, ws, "batch.txt", before, 0o644)
		textEditsRead(t, c, ctx, "batch.txt")
		var calls []any
		for i := 0; i < n; i++ {
			calls = append(calls, map[string]any{"name": "edit", "arguments": editOf("batch.txt", i)})
		}
		var res struct {
			Results []harness.Result `json:"results"`
		}
		if err := c.Call(ctx, "tools/callBatch", map[string]any{"calls": calls}, &res); err != nil {
			t.Fatal(err)
		}
		if len(res.Results) != n {
			t.Fatalf("%d results", len(res.Results))
		}
		for i, r := range res.Results {
			if r.IsError {
				t.Errorf("batch edit %d: %s", i, r.Text())
			}
		}
		if got := textEditsDisk(t, ws, "batch.txt"); got != want {
			t.Errorf("after the batch:\n%s", got)
		}
	})
	t.Run("parallelCalls", func(t *testing.T) {
		textEditsPut(t, ws, "par.txt", before, 0o644)
		textEditsRead(t, c, ctx, "par.txt")
		var wg sync.WaitGroup
		errs := make([]string, n)
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r, err := c.TryCallTool(ctx, "edit", editOf("par.txt", i))
				if err != nil {
					errs[i] = err.Error()
				} else if r.IsError {
					errs[i] = r.Text()
				}
			}()
		}
		wg.Wait()
		for i, e := range errs {
			if e != "" {
				t.Errorf("parallel edit %d: %s", i, e)
			}
		}
		if got := textEditsDisk(t, ws, "par.txt"); got != want {
			t.Errorf("after 50 parallel edits:\n%s", got)
		}
	})
	t.Run("differentFilesInParallel", func(t *testing.T) {
		const files = 20
		for f := 0; f < files; f++ {
			textEditsPut(t, ws, fmt.Sprintf("many/f%02d.txt", f), before, 0o644)
			textEditsRead(t, c, ctx, fmt.Sprintf("many/f%02d.txt", f))
		}
		var wg sync.WaitGroup
		var mu sync.Mutex
		var errs []string
		for f := 0; f < files; f++ {
			for i := 0; i < 5; i++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					r, err := c.TryCallTool(ctx, "edit", editOf(fmt.Sprintf("many/f%02d.txt", f), i*10))
					if err != nil || r.IsError {
						mu.Lock()
						errs = append(errs, fmt.Sprintf("f%02d/%d: %v %s", f, i, err, r.Text()))
						mu.Unlock()
					}
				}()
			}
		}
		wg.Wait()
		for _, e := range errs {
			t.Error(e)
		}
		for f := 0; f < files; f++ {
			got := textEditsDisk(t, ws, fmt.Sprintf("many/f%02d.txt", f))
			for i := 0; i < 5; i++ {
				if !strings.Contains(got, fmt.Sprintf("LINE %02d", i*10)) {
					t.Errorf("f%02d lost the edit of line %d", f, i*10)
				}
			}
		}
	})
	t.Run("writeRacesExternalWriter", func(t *testing.T) {
		textEditsRaceExternal(t, c, ctx, ws)
	})
	// No temp files anywhere in the workspace.
	filepath.WalkDir(ws, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			base := d.Name()
			if !strings.HasSuffix(base, ".txt") {
				t.Errorf("stray file left behind: %s", p)
			}
		}
		return nil
	})
}

// textEditsRaceExternal: the model reads and rewrites race.txt while an external
// writer keeps saving it atomically with numbered contents. Every state of
// the file is whole, and a model write based on version k never replaces a
// version > k that appeared after its read (no lost update).
func textEditsRaceExternal(t *testing.T, c *harness.Client, ctx context.Context, ws string) {
	p := filepath.Join(ws, "race", "race.txt")
	ext := func(k int) string { return fmt.Sprintf("external %04d\n%s", k, strings.Repeat("payload line\n", 200)) }
	textEditsPut(t, ws, "race/race.txt", ext(0), 0o644)
	valid := regexp.MustCompile(`^(external (\d{4})\n(payload line\n){200}|model based on (\d{4}) try (\d+)\n(model line\n){300})$`)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var extMu sync.Mutex
	lastExt := 0
	var torn []string
	wg.Add(2)
	go func() { // external writer: atomic saves through its own temp name
		defer wg.Done()
		for k := 1; k <= 400; k++ {
			select {
			case <-stop:
				return
			default:
			}
			tmp := filepath.Join(ws, "race", ".ext.tmp.txt")
			if os.WriteFile(tmp, []byte(ext(k)), 0o644) == nil && os.Rename(tmp, p) == nil {
				extMu.Lock()
				lastExt = k
				extMu.Unlock()
			}
			time.Sleep(2 * time.Millisecond)
		}
	}()
	go func() { // reader: every state of the file is whole
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			if b, err := os.ReadFile(p); err == nil && !valid.Match(b) {
				extMu.Lock()
				torn = append(torn, fmt.Sprintf("%.60q… (%d bytes)", b, len(b)))
				extMu.Unlock()
			}
		}
	}()
	wrote := 0
	deadline := time.Now().Add(2 * time.Second)
	for try := 0; time.Now().Before(deadline); try++ {
		r := c.CallTool(ctx, "read", map[string]any{"path": "race/race.txt", "limit": 1})
		m := regexp.MustCompile(`(external|based on) (\d{4})`).FindStringSubmatch(r.Text())
		if r.IsError || m == nil {
			continue
		}
		body := fmt.Sprintf("model based on %s try %d\n%s", m[2], try, strings.Repeat("model line\n", 300))
		w := c.CallTool(ctx, "write", map[string]any{"path": "race/race.txt", "content": body})
		if w.IsError {
			continue
		}
		wrote++
	}
	close(stop)
	wg.Wait()
	for _, s := range torn {
		t.Errorf("torn file state: %s", s)
	}
	final := textEditsDisk(t, ws, "race/race.txt")
	if m := valid.FindStringSubmatch(final); m == nil {
		t.Errorf("final file not whole: %.80q", final)
	} else if m[4] != "" {
		k, _ := strconv.Atoi(m[4])
		if k < lastExt {
			// The model's content is last although external version
			// lastExt > k was saved after the model's read of k.
			t.Errorf("lost update: final file is the model's write based on version %d, external version %d was saved after that read", k, lastExt)
		}
	}
	entries, _ := os.ReadDir(filepath.Join(ws, "race"))
	for _, e := range entries {
		if e.Name() != "race.txt" && e.Name() != ".ext.tmp.txt" {
			t.Errorf("temp file left: %s", e.Name())
		}
	}
	t.Logf("model writes that went through: %d, external saves: %d", wrote, lastExt)
}

// A 5 MB write and an edit of the file it made are exact. (Content this
// large cannot go through `agentls call`'s command line; the other write
// behaviour is pinned by the scripts in cmd/agentls/testdata/script/write.)
func TestEditResultLargeWriteAndEdit(t *testing.T) {
	slow(t)
	c, ws, ctx, _ := textEditsStart(t, nil)
	line := "0123456789 abcdefghij ü 😀 klmnopqrstuvwxyz\n"
	body := strings.Repeat(line, 5<<20/len(line)) + "the end\n"
	t0 := time.Now()
	r := c.CallTool(ctx, "write", map[string]any{"path": "big/large.txt", "content": body})
	t.Logf("5 MB write: %v", time.Since(t0))
	if r.IsError {
		t.Fatal(r.Text())
	}
	if got := textEditsDisk(t, ws, "big/large.txt"); got != body {
		t.Fatalf("large file differs: %d bytes, want %d", len(got), len(body))
	}
	t0 = time.Now()
	r = textEditsDoEdit(t, c, ctx, "big/large.txt", textEditsEdit{Old: "the end", New: "THE END"})
	t.Logf("one edit of the 5 MB file: %v", time.Since(t0))
	if r.IsError {
		t.Fatal(r.Text())
	}
	if got := textEditsDisk(t, ws, "big/large.txt"); got != strings.Replace(body, "the end", "THE END", 1) {
		t.Fatalf("edit of the large file went wrong")
	}
}
