package ops

import (
	"fmt"
	"io/fs"
	"net/url"
	"path"
	"path/filepath"
	"strconv"
	"strings"
)

// Folder is one workspace root.
type Folder struct {
	Name string // display name (base name unless the client gave one)
	Root string // absolute, symlink-free OS path
	// ReadOnly marks extra roots (spill files) that tools may read but never write.
	ReadOnly bool
	// Primary marks the first workspace folder, the one relative paths
	// resolve against. Set when the folder list is built, never after.
	Primary bool
	// opened is the directory Local has open for the folder (its stat),
	// which Refresh compares with what is at Root now; under Local.mu.
	opened fs.FileInfo
}

// Path is a resolved, contained location: the result of Resolve, the only
// currency the FS methods accept.
type Path struct {
	Folder *Folder
	Rel    string // slash-separated, relative to Folder.Root; "." for the root itself
}

// OS returns the absolute OS path.
func (p Path) OS() string {
	if p.Folder == nil {
		return ""
	}
	if p.Rel == "." || p.Rel == "" {
		return p.Folder.Root
	}
	return filepath.Join(p.Folder.Root, filepath.FromSlash(p.Rel))
}

// Display is the path as the model should see it: relative to the first
// workspace folder when inside it, otherwise absolute. Either way, passing
// it back to a tool names the same file: a relative path in another folder
// would resolve against the first one.
func (p Path) Display() string {
	if p.Folder == nil {
		return ""
	}
	if !p.Folder.Primary {
		return p.OS()
	}
	return p.Rel
}

// DisplayPrefix is what Display puts before a path relative to f: "" for
// the first folder, f's root and a separator for any other.
func (f *Folder) DisplayPrefix() string {
	if f == nil || f.Primary {
		return ""
	}
	return filepath.ToSlash(f.Root) + "/"
}

// PathError explains why a model-written path was refused. Its message is
// written for the model: what was wrong and what to send instead.
type PathError struct {
	Input  string
	Reason string
}

func (e *PathError) Error() string {
	return fmt.Sprintf("path %q refused: %s", e.Input, e.Reason)
}

// CleanInput applies the lenient normalizations that need no file system
// (surrounding space, leading "@", file:// URIs) and the refusals that need no file system (NUL, "~", device
// paths). It returns an OS-style path, possibly relative.
func CleanInput(in string) (string, error) {
	// Odd spaces are kept: the exact name always wins, and a variant is
	// looked for only when it does not exist (lenientNames).
	p := strings.TrimSpace(in)
	p = strings.TrimPrefix(p, "@")
	if rest, ok := strings.CutPrefix(p, "file://"); ok {
		// Editors send URIs percent-encoded ("my%20file.go"); a model may
		// also paste one unencoded, so decoding failures keep the raw text.
		p = strings.TrimPrefix(rest, "localhost/")
		if p != rest {
			p = "/" + p
		}
		if dec, err := url.PathUnescape(p); err == nil {
			p = dec
		}
	}
	switch {
	case p == "":
		return "", &PathError{in, "the path is empty; give a path relative to the workspace root, e.g. \"src/main.go\""}
	case strings.ContainsRune(p, 0):
		return "", &PathError{in, "it contains a NUL byte"}
	case strings.HasPrefix(p, "~"): // "~", "~/x", "~user"
		return "", &PathError{in, "\"~\" (home directory) is not expanded and is outside the workspace; use a path relative to the workspace root"}
	case strings.HasPrefix(p, "/dev/") || strings.HasPrefix(p, "/proc/") || strings.HasPrefix(p, "/sys/") || strings.HasPrefix(p, `\\.\`):
		return "", &PathError{in, "device and kernel paths are not workspace files"}
	}
	return filepath.FromSlash(p), nil
}

// UnquotePath is in without one pair of surrounding quotes ("x", 'x',
// `x`), which a model sometimes copies from a shell line or a message. The
// resolvers take it only when the quoted name itself does not exist.
func UnquotePath(in string) (string, bool) {
	s := strings.TrimSpace(in)
	if len(s) < 3 {
		return "", false
	}
	q := s[0]
	if q != '"' && q != '\'' && q != '`' || s[len(s)-1] != q {
		return "", false
	}
	inner := s[1 : len(s)-1]
	if q == '"' && strings.IndexByte(inner, '\\') >= 0 {
		// A name as ShowName quotes it ("new\nline.txt"): its escapes
		// stand for the bytes.
		if u, err := strconv.Unquote(s); err == nil {
			return u, true
		}
	}
	if strings.IndexByte(inner, q) >= 0 {
		return "", false // more than one pair: not a quoted path
	}
	return inner, true
}

// ShowName is a workspace-relative path as listings print it (ls, find,
// grep): as is, or, when it holds a control character (a newline, a tab,
// an escape sequence), Go-quoted ("new\nline.txt"), so that one name is
// one line and cannot pass for other output. The resolvers take the
// quoted form back (UnquotePath).
func ShowName(rel string) string {
	for i := 0; i < len(rel); i++ {
		if c := rel[i]; c < 0x20 || c == 0x7f {
			return strconv.Quote(rel)
		}
	}
	return rel
}

// Within reports whether abs (clean, absolute) lies inside root (clean,
// absolute), and the slash-separated relative path. It compares whole path
// elements, so "/ws2" is not inside "/ws".
func Within(root, abs string) (string, bool) {
	if abs == root {
		return ".", true
	}
	n := len(root)
	if !strings.HasSuffix(root, string(filepath.Separator)) {
		n++ // the separator after root
	}
	if len(abs) < n || !strings.HasPrefix(abs, root) || abs[n-1] != filepath.Separator {
		return "", false
	}
	return filepath.ToSlash(abs[n:]), true
}

// LexicalRel checks a relative path lexically: no component may climb above
// the root.
func LexicalRel(in, rel string) (string, error) {
	s := path.Clean(filepath.ToSlash(rel))
	if s == ".." || strings.HasPrefix(s, "../") {
		return "", &PathError{in, "it climbs out of the workspace with \"..\"; use a path inside the workspace"}
	}
	return s, nil
}

// Share is which files of a workspace folder it owns. A path resolves to
// the first folder holding it, so a folder equal to or inside an earlier
// one owns none (Covered), and the subtree of an earlier folder inside it
// is that folder's (Skip: directories relative to it). A walk of every
// folder (a search, the watchers) walks each file once by walking the
// folders' shares.
type Share struct {
	Folder  *Folder
	Covered bool
	Skip    []string
}

// Shares returns the share of each folder, in order.
func Shares(folders []*Folder) []Share {
	out := make([]Share, len(folders))
	for i, f := range folders {
		out[i].Folder = f
		for _, g := range folders[:i] {
			if g.Root == f.Root {
				out[i].Covered = true
			} else if _, in := Within(g.Root, f.Root); in {
				out[i].Covered = true
			} else if rel, in := Within(f.Root, g.Root); in {
				out[i].Skip = append(out[i].Skip, rel)
			}
		}
	}
	return out
}

// Owns reports whether the file at rel (relative to the folder) is this
// share's.
func (s Share) Owns(rel string) bool {
	if s.Covered {
		return false
	}
	for _, d := range s.Skip {
		if rel == d || strings.HasPrefix(rel, d+"/") {
			return false
		}
	}
	return true
}
