package ignore

import (
	"fmt"
	"io/fs"
	"reflect"
	"syscall"
	"testing"
)

func TestUnreadableKeepsTheFirstNamesInByteOrderAndCountsAll(t *testing.T) {
	var a, b Unreadable
	a.Add("x", &fs.PathError{Op: "open", Path: "x", Err: syscall.EACCES})
	a.Add("d", fmt.Errorf("read d: %w", syscall.EIO))
	for _, p := range []string{"p", "a", "r", "s"} {
		b.AddReason(p, "input/output error")
	}
	a.Merge(b)
	want := Unreadable{Count: 6, Paths: []string{"a", "d", "p", "r", "s", "x"}, Reason: "permission denied"}
	if !reflect.DeepEqual(a, want) {
		t.Errorf("got %+v, want %+v", a, want)
	}
	// Found in any order, the same names are kept.
	var fwd, rev Unreadable
	for i := range 40 {
		fwd.AddReason(fmt.Sprintf("p%02d", i), "r")
		rev.AddReason(fmt.Sprintf("p%02d", 39-i), "r")
	}
	if !reflect.DeepEqual(fwd, rev) || fwd.Count != 40 || len(fwd.Paths) != unreadableKept || fwd.Paths[0] != "p00" {
		t.Errorf("order-dependent or wrong: %+v vs %+v", fwd, rev)
	}
}
