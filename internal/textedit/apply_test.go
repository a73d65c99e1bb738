package textedit

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestApply(t *testing.T) {
	// untouched carries bytes no normalization may touch: trailing spaces,
	// a smart quote, an NBSP, a tab.
	const untouched = "keep “this”  \n\tkeep\u00a0that \n"
	tests := []struct {
		name      string
		old       string
		edits     []Edit
		want      string
		level     Level
		lines     [][2]int // StartLine, EndLine per replacement
		wantCount int
	}{
		{
			name:  "exact single",
			old:   "Hello, world!",
			edits: []Edit{{OldText: "world", NewText: "testing"}},
			want:  "Hello, testing!", level: LevelExact, lines: [][2]int{{1, 1}},
		},
		{
			name:  "multi edit",
			old:   "alpha\nbeta\ngamma\ndelta\n",
			edits: []Edit{{OldText: "alpha", NewText: "ALPHA"}, {OldText: "gamma", NewText: "GAMMA"}},
			want:  "ALPHA\nbeta\nGAMMA\ndelta\n", level: LevelExact, lines: [][2]int{{1, 1}, {3, 3}},
		},
		{
			name:  "edits matched against the original",
			old:   "foo\nbar\nbaz\n",
			edits: []Edit{{OldText: "foo\n", NewText: "foo bar\n"}, {OldText: "bar\n", NewText: "BAR\n"}},
			want:  "foo bar\nBAR\nbaz\n", level: LevelExact, lines: [][2]int{{1, 1}, {2, 2}},
		},
		{
			name:  "edits given out of order",
			old:   "one\ntwo\nthree\n",
			edits: []Edit{{OldText: "three", NewText: "3"}, {OldText: "one", NewText: "1"}},
			want:  "1\ntwo\n3\n", level: LevelExact, lines: [][2]int{{1, 1}, {3, 3}},
		},
		{
			name:  "replaceAll",
			old:   "foo foo\nfoo\n",
			edits: []Edit{{OldText: "foo", NewText: "bar", ReplaceAll: true}},
			want:  "bar bar\nbar\n", level: LevelExact, lines: [][2]int{{1, 1}, {1, 1}, {2, 2}},
		},
		{
			name:  "replaceAll takes non-overlapping occurrences",
			old:   "aaaa",
			edits: []Edit{{OldText: "aa", NewText: "b", ReplaceAll: true}},
			want:  "bb", level: LevelExact, lines: [][2]int{{1, 1}, {1, 1}},
		},
		{
			name:  "CRLF file keeps CRLF for LF newText",
			old:   "a\r\nb\r\nc\r\n",
			edits: []Edit{{OldText: "b\r\n", NewText: "B1\nB2\n"}},
			want:  "a\r\nB1\r\nB2\r\nc\r\n", level: LevelExact, lines: [][2]int{{2, 2}},
		},
		{
			name:  "CRLF file, LF oldText and newText",
			old:   "a\r\nb\r\nc\r\n",
			edits: []Edit{{OldText: "a\nb\n", NewText: "x\ny\n"}},
			want:  "x\r\ny\r\nc\r\n", level: LevelLineEndings, lines: [][2]int{{1, 2}},
		},
		{
			name:  "BOM and CRLF kept",
			old:   "\ufeffone\r\ntwo\r\n",
			edits: []Edit{{OldText: "one\ntwo", NewText: "1\n2"}},
			want:  "\ufeff1\r\n2\r\n", level: LevelLineEndings, lines: [][2]int{{1, 2}},
		},
		{
			name:  "BOM in oldText and newText ignored",
			old:   "\ufeffone\ntwo\n",
			edits: []Edit{{OldText: "\ufeffone", NewText: "\ufeffONE"}},
			want:  "\ufeffONE\ntwo\n", level: LevelExact, lines: [][2]int{{1, 1}},
		},
		{
			name:  "LF file, CRLF newText",
			old:   "a\nb\n",
			edits: []Edit{{OldText: "b", NewText: "b\r\nc"}},
			want:  "a\nb\nc\n", level: LevelExact, lines: [][2]int{{2, 2}},
		},
		{
			name:  "missing final newline stays missing",
			old:   "a\nb",
			edits: []Edit{{OldText: "b", NewText: "c\n"}},
			want:  "a\nc", level: LevelExact, lines: [][2]int{{2, 2}},
		},
		{
			name:  "final newline stays",
			old:   "a\nb\n",
			edits: []Edit{{OldText: "b\n", NewText: "c"}},
			want:  "a\nc\n", level: LevelExact, lines: [][2]int{{2, 2}},
		},
		{
			name:  "deleting lines",
			old:   "a\nb\nc\n",
			edits: []Edit{{OldText: "b\n", NewText: ""}},
			want:  "a\nc\n", level: LevelExact, lines: [][2]int{{2, 2}},
		},
		{
			name:  "trailing whitespace drift",
			old:   untouched + "func f() {   \n\treturn 1\t\n}\n" + untouched,
			edits: []Edit{{OldText: "func f() {\n\treturn 1\n}", NewText: "func f() {\n\treturn 2\n}"}},
			want:  untouched + "func f() {\n\treturn 2\n}\n" + untouched,
			level: LevelTrailingWhitespace, lines: [][2]int{{3, 5}},
		},
		{
			name:  "oldText with trailing spaces the file lacks",
			old:   "x := 1\nfoo\nfoobar\n",
			edits: []Edit{{OldText: "foo  ", NewText: "baz"}},
			want:  "x := 1\nbaz\nfoobar\n", level: LevelTrailingWhitespace, lines: [][2]int{{2, 2}},
		},
		{
			name:  "smart quotes",
			old:   untouched + "msg := “hello” // it’s\n" + untouched,
			edits: []Edit{{OldText: `msg := "hello" // it's`, NewText: `msg := "bye"`}},
			want:  untouched + "msg := \"bye\"\n" + untouched,
			level: LevelUnicode, lines: [][2]int{{3, 3}},
		},
		{
			name:  "en and em dashes",
			old:   untouched + "range 1–5 — inclusive\n" + untouched,
			edits: []Edit{{OldText: "range 1-5 - inclusive", NewText: "range 1-6"}},
			want:  untouched + "range 1-6\n" + untouched,
			level: LevelUnicode, lines: [][2]int{{3, 3}},
		},
		{
			name:  "NBSP inside a line, rest of the line kept",
			old:   untouched + "a\u00a0b = c  \n" + untouched,
			edits: []Edit{{OldText: "a b", NewText: "ab"}},
			want:  untouched + "ab = c  \n" + untouched,
			level: LevelUnicode, lines: [][2]int{{3, 3}},
		},
		{
			name:  "full-width forms",
			old:   untouched + "ｆｏｏ（１）\n" + untouched,
			edits: []Edit{{OldText: "foo(1)", NewText: "foo(2)"}},
			want:  untouched + "foo(2)\n" + untouched,
			level: LevelUnicode, lines: [][2]int{{3, 3}},
		},
		{
			name:  "decomposed accent matches precomposed",
			old:   "café\n",
			edits: []Edit{{OldText: "cafe\u0301", NewText: "tea"}},
			want:  "tea\n", level: LevelUnicode, lines: [][2]int{{1, 1}},
		},
		{
			name: "indentation drift, spaces to tabs",
			old:  untouched + "func f() {\n\tif x {\n\t\ty()\n\t}\n}\n" + untouched,
			edits: []Edit{{
				OldText: "if x {\n    y()\n}\n",
				NewText: "if x {\n    y()\n    z()\n}\nw()\n",
			}},
			want:  untouched + "func f() {\n\tif x {\n\t\ty()\n\t\tz()\n\t}\n\tw()\n}\n" + untouched,
			level: LevelIndentation, lines: [][2]int{{4, 6}},
		},
		{
			name: "indentation drift, shallower spaces",
			old:  "class A:\n        def f(self):\n            return 1\n",
			edits: []Edit{{
				OldText: "    def f(self):\n        return 1",
				NewText: "    def f(self):\n        return 2\n\n    def g(self):\n        pass",
			}},
			want:  "class A:\n        def f(self):\n            return 2\n\n        def g(self):\n            pass\n",
			level: LevelIndentation, lines: [][2]int{{2, 3}},
		},
		{
			name: "indentation with a dedent below the first line",
			old:  "\t\tcase 1:\n\t\t\tx()\n",
			edits: []Edit{{
				OldText: "  case 1:\n    x()\n",
				NewText: "  case 1:\n    x()\ndone()\n",
			}},
			want:  "\t\tcase 1:\n\t\t\tx()\n\tdone()\n",
			level: LevelIndentation, lines: [][2]int{{1, 2}},
		},
		{
			name:  "loosest level reported",
			old:   "a“b”\nc  \n",
			edits: []Edit{{OldText: "c \n", NewText: "C\n"}, {OldText: `a"b"`, NewText: "ab"}},
			want:  "ab\nC\n", level: LevelUnicode, lines: [][2]int{{1, 1}, {2, 2}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Apply([]byte(tc.old), tc.edits)
			if err != nil {
				t.Fatalf("Apply: %v", err)
			}
			if string(res.New) != tc.want {
				t.Errorf("New =\n%q\nwant\n%q", res.New, tc.want)
			}
			if res.Level != tc.level {
				t.Errorf("Level = %q, want %q", res.Level, tc.level)
			}
			if res.Count != len(tc.lines) || len(res.Replacements) != len(tc.lines) {
				t.Fatalf("Count = %d, replacements %+v, want %d", res.Count, res.Replacements, len(tc.lines))
			}
			for i, r := range res.Replacements {
				if r.StartLine != tc.lines[i][0] || r.EndLine != tc.lines[i][1] {
					t.Errorf("replacement %d lines %d-%d, want %d-%d", i, r.StartLine, r.EndLine, tc.lines[i][0], tc.lines[i][1])
				}
			}
		})
	}
}

