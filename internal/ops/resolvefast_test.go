package ops

import (
	"os"
	"path/filepath"
	"testing"
)

// TestRealBelowRoot pins the shortcut Resolve takes: only a path whose every
// component below the root exists and is no symlink skips the full walk, and
// for each such path the full walk would have returned the path unchanged.
func TestRealBelowRoot(t *testing.T) {
	if !lexicalRealRoot {
		t.Skip("the shortcut is off on this OS")
	}
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(base, "ws")
	for _, d := range []string{"ws/d/e", "outside"} {
		if err := os.MkdirAll(filepath.Join(base, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"ws/f.txt", "ws/d/e/g.txt", "outside/s.txt"} {
		if err := os.WriteFile(filepath.Join(base, f), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{
		"ws/ln": "f.txt", "ws/dl": "d", "ws/out": filepath.Join(base, "outside"),
		"ws/d/up": "..", "ws/loop": "loop",
	} {
		if err := os.Symlink(target, filepath.Join(base, link)); err != nil {
			t.Fatal(err)
		}
	}
	folders := []*Folder{{Root: root}, {Root: filepath.Join(base, "outside"), ReadOnly: true}}

	tests := []struct {
		name, abs string
		fast      bool
	}{
		{"root itself", root, true},
		{"file", root + "/f.txt", true},
		{"nested file", root + "/d/e/g.txt", true},
		{"directory", root + "/d/e", true},
		{"second folder", base + "/outside/s.txt", true},
		{"final symlink", root + "/ln", false},
		{"symlinked dir", root + "/dl/e/g.txt", false},
		{"outward symlink", root + "/out/s.txt", false},
		{"dotdot symlink", root + "/d/up/f.txt", false},
		{"loop", root + "/loop", false},
		{"missing file", root + "/d/new.txt", false},
		{"missing dir", root + "/nodir/x", false},
		{"below a file", root + "/f.txt/x", false},
		{"outside every folder", base + "/elsewhere/x", false},
		{"sibling with the root as prefix", root + "2/x", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := realBelowRoot(folders, tc.abs)
			if got != tc.fast {
				t.Fatalf("realBelowRoot(%s) = %v, want %v", tc.abs, got, tc.fast)
			}
			if got {
				if real, err := evalExisting(tc.abs); err != nil || real != tc.abs {
					t.Errorf("shortcut taken but the full walk gives %q, %v", real, err)
				}
			}
		})
	}
}
