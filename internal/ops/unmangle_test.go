package ops

import (
	"strings"
	"testing"
)

// A name that is not UTF-8 reaches the model with U+FFFD in it; the path
// the model sends back finds the file again.
func TestResolveNamesShownWithReplacementCharacters(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{
		"caf\xe9.txt":      "latin1 name",
		"d\xff\xfe/in.txt": "two bad bytes",
		"twin\xe9.txt":     "one",
		"twin\xe8.txt":     "two",
		"ok\uFFFDreal.txt": "a real U+FFFD",
	})
	l, err := NewLocal([]FolderSpec{{Path: root}})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	cases := []struct {
		input, wantRel string // "" = refused
	}{
		{"caf\uFFFD.txt", "caf\xe9.txt"},
		{"d\uFFFD\uFFFD/in.txt", "d\xff\xfe/in.txt"}, // one U+FFFD per byte, as encoding/json writes
		{"d\uFFFD/in.txt", "d\xff\xfe/in.txt"},       // one per run, as strings.ToValidUTF8 writes
		{"ok\uFFFDreal.txt", "ok\uFFFDreal.txt"},     // exists as written
		{"twin\uFFFD.txt", ""},                       // two candidates: no guess
	}
	for _, tc := range cases {
		p, err := l.Resolve(tc.input)
		switch {
		case tc.wantRel == "" && err == nil:
			// Not refused by Resolve itself (a missing file resolves); it
			// must not have picked one of the twins.
			if strings.HasPrefix(p.Rel, "twin") && p.Rel != "twin\uFFFD.txt" {
				t.Errorf("Resolve(%q) guessed %q", tc.input, p.Rel)
			}
		case tc.wantRel != "" && (err != nil || p.Rel != tc.wantRel):
			t.Errorf("Resolve(%q) = %q, %v; want %q", tc.input, p.Rel, err, tc.wantRel)
		}
	}
	if b, err := l.ReadFile(Path{Folder: l.Folders()[0], Rel: "caf\xe9.txt"}); err != nil || string(b) != "latin1 name" {
		t.Fatalf("ReadFile = %q, %v", b, err)
	}
}
