package ops

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// Writes, each in the os.Root of its folder: a file's bytes go to a temp
// file renamed into place (WriteFile, ReplaceFile, CreateFile); directories
// are made, and entries renamed and removed.

func (l *Local) writable(p Path) (*os.Root, string, error) {
	if p.Folder != nil && p.Folder.ReadOnly {
		return nil, "", fmt.Errorf("%s: read-only location", p.OS())
	}
	return l.root(p)
}

// WriteFile implements FS.
func (l *Local) WriteFile(p Path, data []byte, perm fs.FileMode, before func() error) error {
	return l.ReplaceFile(p, data, perm, nil, before)
}

// ReplaceFile implements FS. The content check reads p through one open
// file and keeps its stat; the last thing before the rename is one more
// stat, which must match: a save that lands after the read moves the inode
// (a rename over p) or the size or mtime (a write in place). What is left
// is the gap between that stat and the rename: on Unix the two are one
// system call apart in the file's open directory (renameIfSame). Between
// agentls processes (an editor's and an MCP host's on one workspace) an
// advisory lock on the file read, held until the rename is done, closes
// it: the second of two racing replaces gets the lock after the first
// renamed, and its stat check then sees the new file. Other writers do not take the lock.
// Exchanging the names in one step (renameat2 RENAME_EXCHANGE) would close
// the gap for them too, but editors' file watchers then see p created and
// deleted, and VS Code marks an open file deleted.
func (l *Local) ReplaceFile(p Path, data []byte, perm fs.FileMode, expect []byte, before func() error) error {
	r, rel, err := l.writable(p)
	if err != nil {
		return err
	}
	if fi, err := r.Stat(rel); err == nil {
		perm = fi.Mode().Perm()
	}
	if expect == nil {
		return atomicWrite(r, rel, data, perm, before)
	}
	changed := fmt.Errorf("replace %s: %w", p.Rel, ErrChanged)
	tmp, err := writeTemp(r, rel, data, perm)
	if err != nil {
		return err
	}
	// Held (and so the lock) until the rename is done.
	f, read, err := openUnchanged(r, rel, p.Rel, expect, changed)
	if f != nil {
		defer f.Close()
	}
	if err == nil && before != nil {
		err = before()
	}
	if err != nil {
		r.Remove(tmp)
		return err
	}
	return renameIfSame(r, tmp, rel, read, changed)
}

// openUnchanged opens rel, takes its lock and checks that it holds
// expect; it returns the open file (to be closed after the rename, which
// releases the lock) and the stat of the version read.
func openUnchanged(r *os.Root, rel, shown string, expect []byte, changed error) (*os.File, fs.FileInfo, error) {
	f, err := r.Open(rel)
	if err != nil {
		return nil, nil, changed
	}
	if err := lockExclusive(f, ReplaceLockWait); err != nil {
		return f, nil, fmt.Errorf("replace %s: another process holds a lock on it, as an agentls changing it does (%v): %w", shown, err, ErrChanged)
	}
	read, err := f.Stat()
	if err != nil {
		return f, nil, changed
	}
	// A regular file's size is exact: another size is another version,
	// with nothing to read. Size 0 may hide content (procfs-like files).
	if read.Size() != 0 && read.Size() != int64(len(expect)) {
		return f, nil, changed
	}
	if same, err := holds(f, expect); err != nil || !same {
		return f, nil, changed
	}
	return f, read, nil
}

// ReplaceLockWait bounds how long ReplaceFile waits for another agentls
// process replacing the same file (which holds it for the moment of its
// final check and rename).
const ReplaceLockWait = 2 * time.Second

// holdsChunk is the read size of holds: big enough that a file of
// megabytes takes a few dozen reads, small enough to cost nothing to
// allocate per replace.
const holdsChunk = 256 << 10

// holds reports whether r's content (to EOF) is exactly want. It compares
// chunk by chunk as it reads, so checking a file of megabytes allocates
// one chunk, not a copy of the file (grown as it is read).
func holds(r io.Reader, want []byte) (bool, error) {
	// One byte more than want: a file that grew shows it in the last read.
	buf := make([]byte, min(len(want)+1, holdsChunk))
	for {
		n, err := io.ReadFull(r, buf)
		if n > len(want) || !bytes.Equal(buf[:n], want[:n]) {
			return false, nil
		}
		want = want[n:]
		switch err {
		case nil:
		case io.EOF, io.ErrUnexpectedEOF:
			return len(want) == 0, nil
		default:
			return false, err
		}
	}
}

