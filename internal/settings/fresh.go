package settings

import (
	"os"

	"github.com/agentls/agentls/internal/editguard"
)

// Stamp is what a set of settings files looked like when they were last
// read (a zero fingerprint: the file was missing). A deny rule saved a
// moment ago must apply to the very next call, before a watcher's
// debounced reload has run, so the permission step checks Current (a
// stat per file) before every call and reads the settings again when it
// is false.
type Stamp map[string]editguard.Fingerprint

// StampFiles stats paths. Take it before the files are read: a save
// during the read then shows at the next check.
func StampFiles(paths []string) Stamp {
	st := make(Stamp, len(paths))
	for _, p := range paths {
		st[p] = fingerprint(p)
	}
	return st
}

// Current reports whether paths are the files st was taken of, each
// unchanged. It runs on every call, so it compares file by file instead
// of building a Stamp to compare.
func (st Stamp) Current(paths []string) bool {
	if len(paths) != len(st) {
		return false
	}
	for _, p := range paths {
		if fp, ok := st[p]; !ok || fingerprint(p) != fp {
			return false
		}
	}
	return true
}

// fingerprint is p's fingerprint, zero when it is missing.
func fingerprint(p string) editguard.Fingerprint {
	if fi, err := os.Stat(p); err == nil {
		return editguard.FingerprintOf(fi)
	}
	return editguard.Fingerprint{}
}
