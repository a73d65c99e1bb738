package textedit

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"hash"
	"slices"
	"strings"

	udiff "github.com/aymanbagabas/go-udiff"
)

// ContextLines is the number of unchanged lines around each diff hunk.
const ContextLines = 3

// Diff is the change from old to new, compared once for every form the
// edit details show (Unified, TextEdits, FirstChangedLine, Hashes): each
// comparison is a pass over the whole of both texts, milliseconds for a
// file of megabytes.
type Diff struct {
	old, new []byte
	prefix   int          // len of the common prefix of old and new
	lines    []udiff.Edit // lineDiff(old, new), never changed in place
}

// Compare diffs old and new.
func Compare(old, new []byte) Diff {
	p := commonPrefix(old, new)
	return Diff{old: old, new: new, prefix: p, lines: lineDiffFrom(old, new, p)}
}

// UnifiedDiff returns a git-style unified diff (a/path, b/path, hunks with
// ContextLines lines of context, "\ No newline at end of file" where it
// applies) that `git apply` and `patch -p1` accept. It is "" when old and
// new are equal.
func UnifiedDiff(path string, old, new []byte) string {
	return Compare(old, new).Unified(path)
}

// Unified is UnifiedDiff of the two texts.
func (d Diff) Unified(path string) string {
	if len(d.lines) == 0 {
		return ""
	}
	old, edits := d.old, slices.Clone(d.lines)
	// Diff only the window the hunks can see, so the cost follows the
	// change, not the file size.
	ws := edits[0].Start
	for k := 0; k < ContextLines && ws > 0; k++ {
		ws = bytes.LastIndexByte(old[:ws-1], '\n') + 1
	}
	we := edits[len(edits)-1].End
	for k := 0; k < ContextLines && we < len(old); k++ {
		if i := bytes.IndexByte(old[we:], '\n'); i >= 0 {
			we += i + 1
		} else {
			we = len(old)
		}
	}
	for i := range edits {
		edits[i].Start -= ws
		edits[i].End -= ws
	}
	u, err := udiff.ToUnifiedDiff(diffName("a/", path), diffName("b/", path), string(old[ws:we]), edits, ContextLines)
	if err != nil {
		// lineDiff's edits are sorted, in range and disjoint by construction.
		panic(fmt.Sprintf("textedit: inconsistent line edits: %v", err))
	}
	shift := bytes.Count(old[:ws], []byte("\n"))
	for _, h := range u.Hunks {
		h.FromLine += shift
		h.ToLine += shift
	}
	return fmt.Sprintf("diff --git a/%s b/%s\n", path, path) + u.String()
}

// CreationDiff returns the git-style diff that creates path with content
// new ("new file mode", "--- /dev/null"), which `git apply` needs to make
// the file; a diff from an empty a/path only patches an existing file.
func CreationDiff(path string, new []byte) string {
	head := fmt.Sprintf("diff --git a/%s b/%s\nnew file mode 100644\n", path, path)
	if len(new) == 0 {
		return head // git's own diff of an empty new file has no hunk
	}
	plus := "+++ " + diffName("b/", path) + "\n"
	_, hunks, _ := strings.Cut(UnifiedDiff(path, nil, new), "\n"+plus)
	return head + "--- /dev/null\n" + plus + hunks
}

// diffName is a ---/+++ file name as git writes it: a name with a space
// ends in a tab, or patch(1) would stop reading it at the space.
func diffName(prefix, path string) string {
	if strings.ContainsRune(path, ' ') {
		return prefix + path + "\t"
	}
	return prefix + path
}

// FirstChangedLine returns the 1-based line of the old text where the new
// first differs, or 0 when they are equal.
func (d Diff) FirstChangedLine() int {
	if len(d.lines) == 0 {
		return 0
	}
	return bytes.Count(d.old[:d.prefix], []byte("\n")) + 1
}

// Hash returns a stable content hash ("sha256:" and 64 hex digits): one an
// editor computes with its platform's own library (VS Code: node:crypto)
// to check a text it rebuilt against the server's.
func Hash(b []byte) string {
	return fmt.Sprintf("sha256:%x", sha256.Sum256(b))
}

// Hashes returns Hash of the old text and of the new. Their common prefix
// (all of a file before its first change) is hashed once and the state
// cloned: an edit in the middle of a file hashes 1.5 times its size, not
// twice.
func (d Diff) Hashes() (oldHash, newHash string) {
	h := sha256.New()
	h.Write(d.old[:d.prefix])
	c, err := h.(hash.Cloner).Clone()
	if err != nil {
		// crypto/sha256 clones; should it ever not, hash new whole.
		return Hash(d.old), Hash(d.new)
	}
	hn := c.(hash.Hash)
	h.Write(d.old[d.prefix:])
	hn.Write(d.new[d.prefix:])
	return fmt.Sprintf("sha256:%x", h.Sum(nil)), fmt.Sprintf("sha256:%x", hn.Sum(nil))
}

// HashesLater computes Hashes on a goroutine of its own, so the hashing
// (the slowest part of describing a change of megabytes) overlaps
// whatever the caller does meanwhile, such as writing and syncing the
// file. The function it returns waits for the goroutine and returns the
// hashes; it may be called more than once. The caller owns the goroutine:
// it must call the function on every path (a defer does), and must not
// change either text before it has returned.
func (d Diff) HashesLater() func() (oldHash, newHash string) {
	done := make(chan struct{})
	var oldHash, newHash string
	go func() {
		defer close(done)
		oldHash, newHash = d.Hashes()
	}()
	return func() (string, string) {
		<-done
		return oldHash, newHash
	}
}
