// Package editguard owns what the model has seen: a read stamp per real
// file path (fingerprint, content hash, ranges read, time), the staleness
// check that edit and write must pass, and the per-file FIFO write queue.
//
// A stamp is keyed by the resolved real path, so symlink aliases share one
// stamp and one queue. The fast path of a check is a single stat compared
// with the stamp's fingerprint; only a changed fingerprint costs a read and
// a hash, so a touch or a format-on-save no-op does not force a re-read.
package editguard
