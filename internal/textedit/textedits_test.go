package textedit

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	udiff "github.com/aymanbagabas/go-udiff"
)

// roundTripCases are old/new pairs every change description must reproduce.
var roundTripCases = []struct{ name, old, new string }{
	{"identical", "a\nb\n", "a\nb\n"},
	{"empty to text", "", "a\nb\n"},
	{"text to empty", "a\nb\n", ""},
	{"one word", "Hello, world!", "Hello, testing!"},
	{"CJK multi-line", "第一行\n第二行：旧的\n第三行\n", "第一行\n第二行：新的内容\n新增一行\n第三行\n"},
	{"emoji surrogate pairs", "a😀b😀c\nx😀\n", "a😀B😁c\nx😀😀\n"},
	{"combining marks", "cafe\u0301 noir\nna\u0308ive\n", "cafe\u0301 au lait\nnaive\n"},
	{"CRLF lines", "one\r\ntwo\r\nthree\r\n", "one\r\n2\r\nthree\r\nfour\r\n"},
	{"CRLF to LF", "one\r\ntwo\r\n", "one\ntwo\n"},
	{"lone CR", "a\rb\rc", "a\rB\rc\rd"},
	{"add final newline", "a\nb", "a\nb\n"},
	{"drop final newline", "a\nb\n", "a\nb"},
	{"no final newline, change last line", "a\nb\nc", "a\nb\nC"},
	{"insert at start", "b\nc\n", "a\nb\nc\n"},
	{"far apart hunks", "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n", "one\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\ntwelve\n"},
	{"invalid UTF-8", "a\xff\xfeb\n\xf0\x9f\n", "a\xffXb\n\xf0\x9f\x98\x80\n"},
	{"BOM kept", "\uFEFFhéllo wörld\r\nb\r\n", "\uFEFFhéllo there\r\nb\r\n"},
}

func TestTextEditsRoundTrip(t *testing.T) {
	for _, tc := range roundTripCases {
		t.Run(tc.name, func(t *testing.T) {
			edits := TextEdits([]byte(tc.old), []byte(tc.new))
			got, err := ApplyTextEdits([]byte(tc.old), edits)
			if err != nil {
				t.Fatalf("ApplyTextEdits: %v (edits %+v)", err, edits)
			}
			if string(got) != tc.new {
				t.Errorf("got %q, want %q (edits %+v)", got, tc.new, edits)
			}
			if (tc.old == tc.new) != (len(edits) == 0) {
				t.Errorf("%d edits for old == new: %v", len(edits), tc.old == tc.new)
			}
		})
	}
}

