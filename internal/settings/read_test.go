package settings

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A settings file is used only when every rule in it would be read: rules
// under a wrong key, invalid JSON and a link to nothing make it unusable,
// with the reason (and for JSON the line and column).
func TestReadSettingsFile(t *testing.T) {
	for _, tc := range []struct{ name, body, problem string }{
		{"rules", `{"mode": "acceptEdits", "permissions": {"deny": ["Bash(rm:*)"]}}`, ""},
		{"a list in another case is the list", `{"permissions": {"Deny": ["Bash(rm:*)"]}}`, ""},
		{"Claude Code's other keys", `{"permissions": {"additionalDirectories": []}, "env": {}}`, ""},
		{"a misspelt list", `{"permissions": {"denied": ["Bash(rm:*)"]}}`, "permissions.denied is not a rule list"},
		{"a list at the top", `{"deny": ["Bash(rm:*)"]}`, `"deny" is not a settings key`},
		{"a misspelt permissions", `{"permission": {"deny": []}}`, `"permission" is not a settings key`},
		{"a rule list twice", `{"permissions": {"deny": ["Bash(rm:*)"], "deny": []}}`, "permissions.deny is given twice"},
		{"a rule list twice in two cases", `{"permissions": {"deny": ["Bash(rm:*)"], "Deny": []}}`, "permissions.deny is given twice"},
		{"permissions twice", `{"permissions": {"deny": ["Bash(rm:*)"]}, "env": {}, "Permissions": {"allow": []}}`, `"permissions" is given twice`},
		{"two lists of one name in different objects are fine", `{"permissions": {"deny": ["Bash(rm:*)"]}, "hooks": {"deny": 1, "x": {"deny": 2}}}`, ""},
		{"invalid JSON", "{\n  \"mode\": \"default\",\n  oops\n}", "invalid JSON: line 3, column 3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "settings.json")
			if err := os.WriteFile(p, []byte(tc.body), 0o644); err != nil {
				t.Fatal(err)
			}
			s, problem, ok := Read(p)
			if tc.problem == "" {
				if !ok || problem != "" {
					t.Fatalf("Read = ok %v, problem %q; want it used", ok, problem)
				}
				return
			}
			if ok || !strings.Contains(problem, tc.problem) {
				t.Fatalf("Read = ok %v, problem %q; want unusable with %q", ok, problem, tc.problem)
			}
			if len(s.Permissions.Deny) > 0 {
				t.Errorf("an unusable file gave rules: %+v", s.Permissions)
			}
		})
	}
	t.Run("missing", func(t *testing.T) {
		if _, problem, ok := Read(filepath.Join(t.TempDir(), "none.json")); ok || problem != "" {
			t.Errorf("Read of a missing file = ok %v, problem %q; want neither", ok, problem)
		}
	})
	t.Run("a link to nothing", func(t *testing.T) {
		p := filepath.Join(t.TempDir(), "settings.json")
		if err := os.Symlink("/no/such/dotfiles/settings.json", p); err != nil {
			t.Skip(err)
		}
		if _, problem, ok := Read(p); ok || !strings.Contains(problem, "symbolic link to /no/such/dotfiles/settings.json") {
			t.Errorf("Read = ok %v, problem %q", ok, problem)
		}
	})
}

// A stamp is current until a file it covers is created, changed or
// removed, or the set of files differs.
func TestStampCurrent(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.json"), filepath.Join(dir, "b.json")
	if err := os.WriteFile(a, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	paths := []string{a, b}
	st := StampFiles(paths)
	if !st.Current(paths) {
		t.Fatal("a fresh stamp is not current")
	}
	if st.Current([]string{a}) {
		t.Error("a stamp of two files is current for one")
	}
	if err := os.WriteFile(b, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if st.Current(paths) {
		t.Error("a file created since is not seen")
	}
	st = StampFiles(paths)
	later := time.Now().Add(2 * time.Second)
	if err := os.WriteFile(a, []byte(`{"mode": "readOnly"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Chtimes(a, later, later)
	if st.Current(paths) {
		t.Error("a file changed since is not seen")
	}
	st = StampFiles(paths)
	os.Remove(b)
	if st.Current(paths) {
		t.Error("a file removed since is not seen")
	}
}
