package ops

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"unicode/utf8"
)

// Path resolution: what a model-written path names in the folders,
// through symlinks, without leaving them.

// Resolve implements FS. Symlinks are resolved so that the returned Path
// names the real file; a link whose target leaves every root is refused, and
// an absolute link that points back inside is accepted (os.Root alone would
// refuse it).
func (l *Local) Resolve(input string) (Path, error) {
	p, err := l.resolve(input)
	// A leading "@" is a mention marker (@src/a.go) and is dropped, but a
	// name that starts with one (an npm scope, @types) is taken as it is
	// when it exists: the paths tools print must work when sent back.
	if lit := strings.TrimSpace(input); strings.HasPrefix(lit, "@") {
		if q, qerr := l.resolve("./" + lit); qerr == nil {
			if _, serr := l.Lstat(q); serr == nil {
				return q, nil
			}
		}
	}
	if inner, ok := UnquotePath(input); ok && !l.exists(p, err) {
		if q, qerr := l.Resolve(inner); qerr == nil {
			return q, nil
		}
	}
	return p, err
}

// exists reports whether a resolved path names an entry.
func (l *Local) exists(p Path, err error) bool {
	if err != nil {
		return false
	}
	_, serr := l.Lstat(p)
	return serr == nil
}

func (l *Local) resolve(input string) (Path, error) {
	p, err := CleanInput(input)
	if err != nil {
		return Path{}, err
	}
	folders := l.folderList()
	if len(folders) == 0 || folders[0].ReadOnly {
		return Path{}, &PathError{input, "no workspace folder is open"}
	}
	var abs string
	if filepath.IsAbs(p) {
		abs = filepath.Clean(p)
		inside := false
		l.mu.RLock()
		for _, f := range folders {
			if _, ok := Within(f.Root, abs); ok {
				inside = true
				break
			}
			if g := l.given[f]; g != "" {
				if rel, ok := Within(g, abs); ok {
					abs = filepath.Join(f.Root, filepath.FromSlash(rel))
					inside = true
					break
				}
			}
		}
		l.mu.RUnlock()
		if !inside {
			return Path{}, &PathError{input, fmt.Sprintf("it is outside the workspace (%s); use a path inside it", RootsList(folders))}
		}
	} else {
		rel, err := LexicalRel(input, p)
		if err != nil {
			return Path{}, err
		}
		abs = filepath.Join(folders[0].Root, filepath.FromSlash(rel))
	}
	if strings.ContainsRune(abs, utf8.RuneError) {
		abs = unmangleNames(abs)
	}
	if LenientCandidate(abs) {
		for _, f := range folders {
			if _, ok := Within(f.Root, abs); ok {
				var verr error
				if abs, verr = lenientNames(abs, len(f.Root)); verr != nil {
					return Path{}, &PathError{input, verr.Error()}
				}
				break
			}
		}
	}
	real, err := abs, error(nil)
	if !realBelowRoot(folders, abs) {
		real, err = evalExisting(abs)
	}
	if err != nil {
		if errors.Is(err, syscall.ELOOP) || strings.Contains(err.Error(), "too many links") {
			return Path{}, &PathError{input, "it is a symlink loop"}
		}
		return Path{}, &PathError{input, fmt.Sprintf("cannot resolve it: %v", err)}
	}
	for _, f := range folders {
		if rel, ok := Within(f.Root, real); ok {
			return Path{Folder: f, Rel: rel}, nil
		}
	}
	return Path{}, &PathError{input, fmt.Sprintf("it is a symlink that resolves to %s, outside the workspace", real)}
}

// unmangleNames maps components of abs that hold U+FFFD back to the names
// they stand for. A name that is not UTF-8 reaches the model with U+FFFD in
// place of its bad bytes (JSON strings are UTF-8), and the model sends that
// back; where such a component does not exist, the one entry of its
// directory that shows the same way is taken. Anything else is left as it
// was, for the resolver to report.
func unmangleNames(abs string) string {
	parts := strings.Split(abs, string(filepath.Separator))
	cur := string(filepath.Separator)
	for i, part := range parts {
		if part == "" {
			continue
		}
		next := filepath.Join(cur, part)
		if strings.ContainsRune(part, utf8.RuneError) {
			if _, err := os.Lstat(next); errors.Is(err, fs.ErrNotExist) {
				if raw, ok := shownAs(cur, part); ok {
					next = filepath.Join(cur, raw)
					parts[i] = raw
				}
			}
		}
		cur = next
	}
	return cur
}