func TestTextEditsRanges(t *testing.T) {
	tests := []struct {
		name     string
		old, new string
		want     []TextEdit
	}{
		{
			// Editors keep the BOM out of the document: positions skip it.
			name: "a UTF-8 BOM is not a character of line 0",
			old:  "\uFEFFhéllo wörld\n", new: "\uFEFFhéllo there\n",
			want: []TextEdit{{Range: Range{Position{0, 6}, Position{0, 11}}, NewText: "there"}},
		},
		{
			name: "emoji counts two UTF-16 units",
			old:  "😀a\n", new: "😀b\n",
			want: []TextEdit{{Range: Range{Position{0, 2}, Position{0, 3}}, NewText: "b"}},
		},
		{
			name: "CJK on a later line",
			old:  "x\n日本語\n", new: "x\n日本人\n",
			want: []TextEdit{{Range: Range{Position{1, 2}, Position{1, 3}}, NewText: "人"}},
		},
		{
			name: "never splits CRLF",
			old:  "a\r\nb\r\n", new: "a\nb\r\n",
			want: []TextEdit{{Range: Range{Position{0, 1}, Position{1, 0}}, NewText: "\n"}},
		},
		{
			name: "lone CR is a line end",
			old:  "a\rb\rc", new: "a\rb\rC",
			want: []TextEdit{{Range: Range{Position{2, 0}, Position{2, 1}}, NewText: "C"}},
		},
		{
			name: "inserted line",
			old:  "a\nc\n", new: "a\nb\nc\n",
			want: []TextEdit{{Range: Range{Position{1, 0}, Position{1, 0}}, NewText: "b\n"}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := TextEdits([]byte(tc.old), []byte(tc.new))
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("TextEdits = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestApplyTextEditsErrors(t *testing.T) {
	tests := []struct {
		name  string
		edits []TextEdit
	}{
		{"line past the end", []TextEdit{{Range: Range{Position{5, 0}, Position{5, 0}}}}},
		{"end before start", []TextEdit{{Range: Range{Position{1, 0}, Position{0, 0}}}}},
		{"overlap", []TextEdit{
			{Range: Range{Position{0, 0}, Position{0, 2}}},
			{Range: Range{Position{0, 1}, Position{0, 3}}},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := ApplyTextEdits([]byte("abc\ndef\n"), tc.edits); err == nil {
				t.Error("no error")
			}
		})
	}
}

func FuzzTextEdits(f *testing.F) {
	for _, tc := range roundTripCases {
		f.Add(tc.old, tc.new)
	}
	f.Fuzz(func(t *testing.T, old, new string) {
		edits := TextEdits([]byte(old), []byte(new))
		got, err := ApplyTextEdits([]byte(old), edits)
		if err != nil {
			t.Fatalf("ApplyTextEdits: %v (edits %+v)", err, edits)
		}
		if string(got) != new {
			t.Fatalf("got %q, want %q (edits %+v)", got, new, edits)
		}
		for i := 1; i < len(edits); i++ {
			a, b := edits[i-1].Range.End, edits[i].Range.Start
			if b.Line < a.Line || b.Line == a.Line && b.Character < a.Character {
				t.Fatalf("edits not in order: %+v", edits)
			}
		}
	})
}

func TestUnifiedDiffText(t *testing.T) {
	got := UnifiedDiff("dir/f.txt", []byte("a\nb\nc\n"), []byte("a\nB\nc"))
	want := "diff --git a/dir/f.txt b/dir/f.txt\n--- a/dir/f.txt\n+++ b/dir/f.txt\n" +
		"@@ -1,3 +1,3 @@\n a\n-b\n-c\n+B\n+c\n\\ No newline at end of file\n"
	if got != want {
		t.Errorf("UnifiedDiff =\n%s\nwant\n%s", got, want)
	}
	if d := UnifiedDiff("f", []byte("x\n"), []byte("x\n")); d != "" {
		t.Errorf("diff of equal texts = %q", d)
	}
	// Line numbers of a hunk deep in a file come from the whole file.
	old := bytes.Repeat([]byte("line\n"), 100)
	newer := append(append(bytes.Clone(old[:5*49]), "changed\n"...), old[5*50:]...)
	if d := UnifiedDiff("f", old, newer); !bytes.Contains([]byte(d), []byte("\n@@ -47,7 +47,7 @@\n")) {
		t.Errorf("hunk header wrong:\n%s", d)
	}
}

// TestUnifiedDiffApplies checks the diff with the real consumers.
func TestUnifiedDiffApplies(t *testing.T) {
	git, gitErr := exec.LookPath("git")
	patch, patchErr := exec.LookPath("patch")
	if gitErr != nil && patchErr != nil {
		t.Skip("neither git nor patch installed")
	}
	for _, tc := range roundTripCases {
		if tc.old == tc.new || tc.name == "lone CR" {
			continue // nothing to apply; git treats a lone CR as part of the line too, but patch(1) differs
		}
		t.Run(tc.name, func(t *testing.T) {
			diff := UnifiedDiff("sub dir/file.txt", []byte(tc.old), []byte(tc.new))
			run := func(tool string, args ...string) {
				dir := t.TempDir()
				if err := os.MkdirAll(filepath.Join(dir, "sub dir"), 0o755); err != nil {
					t.Fatal(err)
				}
				file := filepath.Join(dir, "sub dir", "file.txt")
				if err := os.WriteFile(file, []byte(tc.old), 0o644); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, "p.diff"), []byte(diff), 0o644); err != nil {
					t.Fatal(err)
				}
				cmd := exec.Command(tool, args...)
				cmd.Dir = dir
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Fatalf("%s %v: %v\n%s\ndiff:\n%s", tool, args, err, out, diff)
				}
				got, err := os.ReadFile(file)
				if err != nil {
					t.Fatal(err)
				}
				if string(got) != tc.new {
					t.Errorf("%s produced %q, want %q\ndiff:\n%s", tool, got, tc.new, diff)
				}
			}
			if gitErr == nil {
				run(git, "apply", "p.diff")
			}
			if patchErr == nil {
				run(patch, "-p1", "--quiet", "--binary", "-i", "p.diff")
			}
		})
	}
}

// TestCreationDiffApplies: the diff of a new file creates it, in a
// directory that does not exist yet, with git apply and patch.
func TestCreationDiffApplies(t *testing.T) {
	git, gitErr := exec.LookPath("git")
	patch, patchErr := exec.LookPath("patch")
	if gitErr != nil && patchErr != nil {
		t.Skip("neither git nor patch installed")
	}
	for _, content := range []string{"a\nb\n", "no final newline", "\uFEFFbom\r\ncrlf\r\n", ""} {
		diff := CreationDiff("new dir/f.txt", []byte(content))
		if !strings.Contains(diff, "new file mode 100644\n") {
			t.Errorf("%q: no new file mode:\n%s", content, diff)
		}
		run := func(tool string, args ...string) {
			if tool == patch && content == "" {
				return // patch(1) cannot create an empty file from a hunk-less diff
			}
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "p.diff"), []byte(diff), 0o644); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(tool, args...)
			cmd.Dir = dir
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("%s %v on %q: %v\n%s\ndiff:\n%s", tool, args, content, err, out, diff)
			}
			got, err := os.ReadFile(filepath.Join(dir, "new dir", "f.txt"))
			if err != nil || string(got) != content {
				t.Errorf("%s made %q (%v), want %q\ndiff:\n%s", tool, got, err, content, diff)
			}
		}
		if gitErr == nil {
			run(git, "apply", "p.diff")
		}
		if patchErr == nil {
			run(patch, "-p1", "--quiet", "--binary", "-i", "p.diff")
		}
	}
}

