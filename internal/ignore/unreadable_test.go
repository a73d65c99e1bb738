package ignore

import (
	"fmt"
	"io/fs"
	"reflect"
	"syscall"
	"testing"
)

func TestUnreadableNamesTheFirstAndCountsAll(t *testing.T) {
	var a, b Unreadable
	a.Add("x", &fs.PathError{Op: "open", Path: "x", Err: syscall.EACCES})
	a.Add("y", fmt.Errorf("read y: %w", syscall.EIO))
	for _, p := range []string{"p", "q", "r", "s"} {
		b.AddReason(p, "input/output error")
	}
	a.Merge(b)
	want := Unreadable{Count: 6, Paths: []string{"x", "y", "p"}, Reason: "permission denied"}
	if !reflect.DeepEqual(a, want) {
		t.Errorf("got %+v, want %+v", a, want)
	}
	var empty Unreadable
	empty.Merge(b)
	if empty.Count != 4 || len(empty.Paths) != UnreadableNamed || empty.Reason != "input/output error" {
		t.Errorf("merge into empty: %+v", empty)
	}
}
