//go:build unix || windows

package owner

import (
	"os"
	"testing"
)

func TestAlive(t *testing.T) {
	for _, c := range []struct {
		name string
		pid  int
		want bool
	}{
		{"this process", os.Getpid(), true},
		{"no pid", 0, false},
		{"negative", -1, false},
		{"above any pid_max", 99999999, false},
	} {
		if got := Alive(c.pid); got != c.want {
			t.Errorf("%s: Alive(%d) = %v, want %v", c.name, c.pid, got, c.want)
		}
	}
}
