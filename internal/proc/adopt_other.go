//go:build !linux

package proc

import "errors"

// Orphans adopts nothing here: only Linux lets a process become the
// subreaper of its descendants (PR_SET_CHILD_SUBREAPER).
type Orphans struct{}

// AdoptOrphans reports that orphans cannot be adopted on this system.
func AdoptOrphans() (*Orphans, error) {
	return nil, errors.New("adopt orphans: only on Linux")
}

// Close does nothing.
func (o *Orphans) Close() {}

// adoptedVictims lists nothing: no process is adopted here.
func adoptedVictims() []victim { return nil }