func TestFirstChangedLine(t *testing.T) {
	tests := []struct {
		name     string
		old, new string
		want     int
	}{
		{"equal", "a\nb\n", "a\nb\n", 0},
		{"first line", "a\n", "b\n", 1},
		{"third line mid", "a\nb\ncat\n", "a\nb\ncar\n", 3},
		{"appended line", "a\n", "a\nb\n", 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Compare([]byte(tc.old), []byte(tc.new)).FirstChangedLine(); got != tc.want {
				t.Errorf("FirstChangedLine = %d, want %d", got, tc.want)
			}
		})
	}
}

// Hash is SHA-256 in the notation VS Code's side checks against (the
// extension's unit tests assert the same vectors).
func TestHash(t *testing.T) {
	for in, want := range map[string]string{
		"":    "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
		"abc": "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
		"é":   "sha256:4a99557e4033c3539de2eb65472017cad5f9557f7a0625a09f1c3f6e2ba69c4c",
	} {
		if got := Hash([]byte(in)); got != want {
			t.Errorf("Hash(%q) = %s, want %s", in, got, want)
		}
	}
}

// Lines only added or only removed take a shortcut past the line diff;
// the hunks are the ones the line diff gives.
func TestPureInsertOrDeleteHunks(t *testing.T) {
	for _, c := range []struct{ name, old, new string }{
		{"new file", "", "a\nb\nc\n"},
		{"new file without final newline", "", "a\nb"},
		{"emptied", "a\nb\n", ""},
		{"lines inserted in the middle", "1\n2\n3\n4\n5\n6\n7\n8\n", "1\n2\n3\n4\nx\ny\n5\n6\n7\n8\n"},
		{"lines removed in the middle", "1\n2\n3\n4\nx\ny\n5\n6\n7\n8\n", "1\n2\n3\n4\n5\n6\n7\n8\n"},
		{"lines appended", "1\n2\n", "1\n2\n3\n4\n"},
		{"lines prepended", "3\n4\n", "1\n2\n3\n4\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, got, _ := strings.Cut(UnifiedDiff("f", []byte(c.old), []byte(c.new)), "+++ b/f\n")
			_, want, _ := strings.Cut(udiff.Unified("a/f", "b/f", c.old, c.new), "+++ b/f\n")
			if got != want {
				t.Errorf("hunks:\n%s\nthe line diff's:\n%s", got, want)
			}
			if edits := TextEdits([]byte(c.old), []byte(c.new)); len(edits) != 1 {
				t.Errorf("%d TextEdits, want 1", len(edits))
			}
		})
	}
}
