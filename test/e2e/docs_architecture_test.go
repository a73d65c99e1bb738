package e2e

import (
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