func TestApplyErrors(t *testing.T) {
	tests := []struct {
		name    string
		old     string
		edits   []Edit
		kind    string
		index   int
		message string   // exact, when set
		parts   []string // substrings, in order
	}{
		{
			name:    "ambiguous names occurrences and lines",
			old:     "foo foo foo",
			edits:   []Edit{{OldText: "foo", NewText: "bar"}},
			kind:    KindAmbiguous,
			message: "oldText of edit 1 matches 3 times (all on line 1); add context or set replaceAll: true (surrounding lines in oldText make it unique)",
		},
		{
			name:  "an oldText of only a BOM is empty (it panicked: found by fuzzing)",
			old:   "\ufeffpackage a\n",
			edits: []Edit{{OldText: "\ufeff", NewText: "x"}},
			kind:  KindEmpty,
			parts: []string{"oldText of edit 1 is empty"},
		},
		{
			name:  "a line holding several occurrences is listed once, with its count",
			old:   "x x\ny\nx\n",
			edits: []Edit{{OldText: "x", NewText: "z"}},
			kind:  KindAmbiguous,
			parts: []string{"matches 3 times (lines 1 (2 times), 3)"},
		},
		{
			name:    "ambiguous across lines",
			old:     "a\nfoo\ny\nfoo\n",
			edits:   []Edit{{OldText: "a", NewText: "b"}, {OldText: "foo", NewText: "bar"}},
			kind:    KindAmbiguous,
			index:   1,
			message: "oldText of edit 2 matches 2 times (lines 2, 4); add context or set replaceAll: true (surrounding lines in oldText make it unique)",
		},
		{
			name:    "ambiguous at a fuzzy level",
			old:     "a  \nb\na\t\nb\n",
			edits:   []Edit{{OldText: "a \nb", NewText: "c"}},
			kind:    KindAmbiguous,
			message: "oldText of edit 1 matches 2 times when trailing whitespace is ignored (lines 1, 3); add context or set replaceAll: true (surrounding lines in oldText make it unique)",
		},
		{
			name:    "overlap names both edits",
			old:     "one two three\n",
			edits:   []Edit{{OldText: "one two", NewText: "1 2"}, {OldText: "two three", NewText: "2 3"}},
			kind:    KindOverlap,
			index:   1,
			message: "edits 1 and 2 overlap (both on line 1 of the original file); every edit is matched against the original file, so each must change a separate region: merge them into one edit",
		},
		{
			name:  "one of two edits missing, no partial result",
			old:   "alpha\nbeta\n",
			edits: []Edit{{OldText: "alpha", NewText: "ALPHA"}, {OldText: "gamma", NewText: "GAMMA"}},
			kind:  KindNotFound,
			index: 1,
			parts: []string{"oldText of edit 2 not found"},
		},
		{
			name:  "not found shows the closest region with visible whitespace",
			old:   "package p\n\nfunc f() {\r\n\treturn  1\n}\n",
			edits: []Edit{{OldText: "func f() {\n    return 2\n}", NewText: "x"}},
			kind:  KindNotFound,
			message: "oldText of edit 1 not found. The closest region is lines 3-5 (· space, → tab, ␍ carriage return, ⍽ other invisible space):\n" +
				"3│func·f()·{␍\n4│→return··1\n5│}\n" +
				"Read the file again and copy oldText exactly from it (whitespace and line endings count).",
		},
		{
			name:  "not found by similarity",
			old:   "a\nfunction handleRequest(req)\nb\n",
			edits: []Edit{{OldText: "function handleRequests(request)", NewText: "x"}},
			kind:  KindNotFound,
			parts: []string{"The closest region is line 2 (", "\n2│function·handleRequest(req)\n"},
		},
		{
			name:    "not found and nothing similar",
			old:     "abc\n",
			edits:   []Edit{{OldText: "zzzz", NewText: "x"}},
			kind:    KindNotFound,
			message: "oldText of edit 1 not found; no similar region either. Read the file again and copy oldText exactly from it (whitespace and line endings count).",
		},
		{
			name:    "identical result",
			old:     "a\nb\n",
			edits:   []Edit{{OldText: "a", NewText: "a"}},
			kind:    KindNoChange,
			index:   -1,
			message: "no change: the edits leave the file identical",
		},
		{
			name:    "empty oldText",
			old:     "a\n",
			edits:   []Edit{{OldText: "", NewText: "a"}},
			kind:    KindEmpty,
			message: "oldText of edit 1 is empty; oldText must be text copied from the file (use write to create or replace a whole file)",
		},
		{
			name:  "no edits",
			old:   "a\n",
			kind:  KindEmpty,
			index: -1,
			parts: []string{"no edits given"},
		},
		{
			name:  "whitespace-only oldText does not match everywhere",
			old:   "a\nb\n",
			edits: []Edit{{OldText: "   ", NewText: "x"}},
			kind:  KindNotFound,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Apply([]byte(tc.old), tc.edits)
			var me *MatchError
			if !errors.As(err, &me) {
				t.Fatalf("err = %v (result %q), want *MatchError", err, res.New)
			}
			if res.New != nil {
				t.Errorf("partial result %q returned with the error", res.New)
			}
			if me.Kind != tc.kind || me.EditIndex != tc.index {
				t.Errorf("Kind, EditIndex = %q, %d; want %q, %d", me.Kind, me.EditIndex, tc.kind, tc.index)
			}
			if tc.message != "" && me.Error() != tc.message {
				t.Errorf("Message =\n%s\nwant\n%s", me.Error(), tc.message)
			}
			rest := me.Error()
			for _, p := range tc.parts {
				i := strings.Index(rest, p)
				if i < 0 {
					t.Fatalf("Message %q lacks %q", me.Error(), p)
				}
				rest = rest[i+len(p):]
			}
		})
	}
}

