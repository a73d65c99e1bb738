package ops

import (
	"bytes"
	"errors"
	"testing"
	"testing/iotest"
)

// The last-moment check of ReplaceFile reads the file in chunks: a
// difference anywhere, in content or length, is a change, whether it falls
// inside a chunk, at its edge or past the end of what was read.
func TestHoldsComparesContentAndLengthAcrossChunks(t *testing.T) {
	want := make([]byte, 2*holdsChunk+17)
	for i := range want {
		want[i] = byte('a' + i%26)
	}
	flip := func(i int) []byte {
		b := bytes.Clone(want)
		b[i] ^= 1
		return b
	}
	cases := []struct {
		name string
		file []byte
		want []byte
		same bool
	}{
		{"identical", want, want, true},
		{"identical, exactly one chunk", want[:holdsChunk], want[:holdsChunk], true},
		{"both empty", nil, nil, true},
		{"first byte differs", flip(0), want, false},
		{"last byte of a chunk differs", flip(holdsChunk - 1), want, false},
		{"first byte of the next chunk differs", flip(holdsChunk), want, false},
		{"last byte differs", flip(len(want) - 1), want, false},
		{"one byte longer", append(bytes.Clone(want), 'x'), want, false},
		{"one chunk longer", append(bytes.Clone(want), want[:holdsChunk]...), want, false},
		{"one byte shorter", want[:len(want)-1], want, false},
		{"empty, something was read", nil, want, false},
		{"something, nothing was read", want[:1], nil, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got, err := holds(bytes.NewReader(tc.file), tc.want); err != nil || got != tc.same {
				t.Errorf("holds = %v, %v; want %v", got, err, tc.same)
			}
			// Short reads (a network file system) must not change the answer.
			if got, err := holds(iotest.HalfReader(bytes.NewReader(tc.file)), tc.want); err != nil || got != tc.same {
				t.Errorf("half reads: holds = %v, %v; want %v", got, err, tc.same)
			}
		})
	}
}

// A read that fails is an error, not a verdict that the file is unchanged.
func TestHoldsReportsAReadError(t *testing.T) {
	boom := errors.New("boom")
	if same, err := holds(iotest.ErrReader(boom), []byte("x")); same || !errors.Is(err, boom) {
		t.Errorf("holds = %v, %v; want false, %v", same, err, boom)
	}
}
