package builtin

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentls/agentls/internal/editguard"
	"github.com/agentls/agentls/internal/ops"
	"github.com/agentls/agentls/internal/ops/opstest"
	"github.com/agentls/agentls/internal/tools"
)

func jsonArgs(t *testing.T, m map[string]any) string {
	t.Helper()
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

const shot = "Screenshot 2024-01-01 at 10.00.00\u202fAM.txt"

// A name holding U+202F or U+00A0 could not be read by its exact name (the
// input was folded to spaces first), and write to it created a sibling
// with a plain space. The exact name wins; a variant is taken only when
// the exact name does not exist and exactly one variant does.
func TestExactNameWithOddSpacesReachesTheFile(t *testing.T) {
	x, dir := newTestExecutor(t, map[string][]byte{
		shot:                 []byte("shot\n"),
		"file\u00a0name.txt": []byte("nbsp\n"),
		"both name.txt":      []byte("plain\n"),
		"both\u00a0name.txt": []byte("odd\n"),
		"two\u00a0ways.txt":  []byte("one\n"),
		"two\u202fways.txt":  []byte("other\n"),
		"cafe\u0301.txt":     []byte("nfd\n"),
		"it\u2019s.txt":      []byte("curly\n"),
	})
	guard := editguard.New(x.Env.FS)
	x.Env.Guard = guard
	read := func(p string) tools.Result { return call(t, x, "read", jsonArgs(t, map[string]any{"path": p})) }
	for p, want := range map[string]string{
		shot:                 "shot",
		"file\u00a0name.txt": "nbsp",
		"both name.txt":      "plain", // exact wins over a variant
		"both\u00a0name.txt": "odd",
		"Screenshot 2024-01-01 at 10.00.00 AM.txt": "shot", // one variant
		"file name.txt": "nbsp",
		"caf\u00e9.txt": "nfd",
		"it's.txt":      "curly",
	} {
		if r := read(p); r.IsError || !strings.Contains(r.TextOf(), "1→"+want) {
			t.Errorf("read %q: want %q, got %s", p, want, r.TextOf())
		}
	}
	// Two variants and no exact name: nothing is guessed, both are named.
	r := read("two ways.txt")
	if !r.IsError || !strings.Contains(r.TextOf(), "two\u00a0ways.txt") || !strings.Contains(r.TextOf(), "two\u202fways.txt") {
		t.Errorf("ambiguous variant: want both named, got %s", r.TextOf())
	}
	w := call(t, x, "write", jsonArgs(t, map[string]any{"path": "two ways.txt", "content": "new\n"}))
	if !w.IsError {
		t.Errorf("write beside two variants was not refused: %s", w.TextOf())
	}
	// write to the exact odd name changes that file and creates no sibling.
	read("file\u00a0name.txt")
	if w := call(t, x, "write", jsonArgs(t, map[string]any{"path": "file\u00a0name.txt", "content": "changed\n"})); w.IsError {
		t.Fatalf("write: %s", w.TextOf())
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "file\u00a0name.txt")); string(b) != "changed\n" {
		t.Errorf("the real file holds %q", b)
	}
	for _, sib := range []string{"two ways.txt"} {
		if _, err := os.Stat(filepath.Join(dir, sib)); !os.IsNotExist(err) {
			t.Errorf("write created the sibling %q beside its variant", sib)
		}
	}
}

