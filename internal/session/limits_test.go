package session

import (
	"log/slog"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/agentls/agentls/internal/ops"
	"github.com/agentls/agentls/internal/settings"
	"github.com/agentls/agentls/internal/tools"
)

// Limits come from every settings source, the editor's first, then
// settings.local.json, settings.json and the user's file, per setting; a
// source with a wrong limit is reported and its limits skipped.
func TestLimitsMergeAcrossSettingsSources(t *testing.T) {
	dir, userDir := t.TempDir(), t.TempDir()
	writeFile(t, filepath.Join(dir, ".agentls/settings.local.json"), `{"limits": {"grep": {"matches": 7}}}`)
	writeFile(t, filepath.Join(dir, ".agentls/settings.json"), `{"limits": {"readLines": 5, "grepMatches": 8, "findPaths": 13, "bashLines": 0}}`)
	writeFile(t, filepath.Join(userDir, "agentls/settings.json"), `{"limits": {"readLines": 9, "lsEntries": 11, "findPaths": 12, "tokens": 1}}`)
	s, err := New(Options{
		Folders: []ops.FolderSpec{{Path: dir}}, Log: slog.New(slog.DiscardHandler), NoUpstream: true, AuditDir: "-", UserConfigDir: userDir,
		Editor: &settings.Settings{Limits: map[string]any{"readLines": 4.0}},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	want := tools.DefaultLimits()
	want.ReadLines, want.GrepMatches, want.LsEntries, want.FindPaths = 4, 7, 11, 12
	if s.Env.Limits() != want {
		t.Errorf("limits = %+v\nwant     %+v", s.Env.Limits(), want)
	}
	// The tools are built with them: their descriptions state them.
	read, _ := s.Registry.Lookup("read")
	if read == nil || !strings.Contains(read.Description, "A result is at most 4 lines") {
		t.Errorf("read's description does not state the merged limit: %v", read)
	}
	problems := strings.Join(s.Problems, "\n")
	for _, p := range []string{
		".agentls/settings.json: limits.bashLines must be a whole number from 3 to 100000, got 0; its limits are ignored",
		"limits.tokens is not a limit",
	} {
		if !strings.Contains(problems, p) {
			t.Errorf("problems lack %q:\n%s", p, problems)
		}
	}
	if len(s.Problems) != 2 {
		t.Errorf("want exactly the two problems, got %q", s.Problems)
	}
}

// A host's cap lowers the limits the settings give, at start and when the
// settings are read again, and the descriptions state the lowered ones.
func TestHostCapLowersTheSettingsLimits(t *testing.T) {
	dir, userDir := t.TempDir(), t.TempDir()
	writeFile(t, filepath.Join(dir, ".agentls/settings.json"), `{"limits": {"readBytes": 30000, "bashBytes": 8000}}`)
	s, err := New(Options{
		Folders: []ops.FolderSpec{{Path: dir}}, Log: slog.New(slog.DiscardHandler), NoUpstream: true, AuditDir: "-", UserConfigDir: userDir,
		HostCap: tools.HostCap{Bytes: 10_000, Lines: 500},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	check := func(when string, readBytes, bashBytes int) {
		t.Helper()
		l := s.Env.Limits()
		if l.ReadBytes != readBytes || l.BashBytes != bashBytes || l.ReadLines != 500 || l.ResultBytes != 10_000 || l.ResultLines != 500 {
			t.Errorf("%s: limits = %+v", when, l)
		}
		read, _ := s.Registry.Lookup("read")
		if want := "A result is at most 500 lines and " + strconv.Itoa(readBytes) + " bytes"; read == nil || !strings.Contains(read.Description, want) {
			t.Errorf("%s: read's description lacks %q", when, want)
		}
	}
	check("at start", 10_000, 8000)
	writeFile(t, filepath.Join(dir, ".agentls/settings.json"), `{"limits": {"readBytes": 6000, "bashBytes": 20000}}`)
	s.Reload()
	check("after a reload", 6000, 10_000)
}
