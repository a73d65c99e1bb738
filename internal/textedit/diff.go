package textedit

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"strings"

	udiff "github.com/aymanbagabas/go-udiff"
)

// ContextLines is the number of unchanged lines around each diff hunk.
const ContextLines = 3

// UnifiedDiff returns a git-style unified diff (a/path, b/path, hunks with
// ContextLines lines of context, "\ No newline at end of file" where it
// applies) that `git apply` and `patch -p1` accept. It is "" when old and
// new are equal.
func UnifiedDiff(path string, old, new []byte) string {
	edits := lineDiff(old, new)
	if len(edits) == 0 {
		return ""
	}
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

// FirstChangedLine returns the 1-based line of old where new first differs,
// or 0 when they are equal.
func FirstChangedLine(old, new []byte) int {
	if bytes.Equal(old, new) {
		return 0
	}
	return bytes.Count(old[:commonPrefix(old, new)], []byte("\n")) + 1
}

// Hash returns a stable content hash ("sha256:" and 64 hex digits): one an
// editor computes with its platform's own library (VS Code: node:crypto)
// to check a text it rebuilt against the server's.
func Hash(b []byte) string {
	return fmt.Sprintf("sha256:%x", sha256.Sum256(b))
}
