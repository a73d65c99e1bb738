package spill

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/agentls/agentls/internal/owner"
)

const (
	// MaxTotalBytes caps the bytes all spill files of one directory hold together.
	MaxTotalBytes = 256 << 20
	// MaxFileBytes caps one spill file; writers stop at it and note the cut.
	MaxFileBytes = 64 << 20
	// CacheDirEnv overrides the cache base (default os.UserCacheDir()/agentls).
	CacheDirEnv = "AGENTLS_CACHE_DIR"
)

// hashLen is how many hex digits of the workspace hash name a directory.
const hashLen = 12

// dirPID returns the pid of a directory name Open creates,
// <hashLen lowercase hex digits>-<pid>; ok is false for any other name.
// A loop, not a regexp, so package init costs nothing.
func dirPID(name string) (pid int, ok bool) {
	hash, digits, found := strings.Cut(name, "-")
	if !found || len(hash) != hashLen || digits == "" {
		return 0, false
	}
	for i := 0; i < len(hash); i++ {
		if c := hash[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return 0, false
		}
	}
	for i := 0; i < len(digits); i++ {
		if c := digits[i]; c < '0' || c > '9' {
			return 0, false
		}
	}
	pid, err := strconv.Atoi(digits)
	if err != nil {
		return 0, false
	}
	return pid, true
}

// Dir is one server's spill directory. It is safe for concurrent use.
type Dir struct {
	path     string
	maxTotal int64 // MaxTotalBytes; smaller in tests

	mu    sync.Mutex
	seq   int
	files []string // in creation order, oldest first
}

// Base returns the directory holding every server's spill directories:
// $AGENTLS_CACHE_DIR/spill, else os.UserCacheDir()/agentls/spill.
func Base() (string, error) {
	if b := os.Getenv(CacheDirEnv); b != "" {
		return filepath.Join(b, "spill"), nil
	}
	c, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("spill: no cache directory (set %s): %w", CacheDirEnv, err)
	}
	return filepath.Join(c, "agentls", "spill"), nil
}

// Open creates the spill directory for workspaceRoot under Base, removing stale
// directories of dead servers first.
func Open(workspaceRoot string) (*Dir, error) {
	base, err := Base()
	if err != nil {
		return nil, err
	}
	return OpenIn(base, workspaceRoot)
}

// OpenIn is Open with an explicit base directory.
func OpenIn(base, workspaceRoot string) (*Dir, error) {
	CleanStale(base)
	sum := sha256.Sum256([]byte(workspaceRoot))
	p := filepath.Join(base, hex.EncodeToString(sum[:])[:hashLen]+"-"+strconv.Itoa(os.Getpid()))
	if err := os.MkdirAll(p, 0o700); err != nil {
		return nil, fmt.Errorf("spill: create %s: %w", p, err)
	}
	return &Dir{path: p, maxTotal: MaxTotalBytes}, nil
}

// Path returns the directory's absolute path.
func (d *Dir) Path() string { return d.path }

// Create makes a new empty file named after prefix, first removing the oldest files until
// a full-size file (MaxFileBytes) fits under MaxTotalBytes. The caller writes at most
// MaxFileBytes to it.
func (d *Dir) Create(prefix string) (*os.File, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.create(prefix, MaxFileBytes)
}

// Save writes data (cut to MaxFileBytes) to a new file and returns its path.
func (d *Dir) Save(prefix string, data []byte) (string, error) {
	if len(data) > MaxFileBytes {
		data = data[:MaxFileBytes]
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	f, err := d.create(prefix, int64(len(data)))
	if err != nil {
		return "", err
	}
	_, werr := f.Write(data)
	cerr := f.Close()
	if err := errors.Join(werr, cerr); err != nil {
		return "", fmt.Errorf("spill: write %s: %w", f.Name(), err)
	}
	return f.Name(), nil
}

// create must be called with d.mu held.
func (d *Dir) create(prefix string, need int64) (*os.File, error) {
	d.makeRoom(need)
	d.seq++
	// The sequence number keeps names ordered and unique; CreateTemp adds randomness so a
	// name cannot be predicted and pre-created by someone else.
	f, err := os.CreateTemp(d.path, fmt.Sprintf("%s-%06d-*.log", prefix, d.seq))
	if err != nil {
		return nil, fmt.Errorf("spill: create file in %s: %w", d.path, err)
	}
	d.files = append(d.files, f.Name())
	return f, nil
}

// makeRoom removes the oldest files until need more bytes fit under the total cap.
func (d *Dir) makeRoom(need int64) {
	var total int64
	sizes := make([]int64, 0, len(d.files))
	kept := d.files[:0]
	for _, p := range d.files {
		fi, err := os.Stat(p)
		if err != nil {
			continue // removed by someone else: forget it
		}
		kept = append(kept, p)
		sizes = append(sizes, fi.Size())
		total += fi.Size()
	}
	d.files = kept
	i := 0
	for ; i < len(d.files) && total+need > d.maxTotal; i++ {
		_ = os.Remove(d.files[i]) // best effort: a failure only leaves a file behind
		total -= sizes[i]
	}
	d.files = append(d.files[:0], d.files[i:]...)
}

// Close removes the directory and everything in it.
func (d *Dir) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.files = nil
	if err := os.RemoveAll(d.path); err != nil {
		return fmt.Errorf("spill: remove %s: %w", d.path, err)
	}
	return nil
}

// CleanStale removes the spill directories under base whose server process is gone.
// Only names Open creates are touched; errors are ignored (it is housekeeping).
func CleanStale(base string) {
	entries, err := os.ReadDir(base)
	if err != nil {
		return
	}
	self := os.Getpid()
	for _, e := range entries {
		pid, ok := dirPID(e.Name())
		if !ok || e.Type()&fs.ModeType != fs.ModeDir {
			continue
		}
		if pid == self || owner.Alive(pid) {
			continue
		}
		_ = os.RemoveAll(filepath.Join(base, e.Name()))
	}
}
