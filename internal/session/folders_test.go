package session

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentls/agentls/internal/ops"
)

// One stale folder among good ones is named, and the good ones are kept.
func TestUsableFoldersKeepsGoodOnesAndNamesStaleOnes(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good")
	file := filepath.Join(dir, "file.txt")
	missing := filepath.Join(dir, "missing")
	if err := os.Mkdir(good, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	usable, bad := UsableFolders([]ops.FolderSpec{{Path: missing}, {Path: good, Name: "g"}, {Path: file}, {Path: ""}})
	if len(usable) != 1 || usable[0].Path != good || usable[0].Name != "g" {
		t.Errorf("usable = %+v, want only %s", usable, good)
	}
	if len(bad) != 3 {
		t.Fatalf("bad = %q, want 3 entries", bad)
	}
	for i, want := range []string{missing + " (does not exist)", file + " (not a directory)", "(empty path)"} {
		if !strings.Contains(bad[i], want) {
			t.Errorf("bad[%d] = %q, want it to contain %q", i, bad[i], want)
		}
	}
}

// With no usable folder every call is refused, in the client's words,
// until folders are set again: never the earlier folders.
func TestNoFoldersRefusesUntilFoldersAreSet(t *testing.T) {
	dir := t.TempDir()
	s, err := New(Options{Folders: []ops.FolderSpec{{Path: dir}}, Log: slog.New(slog.DiscardHandler), NoUpstream: true, AuditDir: "-", UserConfigDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got := s.FoldersRefusal(); got != "" {
		t.Fatalf("refusal of a fresh session = %q, want none", got)
	}
	const why = "No workspace folder: the roots list is empty."
	s.NoFolders(why)
	if got := s.FoldersRefusal(); got != why {
		t.Fatalf("refusal = %q, want %q", got, why)
	}
	other := t.TempDir()
	if err := s.SetFolders([]ops.FolderSpec{{Path: other}}); err != nil {
		t.Fatal(err)
	}
	if got := s.FoldersRefusal(); got != "" {
		t.Errorf("refusal after SetFolders = %q, want it lifted", got)
	}
	if err := s.SetFolders([]ops.FolderSpec{{Path: filepath.Join(dir, "missing")}}); err == nil {
		t.Fatal("SetFolders of a missing folder succeeded")
	}
	s.NoFolders(why)
	if got := s.FoldersRefusal(); got != why {
		t.Errorf("refusal after a failed SetFolders = %q, want %q", got, why)
	}
}
