// Package editguard owns what the model has seen: a read stamp per real
// file path (fingerprint, content hash, ranges read, time), the staleness
// check that edit and write must pass, and the per-file FIFO write queue.
//
// A stamp is keyed by the resolved real path, so symlink aliases share one
// stamp and one queue. A check is a stat compared with the stamp's
// fingerprint; only a changed fingerprint, or one too close to the read to
// vouch for the content (RacyWindow), costs a read and a hash, so a touch
// or a format-on-save no-op does not force a re-read.
//
// The file watcher's events (Observe) mark stamps stale with a reason and
// feed the client's change notifications; they never replace the stat: an
// event arrives microseconds after the change it reports, and an edit in
// between must still see it. After lost events (queue overflow) RecheckAll
// stats every stamp.
package editguard