// write with a plain-space spelling when exactly one odd-space variant
// exists used to replace the variant (a file the model did not name): it
// is refused, naming the variant exactly as it is to be sent back, nothing
// is written and no sibling is created; read and edit still reach the
// variant. The same holds on the in-memory FS (one rule, in ops).
func TestWriteToAPlainNameBesideItsVariantIsRefused(t *testing.T) {
	check := func(t *testing.T, x *tools.Executor, exists func(string) bool, content func(string) string) {
		t.Helper()
		if r := call(t, x, "read", jsonArgs(t, map[string]any{"path": "file name.txt"})); r.IsError || !strings.Contains(r.TextOf(), "nbsp") {
			t.Fatalf("read by the plain name: %s", r.TextOf())
		}
		w := call(t, x, "write", jsonArgs(t, map[string]any{"path": "file name.txt", "content": "again\n"}))
		if !w.IsError || !strings.Contains(w.TextOf(), "\"file\u00a0name.txt\"") || !strings.Contains(w.TextOf(), "Nothing was written") {
			t.Errorf("write beside the variant: want a refusal naming it exactly, got %s", w.TextOf())
		}
		if got := content("file\u00a0name.txt"); got != "nbsp\n" {
			t.Errorf("the variant now holds %q", got)
		}
		if exists("file name.txt") {
			t.Error("write created the plain-space sibling")
		}
		if e := call(t, x, "edit", jsonArgs(t, map[string]any{"path": "file name.txt", "edits": []any{map[string]any{"oldText": "nbsp", "newText": "edited"}}})); e.IsError {
			t.Errorf("edit by the plain name: %s", e.TextOf())
		}
	}
	t.Run("local", func(t *testing.T) {
		x, dir := newTestExecutor(t, map[string][]byte{"file\u00a0name.txt": []byte("nbsp\n")})
		guard := editguard.New(x.Env.FS)
		x.Env.Guard = guard
		check(t, x, func(n string) bool { _, err := os.Stat(filepath.Join(dir, n)); return err == nil },
			func(n string) string { b, _ := os.ReadFile(filepath.Join(dir, n)); return string(b) })
	})
	t.Run("mem", func(t *testing.T) {
		m := opstest.NewMem("/ws", map[string]string{"file\u00a0name.txt": "nbsp\n"})
		reg := tools.NewRegistry()
		reg.MustRegister(Builtins(tools.DefaultLimits())...)
		guard := editguard.New(m)
		env := &tools.Env{FS: m, Guard: guard}
		env.SetLimits(tools.DefaultLimits())
		x := &tools.Executor{Registry: reg, Env: env}
		stat := func(n string) (ops.Path, bool) {
			p, err := m.Resolve("/ws/" + n)
			if err != nil || p.Rel != n {
				return p, false
			}
			_, err = m.Stat(p)
			return p, err == nil
		}
		check(t, x, func(n string) bool { _, ok := stat(n); return ok }, func(n string) string {
			p, ok := stat(n)
			if !ok {
				return ""
			}
			b, _ := m.ReadFile(p)
			return string(b)
		})
	})
}

// Every path ls, find and grep print names the file when sent back to read
// and edit, odd spaces and all.
func TestPrintedOddNamesPassBackToReadAndEdit(t *testing.T) {
	x, dir := newTestExecutor(t, map[string][]byte{
		"pics/" + shot:            []byte("needle shot\n"),
		"pics/file\u00a0name.txt": []byte("needle nbsp\n"),
		"pics/cafe\u0301.txt":     []byte("needle nfd\n"),
	})
	guard := editguard.New(x.Env.FS)
	x.Env.Guard = guard
	printed := map[string]bool{}
	for _, c := range [][2]string{{"find", `{"pattern":"*.txt"}`}, {"grep", `{"pattern":"needle","output":"files"}`}, {"grep", `{"pattern":"needle"}`}} {
		for _, line := range strings.Split(call(t, x, c[0], c[1]).TextOf(), "\n") {
			line, _, _ = strings.Cut(line, ":")
			if strings.HasPrefix(line, "pics/") && strings.HasSuffix(line, ".txt") {
				printed[line] = true
			}
		}
	}
	for _, line := range strings.Split(call(t, x, "ls", `{"path":"pics"}`).TextOf(), "\n") {
		if strings.HasSuffix(line, ".txt") {
			printed["pics/"+strings.TrimSpace(line)] = true
		}
	}
	if len(printed) < 3 {
		t.Fatalf("found only %v in the tools' output", printed)
	}
	for p := range printed {
		r := call(t, x, "read", jsonArgs(t, map[string]any{"path": p}))
		if r.IsError || !strings.Contains(r.TextOf(), "needle") {
			t.Errorf("read %q (as printed): %s", p, r.TextOf())
			continue
		}
		e := call(t, x, "edit", jsonArgs(t, map[string]any{"path": p, "edits": []any{map[string]any{"oldText": "needle", "newText": "found"}}}))
		if e.IsError {
			t.Errorf("edit %q (as printed): %s", p, e.TextOf())
		}
	}
	entries, _ := os.ReadDir(filepath.Join(dir, "pics"))
	if len(entries) != 3 {
		t.Errorf("edits created files: %v", entries)
	}
	for _, e := range entries {
		if b, _ := os.ReadFile(filepath.Join(dir, "pics", e.Name())); !strings.HasPrefix(string(b), "found") {
			t.Errorf("%q was not edited: %q", e.Name(), b)
		}
	}
}
