package ignore

import (
	"errors"
	"slices"
	"strings"
	"syscall"
)

// UnreadableNamed is how many unreadable paths a note names; Unreadable
// keeps a few more (unreadableKept), so that names its reader may not show
// (a permission rule hides them) leave room for others.
const (
	UnreadableNamed = 3
	unreadableKept  = 16
)

// Unreadable tallies what a search walked past because it could not be
// read, so that its result can say so instead of passing for complete.
// The names kept are the first in byte order, whatever order they were
// found in (rg reports them as its threads meet them).
type Unreadable struct {
	Count  int
	Paths  []string // the first unreadableKept in byte order, slash paths as shown
	Reason string   // the first one's, e.g. "permission denied"
}

// Add counts path, unreadable for err.
func (u *Unreadable) Add(path string, err error) {
	u.add(path, ErrReason(err))
}

func (u *Unreadable) add(path, reason string) {
	u.Count++
	u.keep(path)
	if u.Reason == "" {
		u.Reason = reason
	}
}

// keep puts path among the kept names, in order.
func (u *Unreadable) keep(path string) {
	i, found := slices.BinarySearch(u.Paths, path)
	if found || i >= unreadableKept {
		return
	}
	u.Paths = slices.Insert(u.Paths, i, path)
	if len(u.Paths) > unreadableKept {
		u.Paths = u.Paths[:unreadableKept]
	}
}

// Merge adds what o tallied.
func (u *Unreadable) Merge(o Unreadable) {
	u.Count += o.Count
	for _, p := range o.Paths {
		u.keep(p)
	}
	if u.Reason == "" {
		u.Reason = o.Reason
	}
}

// AddReason counts path with a reason already in words (rg's report).
func (u *Unreadable) AddReason(path, reason string) { u.add(path, reason) }

// ErrReason is err's cause in words: the system's text for an errno
// ("permission denied"), else the error's own.
func ErrReason(err error) string {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return errno.Error()
	}
	s := err.Error()
	if i := strings.LastIndex(s, ": "); i >= 0 {
		return s[i+2:]
	}
	return s
}
