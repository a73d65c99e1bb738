package spill

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

func TestOpenNamesDirAfterWorkspaceAndPid(t *testing.T) {
	t.Setenv(CacheDirEnv, t.TempDir())
	ws := t.TempDir()
	d, err := Open(ws)
	if err != nil {
		t.Fatal(err)
	}
	base, _ := Base()
	if filepath.Dir(d.Path()) != base {
		t.Errorf("dir %s not under base %s", d.Path(), base)
	}
	if strings.HasPrefix(d.Path(), ws) {
		t.Errorf("spill dir %s is inside the workspace", d.Path())
	}
	if pid, ok := dirPID(filepath.Base(d.Path())); !ok || pid != os.Getpid() {
		t.Errorf("dir name %q: want <hash12>-<pid>", filepath.Base(d.Path()))
	}
	d2, err := Open(ws + "x")
	if err != nil {
		t.Fatal(err)
	}
	if d2.Path() == d.Path() {
		t.Error("two workspaces share one spill dir")
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(d.Path()); !os.IsNotExist(err) {
		t.Errorf("Close left %s: %v", d.Path(), err)
	}
}

func TestSaveAndCreate(t *testing.T) {
	d, err := OpenIn(t.TempDir(), "/ws")
	if err != nil {
		t.Fatal(err)
	}
	p, err := d.Save("bash", []byte("hello\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(p); string(got) != "hello\n" {
		t.Errorf("saved %q", got)
	}
	if filepath.Dir(p) != d.Path() || !strings.HasPrefix(filepath.Base(p), "bash-") {
		t.Errorf("path %s", p)
	}
	f, err := d.Create("bash")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if f.Name() == p {
		t.Error("Create reused a name")
	}
}

func TestTotalCapRemovesOldestFirst(t *testing.T) {
	d, err := OpenIn(t.TempDir(), "/ws")
	if err != nil {
		t.Fatal(err)
	}
	d.maxTotal = 100
	var paths []string
	for i := range 5 {
		p, err := d.Save("f", bytes.Repeat([]byte{'a' + byte(i)}, 30))
		if err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	// 5 files of 30 bytes under a 100-byte cap: only the newest 3 can stay.
	for i, p := range paths {
		_, err := os.Stat(p)
		if exists, want := err == nil, i >= 2; exists != want {
			t.Errorf("file %d exists=%v, want %v", i, exists, want)
		}
	}
	var total int64
	entries, _ := os.ReadDir(d.Path())
	for _, e := range entries {
		fi, _ := e.Info()
		total += fi.Size()
	}
	if total > d.maxTotal {
		t.Errorf("total %d > cap %d", total, d.maxTotal)
	}
}

func TestCleanStaleRemovesOnlyDeadServersDirs(t *testing.T) {
	base := t.TempDir()
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Skip("no `true` binary:", err)
	}
	deadPid := dead.ProcessState.Pid()
	cases := []struct {
		name string
		keep bool
	}{
		{"0123456789ab-" + strconv.Itoa(deadPid), false},
		{"0123456789ab-" + strconv.Itoa(os.Getpid()), true},
		{"0123456789ab-" + strconv.Itoa(os.Getppid()), true},
		{"not-a-spill-dir", true},
		{"0123456789AB-" + strconv.Itoa(deadPid), true}, // not a name Open makes
	}
	for _, c := range cases {
		if err := os.Mkdir(filepath.Join(base, c.name), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	CleanStale(base)
	for _, c := range cases {
		_, err := os.Stat(filepath.Join(base, c.name))
		if kept := err == nil; kept != c.keep {
			t.Errorf("%s: kept=%v, want %v", c.name, kept, c.keep)
		}
	}
}

// TestDirPID checks the hand-written name parser against the pattern it
// replaced, ^[0-9a-f]{hashLen}-([0-9]+)$ with Atoi on the digits.
func TestDirPID(t *testing.T) {
	ref := regexp.MustCompile(`^[0-9a-f]{12}-([0-9]+)$`)
	tests := []struct {
		name string
		in   string
	}{
		{"ours", "0123456789ab-4242"},
		{"pid one digit", "abcdefabcdef-7"},
		{"hash too short", "0123456789a-4242"},
		{"hash too long", "0123456789abc-4242"},
		{"upper-case hex", "0123456789AB-4242"},
		{"not hex", "0123456789ag-4242"},
		{"no pid", "0123456789ab-"},
		{"no dash", "0123456789ab"},
		{"signed pid", "0123456789ab-+42"},
		{"second dash", "0123456789ab-42-1"},
		{"pid overflows int", "0123456789ab-99999999999999999999999"},
		{"empty", ""},
		{"other dir", "tmp"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			wantPID, wantOK := 0, false
			if m := ref.FindStringSubmatch(tc.in); m != nil {
				if n, err := strconv.Atoi(m[1]); err == nil {
					wantPID, wantOK = n, true
				}
			}
			pid, ok := dirPID(tc.in)
			if pid != wantPID || ok != wantOK {
				t.Errorf("dirPID(%q) = %d, %v; want %d, %v", tc.in, pid, ok, wantPID, wantOK)
			}
		})
	}
}