// CreateFile implements FS. The content is written to a temp file first and
// linked into place, so the new name never shows partial content; the link
// fails if the name exists.
func (l *Local) CreateFile(p Path, data []byte, perm fs.FileMode, before func() error) error {
	r, rel, err := l.writable(p)
	if err != nil {
		return err
	}
	tmp, err := writeTemp(r, rel, data, perm)
	if err != nil {
		return err
	}
	defer r.Remove(tmp)
	if before != nil {
		if err := before(); err != nil {
			return err
		}
	}
	if err := r.Link(tmp, rel); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("create %s: %w", p.Rel, fs.ErrExist)
		}
		// File systems without hard links: fall back to O_EXCL create.
		f, err2 := r.OpenFile(rel, os.O_CREATE|os.O_EXCL|os.O_WRONLY, perm)
		if err2 != nil {
			return fmt.Errorf("create %s: %w", p.Rel, err2)
		}
		f.Close()
		return atomicRename(r, tmp, rel)
	}
	return nil
}

func writeTemp(r *os.Root, rel string, data []byte, perm fs.FileMode) (string, error) {
	var rnd [6]byte
	rand.Read(rnd[:])
	tmp := filepath.Join(filepath.Dir(rel), tempName(filepath.Base(rel), os.Getpid(), hex.EncodeToString(rnd[:])))
	f, err := r.OpenFile(tmp, os.O_CREATE|os.O_EXCL|os.O_WRONLY, perm)
	if err != nil {
		return "", fmt.Errorf("write %s: %w", rel, err)
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		r.Remove(tmp)
		return "", fmt.Errorf("write %s: %w", rel, err)
	}
	if err := f.Chmod(perm); err != nil && !errors.Is(err, errors.ErrUnsupported) {
		// Chmod beats the umask so an existing 0755 stays 0755.
		f.Close()
		r.Remove(tmp)
		return "", fmt.Errorf("write %s: %w", rel, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		r.Remove(tmp)
		return "", fmt.Errorf("sync %s: %w", rel, err)
	}
	if err := f.Close(); err != nil {
		r.Remove(tmp)
		return "", fmt.Errorf("write %s: %w", rel, err)
	}
	return tmp, nil
}

func atomicWrite(r *os.Root, rel string, data []byte, perm fs.FileMode, before func() error) error {
	tmp, err := writeTemp(r, rel, data, perm)
	if err != nil {
		return err
	}
	if before != nil {
		if err := before(); err != nil {
			r.Remove(tmp)
			return err
		}
	}
	return atomicRename(r, tmp, rel)
}

func atomicRename(r *os.Root, tmp, rel string) error {
	if err := r.Rename(tmp, rel); err != nil {
		r.Remove(tmp)
		return fmt.Errorf("replace %s: %w", rel, err)
	}
	syncDir(r, filepath.Dir(rel))
	return nil
}

// syncDir makes the rename durable; failures are ignored because some file
// systems do not support syncing directories.
func syncDir(r *os.Root, dir string) {
	if d, err := r.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}

// MkdirAll implements FS.
func (l *Local) MkdirAll(p Path, perm fs.FileMode) error {
	r, rel, err := l.writable(p)
	if err != nil {
		return err
	}
	return r.MkdirAll(rel, perm)
}

// Rename implements FS.
func (l *Local) Rename(from, to Path) error {
	if from.Folder != to.Folder {
		return fmt.Errorf("rename %s to %s: different workspace folders", from.Rel, to.Rel)
	}
	r, a, err := l.writable(from)
	if err != nil {
		return err
	}
	_, b, err := l.writable(to)
	if err != nil {
		return err
	}
	return r.Rename(a, b)
}

// Remove implements FS.
func (l *Local) Remove(p Path) error {
	r, rel, err := l.writable(p)
	if err != nil {
		return err
	}
	return r.Remove(rel)
}
