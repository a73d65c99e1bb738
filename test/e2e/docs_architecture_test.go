package e2e

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestDocsArchitectureCodeMap: ARCHITECTURE.md's code map names every Go
// package of the product and the tests (a package added without a line
// there is a map that lies by omission), every path it names exists, and
// its list of script folders is the folders there are.
func TestDocsArchitectureCodeMap(t *testing.T) {
	t.Parallel()
	doc := docsDoc(t, "ARCHITECTURE.md")
	start := strings.Index(doc, "## Code map")
	end := strings.Index(doc[start+1:], "\n## ")
	if start < 0 || end < 0 {
		t.Fatal("ARCHITECTURE.md has no Code map section")
	}
	codeMap := doc[start : start+1+end]
	root := filepath.Join("..", "..")

	for _, top := range []string{"cmd", "internal", "test"} {
		filepath.WalkDir(filepath.Join(root, top), func(p string, d fs.DirEntry, err error) error {
			switch {
			case err != nil || !d.IsDir():
				return nil
			case d.Name() == "testdata" || d.Name() == "node_modules":
				return filepath.SkipDir
			case !hasProductGo(t, p):
				return nil
			}
			rel, _ := filepath.Rel(root, p)
			if !strings.Contains(codeMap, "`"+rel+"/`") && !strings.Contains(codeMap, "`"+rel+"`") {
				t.Errorf("the code map does not name the package %s/", rel)
			}
			return nil
		})
	}

	for _, m := range regexp.MustCompile("`((?:cmd|internal|test|bench|editors|scripts)/[^`*<> ]*)`").FindAllStringSubmatch(codeMap, -1) {
		if _, err := os.Stat(filepath.Join(root, strings.TrimSuffix(m[1], "/"))); err != nil {
			t.Errorf("the code map names %s, which does not exist", m[1])
		}
	}

	folders := regexp.MustCompile(`Folders: ([^.]+)\.`).FindStringSubmatch(codeMap)
	if folders == nil {
		t.Fatal("the code map does not list the script folders (\"Folders: ….\")")
	}
	listed := map[string]bool{}
	for _, f := range regexp.MustCompile(`[a-z_]+`).FindAllString(folders[1], -1) {
		listed[f] = true
	}
	ents, err := os.ReadDir(filepath.Join(root, "cmd", "agentls", "testdata", "script"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if e.IsDir() && !listed[e.Name()] {
			t.Errorf("the code map's script folders leave out %s", e.Name())
		}
	}
}

// hasProductGo reports whether dir holds a Go file that is not a test.
func hasProductGo(t *testing.T, dir string) bool {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if n := e.Name(); strings.HasSuffix(n, ".go") && !strings.HasSuffix(n, "_test.go") {
			return true
		}
	}
	return false
}

// TestDocsArchitectureLayers: every product package is on one line of
// ARCHITECTURE.md's Layers, and imports only packages on lower lines: no
// package imports upward, and none imports a sibling of its own line.
func TestDocsArchitectureLayers(t *testing.T) {
	t.Parallel()
	doc := docsDoc(t, "ARCHITECTURE.md")
	start := strings.Index(doc, "## Layers")
	if start < 0 {
		t.Fatal("ARCHITECTURE.md has no Layers section")
	}
	section := doc[start:]
	if end := strings.Index(section[1:], "\n## "); end >= 0 {
		section = section[:end+1]
	}
	line := map[string]int{} // package (relative path) → its line, 0 at the top
	n := 0
	for _, l := range strings.Split(section, "\n") {
		if !strings.HasPrefix(l, "- ") {
			continue
		}
		for _, m := range regexp.MustCompile("`((?:cmd|internal)/[^`]+)`").FindAllStringSubmatch(l, -1) {
			if prev, ok := line[m[1]]; ok {
				t.Errorf("%s is on two lines (%d and %d)", m[1], prev, n)
			}
			line[m[1]] = n
		}
		n++
	}
	const module = "github.com/agentls/agentls/"
	root := filepath.Join("..", "..")
	seen := map[string]bool{}
	for _, top := range []string{"cmd", "internal"} {
		filepath.WalkDir(filepath.Join(root, top), func(p string, d fs.DirEntry, err error) error {
			switch {
			case err != nil || !d.IsDir():
				return nil
			case d.Name() == "testdata":
				return filepath.SkipDir
			case !hasProductGo(t, p):
				return nil
			}
			rel, _ := filepath.Rel(root, p)
			rel = filepath.ToSlash(rel)
			seen[rel] = true
			own, ok := line[rel]
			if !ok {
				t.Errorf("the Layers list does not place %s", rel)
				return nil
			}
			for _, imp := range productImports(t, p) {
				dep, ok := strings.CutPrefix(imp, module)
				if !ok {
					continue
				}
				if at, ok := line[dep]; ok && at <= own {
					t.Errorf("%s (line %d) imports %s (line %d): only lower lines may be imported", rel, own, dep, at)
				}
			}
			return nil
		})
	}
	for pkg := range line {
		if !seen[pkg] {
			t.Errorf("the Layers list names %s, which is not a package", pkg)
		}
	}
}

// productImports are the import paths of dir's non-test Go files.
func productImports(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	fset := token.NewFileSet()
	for _, e := range ents {
		n := e.Name()
		if !strings.HasSuffix(n, ".go") || strings.HasSuffix(n, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, n), nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range f.Imports {
			out = append(out, strings.Trim(s.Path.Value, `"`))
		}
	}
	return out
}