func TestMessageIn(t *testing.T) {
	_, err := Apply([]byte("abc\n"), []Edit{{OldText: "zzzz"}})
	var me *MatchError
	if !errors.As(err, &me) {
		t.Fatal(err)
	}
	if got, want := me.MessageIn("src/a.go", ""), "oldText of edit 1 not found in src/a.go;"; !strings.HasPrefix(got, want) {
		t.Errorf("MessageIn = %q, want prefix %q", got, want)
	}
}

// TestMessageInNamesToolsAsTheClientSeesThem: a message that sends the
// model to write names it with the host's prefix; text quoted from the
// file keeps a "{{write}}" it holds.
func TestMessageInNamesToolsAsTheClientSeesThem(t *testing.T) {
	for _, tc := range []struct {
		name, old, oldText, want string
	}{
		{"empty oldText", "a\n", "", "(use agentls_write to create or replace a whole file)"},
		{"empty file", "", "a", "the file is empty (use agentls_write to give it content)."},
		{"quoted file text", "x := \"{{write}}\"\n", "x := \"{{wrote}}\"", `x·:=·"{{write}}"`},
	} {
		_, err := Apply([]byte(tc.old), []Edit{{OldText: tc.oldText, NewText: "b"}})
		var me *MatchError
		if !errors.As(err, &me) {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got := me.MessageIn("a.txt", "agentls_"); !strings.Contains(got, tc.want) {
			t.Errorf("%s: MessageIn = %q, want it to hold %q", tc.name, got, tc.want)
		}
		if got := me.Error(); strings.Contains(got, "agentls_") || strings.Contains(got, "{{write}} to") {
			t.Errorf("%s: Error() = %q, want bare tool names", tc.name, got)
		}
	}
}

func TestAmbiguousListIsCapped(t *testing.T) {
	old := strings.Repeat("x\n", MaxListedOccurrences+5)
	_, err := Apply([]byte(old), []Edit{{OldText: "x", NewText: "y"}})
	var me *MatchError
	if !errors.As(err, &me) || me.Kind != KindAmbiguous {
		t.Fatalf("err = %v", err)
	}
	if !strings.Contains(me.Message, "matches 25 times (lines 1, 2, 3,") || !strings.Contains(me.Message, ", 20, …)") {
		t.Errorf("Message = %q", me.Message)
	}
}

func FuzzApply(f *testing.F) {
	f.Add("foo\nbar  \nbaz\n", "bar\n", "BAR\n", false)
	f.Add("\ufeffa\r\nb\r\n", "a\nb", "x", false)
	f.Add("a “b” c\n", `"b"`, "d", true)
	f.Add("\tif x {\n\t\ty()\n\t}\n", "if x {\n  y()\n}", "if z {\n  w()\n}", false)
	f.Fuzz(func(t *testing.T, old, oldText, newText string, all bool) {
		res, err := Apply([]byte(old), []Edit{{OldText: oldText, NewText: newText, ReplaceAll: all}})
		if err != nil {
			var me *MatchError
			if !errors.As(err, &me) || me.Message == "" {
				t.Fatalf("error %v is not a *MatchError with a message", err)
			}
			return
		}
		if len(res.Replacements) == 0 || res.Count != len(res.Replacements) {
			t.Fatalf("result without replacements: %+v", res)
		}
		// Everything before the first replaced line is untouched.
		body := strings.TrimPrefix(old, "\ufeff")
		keep := len(old) - len(body)
		for range res.Replacements[0].StartLine - 1 {
			keep += strings.IndexByte(old[keep:], '\n') + 1
		}
		if !strings.HasPrefix(string(res.New), old[:keep]) {
			t.Fatalf("bytes before line %d changed: %q -> %q", res.Replacements[0].StartLine, old, res.New)
		}
		if strings.HasSuffix(body, "\n") != strings.HasSuffix(string(res.New), "\n") && len(res.New) > keep {
			t.Fatalf("final newline not preserved: %q -> %q", old, res.New)
		}
		if got, err := ApplyTextEdits([]byte(old), TextEdits([]byte(old), res.New)); err != nil || string(got) != string(res.New) {
			t.Fatalf("TextEdits round trip: %q, %v", got, err)
		}
	})
}

// The result names where each change sits in the new file, which is what
// the model reads next.
func TestReplacementNewLines(t *testing.T) {
	old := ""
	for i := 1; i <= 40; i++ {
		old += fmt.Sprintf("line %d\n", i)
	}
	cases := []struct {
		name  string
		edits []Edit
		want  [][4]int // old start, old end, new start, new end
	}{
		{"one line grows to three, a later line shifts", []Edit{
			{OldText: "line 2\n", NewText: "two\ntwo and a half\nthree-ish\n"},
			{OldText: "line 40", NewText: "forty"},
		}, [][4]int{{2, 2, 2, 4}, {40, 40, 42, 42}}},
		{"three lines shrink to one", []Edit{
			{OldText: "line 12\nline 13\nline 14\n", NewText: "twelve to fourteen\n"},
			{OldText: "line 20", NewText: "twenty"},
		}, [][4]int{{12, 14, 12, 12}, {20, 20, 18, 18}}},
		{"a deletion", []Edit{{OldText: "line 5\n", NewText: ""}}, [][4]int{{5, 5, 5, 5}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Apply([]byte(old), tc.edits)
			if err != nil {
				t.Fatal(err)
			}
			var got [][4]int
			for _, r := range res.Replacements {
				got = append(got, [4]int{r.StartLine, r.EndLine, r.NewStartLine, r.NewEndLine})
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Fatalf("lines = %v, want %v", got, tc.want)
			}
		})
	}
}
