package editguard

import (
	"bytes"
	"fmt"
	"io/fs"
	"sort"
	"sync"
	"time"

	"github.com/cespare/xxhash/v2"

	"github.com/agentls/agentls/internal/mention"
	"github.com/agentls/agentls/internal/ops"
)

// Fingerprint identifies a file version without reading it.
type Fingerprint struct {
	Size    int64
	MtimeNs int64
	// CtimeNs is the status change time: a same-size rewrite whose mtime
	// was put back (cp -p, rsync -t, a tool restoring times) still moves
	// it. 0 where it is not read.
	CtimeNs int64
	Inode   uint64
}

// FingerprintOf builds a fingerprint from stat information.
func FingerprintOf(fi fs.FileInfo) Fingerprint {
	return Fingerprint{Size: fi.Size(), MtimeNs: fi.ModTime().UnixNano(), CtimeNs: ctimeNs(fi), Inode: inode(fi)}
}

// keepContentBytes bounds the copy of read content kept to name the changed
// lines of a stale file; larger files keep only their hash.
const keepContentBytes = 1 << 20

// Stamp is what the model saw of one file.
type Stamp struct {
	FP Fingerprint
	// Hash is the xxhash64 of the content read: a check may hash a whole
	// file on every edit (see RacyWindow), and at 16 GB/s against sha256's
	// 1.6 GB/s here that costs 0.3 ms instead of 3 ms for 5 MB. A change is
	// not an adversary: 64 bits are plenty to tell two versions apart.
	Hash    uint64
	Content []byte // nil for files over keepContentBytes
	At      time.Time
	// Stale is set when something other than agentls changed the file
	// (bash, an external editor): the next edit must read it again.
	Stale       bool
	StaleReason string
	// gone is set when the watcher saw the file missing: a create event
	// after it is a new file, not a replacement.
	gone bool
}

// Guard holds the stamps of one session.
type Guard struct {
	fsys ops.FS
	// bufs are the editor's open documents when edits to them go to the
	// editor (workspace/applyEdit): then a document's text, not the file on
	// disk, is what a stamp must still match. Set once before use.
	bufs Buffers
	// onDeferred receives the events put off while a file was held.
	onDeferred func(p ops.Path, kind string)

	mu     sync.Mutex
	stamps map[string]*Stamp
	queues map[string]*queue
}

// New returns a guard over fsys.
func New(fsys ops.FS) *Guard {
	return &Guard{fsys: fsys, stamps: map[string]*Stamp{}, queues: map[string]*queue{}}
}

func key(p ops.Path) string { return p.OS() }

// Buffers is what the guard needs of the editor's open documents
// (overlay.Store): the text of the document open at a real path.
type Buffers interface {
	Text(path string) ([]byte, bool)
}

// UseBuffers makes open documents the truth for Check: call it once, before
// the guard is used, when edits to open documents go to the editor.
func (g *Guard) UseBuffers(b Buffers) { g.bufs = b }

// RecordRead stamps p as read (a partial read counts: content is the whole
// file it came from). It stats p for the fingerprint; a caller that has the
// FileInfo of the descriptor it read should use RecordReadInfo.
func (g *Guard) RecordRead(p ops.Path, content []byte) {
	fi, err := g.fsys.Stat(p)
	if err != nil {
		return
	}
	g.RecordReadInfo(p, fi, content)
}

// RecordReadInfo is RecordRead with the FileInfo of the version content
// came from (ops.FS.OpenRead), which costs no syscall and cannot
// fingerprint a newer version than the one read.
func (g *Guard) RecordReadInfo(p ops.Path, fi fs.FileInfo, content []byte) {
	g.record(p, FingerprintOf(fi), content)
}

// RecordBufferRead stamps p as read from the editor's open document. The
// stamp has no fingerprint, so once the document is closed the file on disk
// must hash to what was read.
func (g *Guard) RecordBufferRead(p ops.Path, content []byte) {
	g.record(p, Fingerprint{}, content)
}

// WroteBuffer refreshes p's stamp after the editor applied content to its
// open document.
func (g *Guard) WroteBuffer(p ops.Path, content []byte) {
	g.record(p, Fingerprint{}, content)
}

// RecordReadDigest is RecordReadInfo for a file read in one pass without
// being held whole (too large to): the stamp has the content's xxhash64
// (what xxhash.Sum64 of the content gives) and no copy, as for any file
// over keepContentBytes.
func (g *Guard) RecordReadDigest(p ops.Path, fi fs.FileInfo, hash uint64) {
	g.stamp(p, &Stamp{FP: FingerprintOf(fi), Hash: hash, At: time.Now()})
}

func (g *Guard) record(p ops.Path, fp Fingerprint, content []byte) {
	st := &Stamp{FP: fp, Hash: xxhash.Sum64(content), At: time.Now()}
	if len(content) <= keepContentBytes {
		st.Content = append([]byte(nil), content...)
	}
	g.stamp(p, st)
}

func (g *Guard) stamp(p ops.Path, st *Stamp) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.stamps[key(p)] = st
}

