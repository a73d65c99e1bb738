package prefault

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

func TestExeSpansTakesTheExecutablesReadOnlyMappings(t *testing.T) {
	maps := strings.Join([]string{
		"00400000-009f4000 r-xp 00000000 fe:00 1234                       /opt/agent ls/bin/agentls",
		"009f4000-01024000 r--p 005f4000 fe:00 1234                       /opt/agent ls/bin/agentls",
		"01024000-01090000 rw-p 00c24000 fe:00 1234                       /opt/agent ls/bin/agentls",
		"01090000-030d4000 rw-p 00000000 00:00 0 ",
		"c000000000-c004000000 rw-p 00000000 00:00 0",
		"7f3f75e2f000-7f3f75e6f000 r--p 00000000 fe:00 99                 /usr/lib/locale/C.utf8/LC_CTYPE",
		"7ffc462ad000-7ffc462ce000 rw-p 00000000 00:00 0                  [stack]",
		"7ffc462f0000-7ffc462f2000 r-xp 00000000 00:00 0                  [vdso]",
		"garbage line",
		"",
	}, "\n")
	got := exeSpans([]byte(maps))
	want := []span{{0x400000, 0x9f4000}, {0x9f4000, 0x1024000}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("exeSpans = %#x, want %#x (code and read-only data of the first file, nothing writable, no other file)", got, want)
	}
}

func TestExeSpansKeepsADeletedExecutable(t *testing.T) {
	// A binary replaced while it runs (go build over it) is "(deleted)".
	maps := "00400000-00500000 r-xp 00000000 fe:00 7 /tmp/agentls (deleted)\n" +
		"00500000-00600000 r--p 00100000 fe:00 7 /tmp/agentls (deleted)\n" +
		"7f0000000000-7f0000001000 r--p 00000000 fe:00 8 /tmp/agentls\n"
	if got := exeSpans([]byte(maps)); len(got) != 2 {
		t.Errorf("exeSpans = %#x, want the two mappings of the deleted binary", got)
	}
}

func TestOptOutNeedsTheWholeEntry(t *testing.T) {
	for _, tc := range []struct {
		environ string
		want    bool
	}{
		{"HOME=/root\x00AGENTLS_PREFAULT=off\x00PATH=/bin\x00", true},
		{"AGENTLS_PREFAULT=off\x00", true},
		{"HOME=/root\x00AGENTLS_PREFAULT=off", true}, // last entry, unterminated
		{"HOME=/root\x00AGENTLS_PREFAULT=on\x00", false},
		{"HOME=/root\x00AGENTLS_PREFAULT=offline\x00", false},
		{"HOME=/root\x00X_AGENTLS_PREFAULT=off\x00", false},
		{"NOTE=AGENTLS_PREFAULT=off\x00", false},
		{"", false},
	} {
		// Every split into two chunks, as reads of any size return them.
		for i := 0; i <= len(tc.environ); i++ {
			var s optOutScan
			got := s.feed([]byte(tc.environ[:i])) || s.feed([]byte(tc.environ[i:])) || s.end()
			if got != tc.want {
				t.Errorf("environ %q split at %d: opted out = %v, want %v", tc.environ, i, got, tc.want)
				break
			}
		}
	}
}

// The package must initialize among the first: an import with an init of
// its own (syscall, os) would hold it back until after that one.
func TestImportsOnlyRuntimeAndUnsafe(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range af.Imports {
			if p, _ := strconv.Unquote(imp.Path.Value); p != "runtime" && p != "unsafe" {
				t.Errorf("%s imports %q; only runtime and unsafe keep the init first in line", f, p)
			}
		}
	}
}

func TestSpanAtFindsTheMappingHoldingAnAddress(t *testing.T) {
	maps := "00400000-009f4000 r-xp 00000000 fe:00 1234 /usr/bin/agentls\n" +
		"3490a8000000-3490abc00000 ---p 00000000 00:00 0\n" +
		"3490abc00000-3490ac000000 rw-p 00000000 00:00 0\n" +
		"7fdab8660000-7fdab8800000 rw-p 00000000 00:00 0\n"
	for _, tc := range []struct {
		addr uintptr
		want span
		ok   bool
	}{
		{0x3490abe34000, span{0x3490abc00000, 0x3490ac000000}, true},
		{0x3490abc00000, span{0x3490abc00000, 0x3490ac000000}, true},
		{0x3490ac000000, span{}, false}, // the end is outside
		{0x500000, span{0x400000, 0x9f4000}, true},
		{0x1000, span{}, false},
	} {
		if got, ok := spanAt([]byte(maps), tc.addr); got != tc.want || ok != tc.ok {
			t.Errorf("spanAt(%#x) = %#x, %v; want %#x, %v", tc.addr, got, ok, tc.want, tc.ok)
		}
	}
}
