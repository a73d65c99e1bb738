package editguard

import (
	"strings"
	"testing"

	"github.com/agentls/agentls/internal/ops/opstest"
)

// TestStampIsTheVersionRead: the fingerprint must describe the bytes the
// model saw. A stat taken after the read (RecordRead) would fingerprint a
// change that landed in between, and the edit check would then pass it as
// read; RecordReadInfo takes the FileInfo of the descriptor that was read.
func TestStampIsTheVersionRead(t *testing.T) {
	cases := []struct {
		name          string
		changeBetween bool // another process writes between read and stamp
		wantErr       string
	}{
		{"unchanged", false, ""},
		{"changed between read and stamp", true, "changed since you read it"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, map[string]string{"a.txt": orig})
			p := e.path("a.txt")
			data, fi, err := opstest.ReadFileInfo(e.fs, p)
			if err != nil {
				t.Fatal(err)
			}
			if tc.changeBetween {
				e.external("a.txt", "one\nTWO, longer\nthree\n")
			}
			e.fs.stats.Store(0)
			e.g.RecordReadInfo(p, fi, data)
			if n := e.fs.stats.Load(); n != 0 {
				t.Errorf("RecordReadInfo made %d stats, want 0", n)
			}
			_, err = e.g.Check(p)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("Check: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("Check = %v, want an error containing %q", err, tc.wantErr)
			}
		})
	}
}