// Wrote refreshes p's stamp after agentls wrote content, so a chain of edits
// needs no re-read.
func (g *Guard) Wrote(p ops.Path, content []byte) {
	g.RecordRead(p, content)
}

// Has reports whether p has a stamp.
func (g *Guard) Has(p ops.Path) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.stamps[key(p)] != nil
}

// RacyWindow is how close to its read a file's modification time must be
// for the fingerprint to prove nothing: file systems stamp times with a
// coarse clock (a kernel tick here, 2 s on FAT), so a same-size rewrite in
// the same tick keeps size, mtime and inode. Such a stamp is checked by
// content hash instead (as git does for "racily clean" index entries).
const RacyWindow = 2 * time.Second

// racy reports whether st's fingerprint cannot vouch for the file.
func racy(st Stamp) bool {
	return st.At.Sub(time.Unix(0, st.FP.MtimeNs)) < RacyWindow
}

// StaleError is the refusal of an edit: the message tells the model what
// happened and what to do.
type StaleError struct{ Msg string }

func (e *StaleError) Error() string { return e.Msg }

// NotReadError refuses an edit of a file the session has not read. Its
// text names tools, so the caller renders it with Message and the names
// the client's model knows; Error names them bare.
type NotReadError struct{ Name string }

// Message is the refusal naming the tools as names renders them.
func (e *NotReadError) Message(names mention.Prefix) string {
	return names.Sprintf("{{read}} %s first: {{edit}} and {{write}} only change files you have read in this session (a partial read is enough).", e.Name)
}

func (e *NotReadError) Error() string { return e.Message("") }

// CheckRead is Check followed by the file's current content: the one the
// check read, else a fresh read. Edit and write need both.
func (g *Guard) CheckRead(p ops.Path) ([]byte, error) {
	current, err := g.Check(p)
	if err != nil || current != nil {
		return current, err
	}
	current, err = g.fsys.ReadFile(p)
	if err != nil {
		return nil, fmt.Errorf("cannot read %s: %w", p.Display(), err)
	}
	// The stat matched, but the file may have been replaced between that
	// stat and this read: the content must be what the model read.
	g.mu.Lock()
	st := g.stamps[key(p)]
	g.mu.Unlock()
	if st == nil || xxhash.Sum64(current) != st.Hash {
		return nil, ChangedWhileEditing(p)
	}
	return current, nil
}

// ChangedWhileEditing is the refusal of a write whose file changed after
// the check that let it start (ops.ErrChanged from ReplaceFile, which
// checks again as the new content takes the file's place).
func ChangedWhileEditing(p ops.Path) error {
	return &StaleError{fmt.Sprintf("%s changed since you read it (outside agentls, while this change was being made); nothing was written. Read it again, then redo the change.", p.Display())}
}

// Check decides whether p may be edited now: it needs a stamp whose
// fingerprint still matches, or whose content hash still matches after a
// touch. current is the file's content when the check had to read it (nil
// otherwise), so callers need not read twice.
func (g *Guard) Check(p ops.Path) (current []byte, err error) {
	g.mu.Lock()
	st := g.stamps[key(p)]
	var snap Stamp
	if st != nil {
		snap = *st
	}
	g.mu.Unlock()
	name := p.Display()
	if st == nil {
		return nil, &NotReadError{name}
	}
	if g.bufs != nil {
		if text, open := g.bufs.Text(key(p)); open {
			return checkBuffer(name, snap, text)
		}
	}
	// Always a stat: a watcher event arrives some microseconds after the
	// change, so "no event yet" cannot prove a file unchanged.
	fi, err := g.fsys.Stat(p)
	if err != nil {
		return nil, fmt.Errorf("stat %s: %w", name, err)
	}
	fp := FingerprintOf(fi)
	if fp == snap.FP && !snap.Stale && !racy(snap) {
		return nil, nil
	}
	data, err := g.fsys.ReadFile(p)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	if xxhash.Sum64(data) == snap.Hash {
		// Touched or rewritten with identical content: refresh and go.
		g.mu.Lock()
		st.FP, st.Stale, st.StaleReason = fp, false, ""
		g.mu.Unlock()
		return data, nil
	}
	if snap.FP == (Fingerprint{}) && xxhash.Sum64(DocumentText(data)) == snap.Hash {
		// Read from the editor's document, which leaves out the file's BOM
		// (or shows its UTF-16 decoded): the file is what was read. From
		// now on its bytes are what a stamp must match.
		g.mu.Lock()
		st.FP, st.Stale, st.StaleReason, st.Hash = fp, false, "", xxhash.Sum64(data)
		if st.Content != nil {
			st.Content = append([]byte(nil), data...)
		}
		g.mu.Unlock()
		return data, nil
	}
	when := fi.ModTime().Format("15:04:05")
	msg := fmt.Sprintf("%s changed since you read it (modified at %s", name, when)
	if snap.StaleReason != "" {
		msg += ", " + snap.StaleReason
	} else {
		msg += ", outside agentls"
	}
	msg += ")"
	if snap.Content != nil {
		msg += "; " + changedLines(snap.Content, data)
	}
	msg += ". Read it again before editing; the file was not changed."
	return nil, &StaleError{msg}
}

