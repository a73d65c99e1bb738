// Package editguard owns what the model has seen: a read stamp per real
// file path (fingerprint, content hash, ranges read, time), the staleness
// check that edit and write must pass, and the per-file FIFO write queue.
//
// A stamp is keyed by the resolved real path, so symlink aliases share one
// stamp and one queue. The fast path of a check is a single stat compared
// with the stamp's fingerprint; only a changed fingerprint costs a read and
// a hash, so a touch or a format-on-save no-op does not force a re-read.
//
// With a healthy file watcher (SetWatched, SetCoverage) a check costs no
// syscall at all: Observe judges every watcher event for a stamped file
// (an event whose stat equals the stamp is our own write), and only an
// unexplained event, an unwatched directory or a degraded watcher sends a
// check back to stat. After lost events (queue overflow) RecheckAll stats
// every stamp.
package editguard
