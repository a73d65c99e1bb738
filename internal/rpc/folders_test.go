package rpc

import (
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func folderURI(p string) string { return (&url.URL{Scheme: "file", Path: p}).String() }

// One empty or missing workspace folder used to fail initialize (or, in
// didChangeWorkspaceFolders, leave the earlier folders): it is skipped and
// named, and only a source with nothing usable left is an error.
func TestInitializeSkipsUnusableFoldersAndFailsOnlyWhenNoneIsLeft(t *testing.T) {
	dir := t.TempDir()
	good, missing, file := filepath.Join(dir, "good"), filepath.Join(dir, "missing"), filepath.Join(dir, "f.txt")
	if err := os.Mkdir(good, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := &Server{opts: Options{Roots: []string{good}}}

	specs, skipped, err := s.folderSpecs(initializeParams{WorkspaceFolders: []workspaceFolder{{URI: ""}, {URI: folderURI(missing)}, {URI: folderURI(good), Name: "g"}, {URI: folderURI(file)}}})
	if err != nil || len(specs) != 1 || specs[0].Path != good {
		t.Fatalf("folderSpecs = %+v, %v; want only %s", specs, err, good)
	}
	if got := strings.Join(skipped, "\n"); len(skipped) != 3 || !strings.Contains(got, missing) || !strings.Contains(got, file) {
		t.Errorf("skipped = %q; want the empty entry, %s and %s", skipped, missing, file)
	}

	// None usable: an error naming them, not --root or the working directory.
	_, _, err = s.folderSpecs(initializeParams{WorkspaceFolders: []workspaceFolder{{URI: folderURI(missing)}, {URI: folderURI(file)}}})
	if err == nil || !strings.Contains(err.Error(), missing) || !strings.Contains(err.Error(), file) {
		t.Errorf("no usable workspace folder: err = %v; want one naming both", err)
	}

	// --root is the source when the client names none: a bad one is skipped.
	s.opts.Roots = []string{missing, good}
	specs, skipped, err = s.folderSpecs(initializeParams{})
	if err != nil || len(specs) != 1 || specs[0].Path != good || len(skipped) != 1 {
		t.Errorf("--root with one bad: %+v %q %v", specs, skipped, err)
	}
}