// checkBuffer is Check for a file open in the editor: the document's text
// must still be what the model read. What happened on disk does not matter
// (the editor saves over it), so a stale mark from a disk change does not
// block an edit of an unchanged document.
func checkBuffer(name string, snap Stamp, text []byte) ([]byte, error) {
	if xxhash.Sum64(text) == snap.Hash || withBOMHash(text) == snap.Hash {
		return append([]byte{}, text...), nil
	}
	msg := fmt.Sprintf("%s changed in the editor since you read it (unsaved edits)", name)
	if snap.Content != nil {
		msg += "; " + changedLines(snap.Content, text)
	}
	return nil, &StaleError{msg + ". Read it again before editing; nothing was changed."}
}

// withBOMHash is the hash of text after a UTF-8 BOM: the bytes on disk of
// a document whose file has one (editors keep the BOM out of the
// document), so a stamp of the file written on disk matches the document
// the editor then shows.
func withBOMHash(text []byte) uint64 {
	d := xxhash.New()
	d.Write([]byte{0xEF, 0xBB, 0xBF})
	d.Write(text)
	return d.Sum64()
}

// MarkStale marks p's stamp stale with a reason ("changed by a bash command").
func (g *Guard) MarkStale(p ops.Path, reason string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if st := g.stamps[key(p)]; st != nil {
		st.Stale, st.StaleReason = true, reason
	}
}

// Retain drops the stamps of the files keep rejects (by OS path): the
// session calls it when workspace folders are removed, so a folder added
// back later needs fresh reads.
func (g *Guard) Retain(keep func(osPath string) bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for k := range g.stamps {
		if !keep(k) {
			delete(g.stamps, k)
		}
	}
}

// Snapshot is the on-disk state of every stamped file at one moment.
type Snapshot map[string]Fingerprint

// Snapshot stats every stamped file (a missing file has the zero
// fingerprint). The bash tool takes one before a command and compares after.
func (g *Guard) Snapshot() Snapshot {
	g.mu.Lock()
	keys := make([]string, 0, len(g.stamps))
	for k := range g.stamps {
		keys = append(keys, k)
	}
	g.mu.Unlock()
	snap := Snapshot{}
	for _, k := range keys {
		snap[k] = g.statKey(k)
	}
	return snap
}

func (g *Guard) statKey(k string) Fingerprint {
	p, err := g.fsys.Resolve(k)
	if err != nil {
		return Fingerprint{}
	}
	fi, err := g.fsys.Stat(p)
	if err != nil {
		return Fingerprint{}
	}
	return FingerprintOf(fi)
}

// ChangedSince returns the stamped files whose on-disk state differs from
// before, marking their stamps stale with reason. It does not depend on
// whether the watcher saw the change first.
func (g *Guard) ChangedSince(before Snapshot, reason string) []ops.Path {
	var out []ops.Path
	for k, fp := range before {
		if g.statKey(k) == fp {
			continue
		}
		p, err := g.fsys.Resolve(k)
		if err != nil {
			continue
		}
		g.MarkStale(p, reason)
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].OS() < out[j].OS() })
	return out
}

// changedLines says which lines of a (what was read) differ in b (what is
// there now), from the first to the last that differ: "line 4 differs
// from what you read", "lines 3-4 differ from what you read (now lines
// 3-6)", "line 3 is new (added after line 2)", "lines 5-6 were removed".
func changedLines(a, b []byte) string {
	la := bytes.Split(a, []byte("\n"))
	lb := bytes.Split(b, []byte("\n"))
	i := 0
	for i < len(la) && i < len(lb) && bytes.Equal(la[i], lb[i]) {
		i++
	}
	// The last differing lines, 0-based; one below i when a side has none.
	ja, jb := len(la)-1, len(lb)-1
	for ja >= i && jb >= i && bytes.Equal(la[ja], lb[jb]) {
		ja--
		jb--
	}
	was, now := span(i+1, ja+1), span(i+1, jb+1)
	switch {
	case ja < i && jb < i: // only the final newline moved
		return "its end differs from what you read"
	case ja < i:
		where := fmt.Sprintf("after line %d", i)
		if i == 0 {
			where = "at the start"
		}
		if jb > i {
			return fmt.Sprintf("lines %s are new (added %s)", now, where)
		}
		return fmt.Sprintf("line %s is new (added %s)", now, where)
	case jb < i:
		if ja > i {
			return fmt.Sprintf("lines %s were removed", was)
		}
		return fmt.Sprintf("line %s was removed", was)
	}
	msg := fmt.Sprintf("lines %s differ from what you read", was)
	if ja == i {
		msg = fmt.Sprintf("line %s differs from what you read", was)
	}
	switch {
	case now == was:
	case jb > i:
		msg += fmt.Sprintf(" (now lines %s)", now)
	default:
		msg += fmt.Sprintf(" (now line %s)", now)
	}
	return msg
}

func span(a, b int) string {
	if b <= a {
		return fmt.Sprint(a)
	}
	return fmt.Sprintf("%d-%d", a, b)
}
