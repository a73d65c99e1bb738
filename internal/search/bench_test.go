package search

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/agentls/agentls/internal/ignore"
)

// genTree writes files source-like files spread over 100 directories,
// with "needleFunc" on roughly one file in 50.
func genTree(b *testing.B, files int) string {
	b.Helper()
	dir := b.TempDir()
	rng := rand.New(rand.NewPCG(1, 2))
	words := []string{"func", "return", "if", "err", "nil", "value", "index", "buffer", "string", "count", "result", "error", "context"}
	if err := os.WriteFile(filepath.Join(dir, ".gitignore"), []byte("*.tmp\nbuild/\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	for i := range files {
		var s strings.Builder
		for l := range 60 {
			for w := range 8 {
				if w > 0 {
					s.WriteByte(' ')
				}
				s.WriteString(words[rng.IntN(len(words))])
			}
			if l == 30 && i%50 == 0 {
				s.WriteString(" needleFunc(x)")
			}
			s.WriteByte('\n')
		}
		p := filepath.Join(dir, fmt.Sprintf("d%03d", i%100), fmt.Sprintf("f%05d.go", i))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s.String()), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	return dir
}

// BenchmarkGrep compares the rg engine and the Go engine with raw
// `rg --json` (the reference) on the same tree and pattern.
func BenchmarkGrep(b *testing.B) {
	rg, _ := exec.LookPath("rg")
	goroot := filepath.Join(runtime.GOROOT(), "src")
	trees := []struct {
		name string
		dir  func() string
		pats []string
	}{
		{"gen10k", func() string { return genTree(b, 10000) }, []string{"needleFunc", `needle\w+\(`, "buffer"}},
		{"goroot", func() string { return goroot }, []string{"ErrUnexpectedEOF", `func \w+Error\(`, "err"}},
	}
	ctx := context.Background()
	for _, tr := range trees {
		b.Run(tr.name, func(b *testing.B) { benchTree(ctx, b, tr.dir(), tr.pats, rg) })
	}
}

// rootOpenerFS is an os.Root's FS that also opens subdirectories as roots
// (RootOpener), the way ops could hand it to the grep tool; it keeps the
// FS's fast ReadDir, ReadFile, Stat and ReadLink.
type rootOpenerFS struct {
	osRootFS
	root *os.Root
}

// osRootFS is the method set of os.Root.FS().
type osRootFS interface {
	fs.ReadDirFS
	fs.ReadFileFS
	fs.StatFS
	fs.ReadLinkFS
}

func (f rootOpenerFS) OpenRoot(name string) (*os.Root, error) { return f.root.OpenRoot(name) }

// benchTree runs the engines and raw rg for each pattern over dir.
//
//	go-engine        Go backend on os.Root's FS, as ops.Local passes it today
//	go-engine-dirs   the same FS with RootOpener
//	rg-engine        rg backend
//	raw-rg           rg --json, the reference
func benchTree(ctx context.Context, b *testing.B, dir string, pats []string, rg string) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { root.Close() })
	fsys := root.FS()
	for _, pat := range pats {
		q := Query{Pattern: pat, Hidden: true}
		name := strings.NewReplacer(`\`, "", "(", "", "+", "", " ", "_").Replace(pat)
		b.Run(name+"/go-engine", func(b *testing.B) {
			e := &Engine{Root: dir, FS: fsys, Matcher: ignore.NewMatcher(fsys, ignore.Outer{})}
			cpu := cpuTime()
			for b.Loop() {
				if _, err := e.Search(ctx, q); err != nil {
					b.Fatal(err)
				}
			}
			reportCPU(b, cpu)
		})
		b.Run(name+"/go-engine-dirs", func(b *testing.B) {
			e := &Engine{Root: dir, FS: rootOpenerFS{fsys.(osRootFS), root}, Matcher: ignore.NewMatcher(fsys, ignore.Outer{})}
			cpu := cpuTime()
			for b.Loop() {
				if _, err := e.Search(ctx, q); err != nil {
					b.Fatal(err)
				}
			}
			reportCPU(b, cpu)
		})
		if rg == "" {
			continue
		}
		b.Run(name+"/rg-engine", func(b *testing.B) {
			e := &Engine{Root: dir, FS: fsys, Matcher: ignore.NewMatcher(fsys, ignore.Outer{}), RgPath: rg}
			cpu := cpuTime()
			for b.Loop() {
				if _, err := e.Search(ctx, q); err != nil {
					b.Fatal(err)
				}
			}
			reportCPU(b, cpu)
		})
		b.Run(name+"/raw-rg", func(b *testing.B) {
			cpu := cpuTime()
			for b.Loop() {
				cmd := exec.Command(rg, "--json", "--no-require-git", "--hidden", "-e", pat, "--", ".")
				cmd.Dir = dir
				cmd.Stdout = io.Discard
				if err := cmd.Run(); err != nil {
					if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
						b.Fatal(err)
					}
				}
			}
			reportCPU(b, cpu)
		})
	}
}
