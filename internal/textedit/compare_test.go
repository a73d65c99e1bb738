package textedit

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
)

// One Compare gives every description of a change, each as the package
// functions give it on its own, in any order and any number of times: the
// forms share the line diff, and none may change it for the others.
func TestCompareDescribesTheChangeOnce(t *testing.T) {
	long := strings.Repeat("line\n", 100)
	cases := append(roundTripCases[:len(roundTripCases):len(roundTripCases)], []struct{ name, old, new string }{
		// A hunk far from the start: the diff window does not start at 0.
		{"deep in a long file", long, long[:5*49] + "changed\n" + long[5*50:]},
		{"two hunks deep in", long, long[:5*30] + "one\n" + long[5*31:5*70] + "two\n" + long[5*71:]},
	}...)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			old, new := []byte(tc.old), []byte(tc.new)
			d := Compare(old, new)
			wantDiff := UnifiedDiff("f.txt", old, new)
			for range 2 {
				if got := d.Unified("f.txt"); got != wantDiff {
					t.Errorf("Unified =\n%s\nwant\n%s", got, wantDiff)
				}
				edits := d.TextEdits()
				if want := TextEdits(old, new); !reflect.DeepEqual(edits, want) {
					t.Errorf("TextEdits = %+v, want %+v", edits, want)
				}
				if got, err := ApplyTextEdits(old, edits); err != nil || string(got) != tc.new {
					t.Errorf("the TextEdits give %q (%v), want %q", got, err, tc.new)
				}
			}
		})
	}
}

// A BOM on one side only: the TextEdits count positions without it, as
// editors do, and still rebuild the new text.
func TestCompareTextEditsWithABOMOnOneSide(t *testing.T) {
	for _, c := range []struct{ old, new string }{
		{"\uFEFFa\nb\n", "a\nB\n"},
		{"a\nb\n", "\uFEFFa\nB\n"},
	} {
		edits := Compare([]byte(c.old), []byte(c.new)).TextEdits()
		if want := TextEdits([]byte(c.old), []byte(c.new)); !reflect.DeepEqual(edits, want) {
			t.Errorf("%q -> %q: TextEdits = %+v, want %+v", c.old, c.new, edits, want)
		}
	}
}

// Hashes are Hash of each text whatever they share: nothing, part of a
// SHA-256 block, whole blocks and more, all of one text, everything.
func TestHashesAreEachTextsHash(t *testing.T) {
	base := []byte(strings.Repeat("0123456789abcdef", 40)) // 640 bytes, 10 blocks
	change := func(at int) []byte {
		b := bytes.Clone(base)
		b[at] ^= 0x20
		return b
	}
	cases := []struct {
		name     string
		old, new []byte
	}{
		{"both empty", nil, nil},
		{"from empty", nil, base},
		{"to empty", base, nil},
		{"equal", base, bytes.Clone(base)},
		{"first byte changed", base, change(0)},
		{"inside the first block", base, change(5)},
		{"last byte of a block", base, change(63)},
		{"first byte of a block", base, change(64)},
		{"deep in", base, change(333)},
		{"last byte", base, change(len(base) - 1)},
		{"appended", base, append(bytes.Clone(base), "tail"...)},
		{"truncated", base, base[:100]},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			wantOld, wantNew := Hash(tc.old), Hash(tc.new)
			d := Compare(tc.old, tc.new)
			if o, n := d.Hashes(); o != wantOld || n != wantNew {
				t.Errorf("Hashes = %s, %s; want %s, %s", o, n, wantOld, wantNew)
			}
			wait := d.HashesLater()
			for range 2 {
				if o, n := wait(); o != wantOld || n != wantNew {
					t.Errorf("HashesLater = %s, %s; want %s, %s", o, n, wantOld, wantNew)
				}
			}
		})
	}
}