// shownAs finds the one entry of dir whose name, made valid UTF-8, is shown.
func shownAs(dir, shown string) (string, bool) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return "", false
	}
	found := ""
	for _, e := range entries {
		if n := e.Name(); !utf8.ValidString(n) && (replacedBytes(n) == shown || strings.ToValidUTF8(n, string(utf8.RuneError)) == shown) {
			if found != "" {
				return "", false // ambiguous: refuse to guess
			}
			found = n
		}
	}
	return found, found != ""
}

// replacedBytes is s with each byte that is not part of valid UTF-8
// replaced by U+FFFD, as encoding/json writes it.
func replacedBytes(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b.WriteRune(utf8.RuneError)
		} else {
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// realBelowRoot reports whether abs (clean, absolute) lies in a folder and
// every component below that folder's root exists and is not a symlink: then
// abs is its own real path and the full symlink walk can be skipped. The
// roots themselves are real (SetFolders resolved them), so only the
// components below a root cost an lstat each, not every ancestor of the
// workspace as filepath.EvalSymlinks would. Anything else (a symlink, a
// missing component, an error) returns false and takes the full walk, which
// decides it exactly as before.
func realBelowRoot(folders []*Folder, abs string) bool {
	if !lexicalRealRoot {
		return false
	}
	for _, f := range folders {
		rel, ok := Within(f.Root, abs)
		if !ok {
			continue
		}
		if rel == "." {
			return true
		}
		// Lstat each prefix of abs that ends at a component below the root.
		start := len(abs) - len(rel)
		for i := start; i <= len(abs); i++ {
			if i < len(abs) && abs[i] != filepath.Separator {
				continue
			}
			fi, err := os.Lstat(abs[:i])
			if err != nil || fi.Mode()&fs.ModeSymlink != 0 {
				return false
			}
			if i < len(abs) && !fi.IsDir() {
				return false // "file/x": the full walk names the error
			}
		}
		return true
	}
	return false
}

// maxLinkHops bounds how many dangling symlinks evalExisting follows, as
// the kernel bounds symlink chains (Linux MAXSYMLINKS).
const maxLinkHops = 40

// evalExisting resolves symlinks in the longest existing prefix of abs and
// appends the rest, so paths of files about to be created resolve too. A
// dangling symlink in the path is followed to its target: writing through
// it would create the target, so the target is what must be contained.
func evalExisting(abs string) (string, error) {
	for hops := 0; hops <= maxLinkHops; hops++ {
		real, rest, err := evalPrefix(abs)
		if err != nil || rest == "" {
			return real, err
		}
		first, tail, _ := strings.Cut(rest, string(filepath.Separator))
		link := filepath.Join(real, first)
		fi, err := os.Lstat(link)
		if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			return filepath.Join(real, rest), nil // genuinely missing
		}
		target, err := os.Readlink(link)
		if err != nil {
			return "", err
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(real, target)
		}
		abs = filepath.Join(target, tail)
	}
	return "", &fs.PathError{Op: "resolve", Path: abs, Err: syscall.ELOOP}
}

// evalPrefix splits abs into the symlink-resolved longest existing prefix
// and the missing rest.
func evalPrefix(abs string) (real, rest string, err error) {
	cur := abs
	for {
		real, err := filepath.EvalSymlinks(cur)
		if err == nil {
			return real, rest, nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", "", err
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return abs, "", nil
		}
		if rest == "" {
			rest = filepath.Base(cur)
		} else {
			rest = filepath.Join(filepath.Base(cur), rest)
		}
		cur = parent
	}
}

// RootsList names the writable roots of folders, for a refusal that says
// where the workspace is.
func RootsList(folders []*Folder) string {
	var names []string
	for _, f := range folders {
		if !f.ReadOnly {
			names = append(names, f.Root)
		}
	}
	return "workspace: " + strings.Join(names, ", ")
}

func (l *Local) root(p Path) (*os.Root, string, error) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	r := l.roots[p.Folder]
	if r == nil {
		return nil, "", fmt.Errorf("%s: workspace folder is no longer open", p.Rel)
	}
	rel := p.Rel
	if rel == "" {
		rel = "."
	}
	return r, filepath.FromSlash(rel), nil
}
