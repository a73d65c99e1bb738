package ignore

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// benchTree writes 10,000 files in 1,000 directories (10 per directory, 3
// levels), with a .gitignore at the root and in every 10th directory.
func benchTree(b *testing.B) string {
	b.Helper()
	root := b.TempDir()
	write := func(rel, s string) {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	write(".gitignore", "*.log\nbuild/\n/tmp\n!keep.log\n**/cache/**\n")
	for d := range 1000 {
		dir := fmt.Sprintf("d%d/e%d/f%d", d/100, d/10%10, d%10)
		if d%10 == 0 {
			write(dir+"/.gitignore", "*.gen\n!special.gen\n")
		}
		for f := range 10 {
			ext := []string{".go", ".ts", ".md", ".log", ".gen"}[f%5]
			write(fmt.Sprintf("%s/file%d%s", dir, f, ext), "")
		}
	}
	return root
}

// BenchmarkWalk compares the ignore-aware Walk with a raw fs.WalkDir (the
// floor: same reads, no rules) on the same tree in the same run.
func BenchmarkWalk(b *testing.B) {
	root := benchTree(b)
	fsys := os.DirFS(root)
	b.Run("fs.WalkDir", func(b *testing.B) {
		for b.Loop() {
			n := 0
			_ = fs.WalkDir(fsys, ".", func(string, fs.DirEntry, error) error { n++; return nil })
		}
	})
	b.Run("Walk/warm", func(b *testing.B) {
		m := NewMatcher(fsys, Outer{})
		for b.Loop() {
			n := 0
			_ = m.Walk(context.Background(), "", WalkOptions{}, func(string, fs.DirEntry) error { n++; return nil })
		}
	})
	b.Run("Walk/cold", func(b *testing.B) {
		for b.Loop() {
			n := 0
			_ = NewMatcher(fsys, Outer{}).Walk(context.Background(), "", WalkOptions{}, func(string, fs.DirEntry) error { n++; return nil })
		}
	})
	b.Run("Walk/cold-os.Root", func(b *testing.B) {
		r, err := os.OpenRoot(root)
		if err != nil {
			b.Fatal(err)
		}
		defer r.Close()
		for b.Loop() {
			n := 0
			_ = NewMatcher(r.FS(), Outer{}).Walk(context.Background(), "", WalkOptions{}, func(string, fs.DirEntry) error { n++; return nil })
		}
	})
	b.Run("Ignored", func(b *testing.B) {
		m := NewMatcher(fsys, Outer{})
		for b.Loop() {
			m.Ignored("d3/e4/f0/file2.md", false)
		}
	})
}
