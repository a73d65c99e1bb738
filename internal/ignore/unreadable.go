package ignore

import (
	"errors"
	"strings"
	"syscall"
)

// UnreadableNamed is how many unreadable paths an Unreadable names.
const UnreadableNamed = 3

// Unreadable tallies what a search walked past because it could not be
// read, so that its result can say so instead of passing for complete.
type Unreadable struct {
	Count  int
	Paths  []string // the first UnreadableNamed, slash paths as shown
	Reason string   // the first one's, e.g. "permission denied"
}

// Add counts path, unreadable for err.
func (u *Unreadable) Add(path string, err error) {
	u.add(path, ErrReason(err))
}

func (u *Unreadable) add(path, reason string) {
	u.Count++
	if len(u.Paths) < UnreadableNamed {
		u.Paths = append(u.Paths, path)
	}
	if u.Reason == "" {
		u.Reason = reason
	}
}

// Merge adds what o tallied.
func (u *Unreadable) Merge(o Unreadable) {
	for i, p := range o.Paths {
		reason := ""
		if i == 0 {
			reason = o.Reason
		}
		u.add(p, reason)
	}
	u.Count += o.Count - len(o.Paths)
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
