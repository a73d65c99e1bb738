package textedit

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// auditLineStart is the byte offset where 1-based line n of s starts ("\n"
// ends a line, as Apply counts), or len(s) past the end.
func auditLineStart(s []byte, n int) int {
	at := 0
	for range n - 1 {
		i := bytes.IndexByte(s[at:], '\n')
		if i < 0 {
			return len(s)
		}
		at += i + 1
	}
	return at
}

func auditLines(s []byte) int { return bytes.Count(s, []byte("\n")) + 1 }

// FuzzApplyTwoEdits extends FuzzApply to two edits at once: an error is a
// *MatchError naming an edit in range; a success changes the file, gives
// every unique edit exactly one replacement, reports sorted line ranges
// inside both files, leaves every byte before the first and after the last
// replaced line as it was, keeps the BOM, and round-trips through
// TextEdits.
func FuzzApplyTwoEdits(f *testing.F) {
	f.Add("a\nb\nc\nd\n", "b", "B", false, "d\n", "D\n", false)
	f.Add("\ufeffx\r\ny\r\nx\r\n", "x", "z\nz", true, "y", "", false)
	f.Add("  if a {\n    b()\n  }\nc “q”\n", "if a {\n  b()\n}", "if b {\n  a()\n}", false, `c "q"`, "c", false)
	f.Add("aaa", "aa", "b", true, "a", "c", false)
	f.Fuzz(func(t *testing.T, old, o1, n1 string, all1 bool, o2, n2 string, all2 bool) {
		edits := []Edit{{OldText: o1, NewText: n1, ReplaceAll: all1}, {OldText: o2, NewText: n2, ReplaceAll: all2}}
		res, err := Apply([]byte(old), edits)
		if err != nil {
			var me *MatchError
			if !errors.As(err, &me) || me.Message == "" {
				t.Fatalf("error %v is not a *MatchError with a message", err)
			}
			if me.EditIndex < -1 || me.EditIndex >= len(edits) {
				t.Fatalf("EditIndex %d out of range: %v", me.EditIndex, me)
			}
			switch me.Kind {
			case KindNotFound, KindAmbiguous, KindOverlap, KindNoChange, KindEmpty:
			default:
				t.Fatalf("unknown kind %q", me.Kind)
			}
			return
		}
		if bytes.Equal(res.New, []byte(old)) {
			t.Fatalf("success without change: %q", old)
		}
		if res.Count != len(res.Replacements) || res.Count == 0 {
			t.Fatalf("Count %d, %d replacements", res.Count, len(res.Replacements))
		}
		per := make([]int, len(edits))
		body := []byte(strings.TrimPrefix(old, bom))
		oldLines, newLines := auditLines(body), auditLines(res.New)
		for i, r := range res.Replacements {
			per[r.EditIndex]++
			if r.StartLine < 1 || r.EndLine < r.StartLine || r.EndLine > oldLines {
				t.Fatalf("replacement %d: old lines %d-%d of %d", i, r.StartLine, r.EndLine, oldLines)
			}
			if r.NewStartLine < 1 || r.NewEndLine < r.NewStartLine || r.NewEndLine > newLines {
				t.Fatalf("replacement %d: new lines %d-%d of %d (%q -> %q)", i, r.NewStartLine, r.NewEndLine, newLines, old, res.New)
			}
			if i > 0 && r.StartLine < res.Replacements[i-1].StartLine {
				t.Fatalf("replacements not sorted: %+v", res.Replacements)
			}
			if levelRank(r.Level) < 0 || levelRank(r.Level) > levelRank(res.Level) {
				t.Fatalf("replacement level %q, result level %q", r.Level, res.Level)
			}
		}
		for i, e := range edits {
			if per[i] == 0 || !e.ReplaceAll && per[i] != 1 {
				t.Fatalf("edit %d (replaceAll=%v) made %d replacements", i+1, e.ReplaceAll, per[i])
			}
		}
		if strings.HasPrefix(old, bom) && !bytes.HasPrefix(res.New, []byte(bom)) {
			t.Fatalf("BOM lost: %q -> %q", old, res.New)
		}
		// Bytes outside the replaced lines are untouched.
		bomLen := len(old) - len(body)
		first, last := res.Replacements[0], res.Replacements[len(res.Replacements)-1]
		for _, r := range res.Replacements {
			if r.EndLine > last.EndLine {
				last = r
			}
		}
		head := old[:bomLen+auditLineStart(body, first.StartLine)]
		if !bytes.HasPrefix(res.New, []byte(head)) {
			t.Fatalf("bytes before line %d changed: %q -> %q", first.StartLine, old, res.New)
		}
		tail := body[auditLineStart(body, last.EndLine+1):]
		if !bytes.HasSuffix(res.New, tail) || len(res.New)-len(tail) < len(head) {
			t.Fatalf("bytes after line %d changed: %q -> %q (edits %+v)", last.EndLine, old, res.New, edits)
		}
		if got, err := ApplyTextEdits([]byte(old), TextEdits([]byte(old), res.New)); err != nil || !bytes.Equal(got, res.New) {
			t.Fatalf("TextEdits round trip: %q, %v", got, err)
		}
	})
}

// FuzzApplyTextEditsAny applies edits with arbitrary positions: no panic,
// an error or a result, and an insertion at the start of the text is
// exactly a prefix.
func FuzzApplyTextEditsAny(f *testing.F) {
	f.Add("a\r\nb\rc\n😀x", 0, 0, 1, 1, "X", 2, 1, 2, 9)
	f.Add("", 0, 0, 0, 0, "", -1, 0, 0, 0)
	f.Fuzz(func(t *testing.T, old string, l1, c1, l2, c2 int, text string, l3, c3, l4, c4 int) {
		edits := []TextEdit{
			{Range: Range{Position{l1, c1}, Position{l2, c2}}, NewText: text},
			{Range: Range{Position{l3, c3}, Position{l4, c4}}},
		}
		got, err := ApplyTextEdits([]byte(old), edits)
		if err == nil && len(got) > len(old)+len(text) {
			t.Fatalf("result longer than old plus the inserted text: %q", got)
		}
		got, err = ApplyTextEdits([]byte(old), []TextEdit{{NewText: text}})
		if err != nil || string(got) != text+old {
			t.Fatalf("insert at 0:0 = %q, %v", got, err)
		}
	})
}
