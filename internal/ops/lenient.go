package ops

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Lenient names: a model retyping a file name often changes characters it
// cannot tell apart: U+00A0 and U+202F (macOS screenshots put U+202F before
// "AM") become a space, a decomposed é (NFD, as macOS file systems may
// store it) becomes the composed one, ’ becomes '. The exact name always
// wins; a variant is taken only where the exact component does not exist
// and exactly one entry of its directory is a variant of it.

// LenientCandidate reports whether s could differ from an existing name
// only by the characters foldVariant folds; pure ASCII without spaces or
// apostrophes cannot, and its resolution stays free of directory reads.
func LenientCandidate(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == ' ' || c == '\'' || c >= utf8.RuneSelf {
			return true
		}
	}
	return false
}

// foldVariant maps a name to the form its lenient variants share.
func foldVariant(name string) string {
	name = strings.NewReplacer("\u00a0", " ", "\u202f", " ", "\u2019", "'", "\u2018", "'").Replace(name)
	return norm.NFC.String(name)
}

// SameNameVariant reports whether a and b are lenient variants of one
// name (equal after folding spaces, apostrophes and Unicode form).
func SameNameVariant(a, b string) bool { return foldVariant(a) == foldVariant(b) }

// lenientNames maps each missing component of abs (below the root at
// rootLen) to the one entry of its directory that is a variant of it. It
// stops at the first component it cannot map; more than one variant is an
// error naming them.
func lenientNames(abs string, rootLen int) (string, error) {
	return LenientIn(abs, rootLen, string(filepath.Separator), func(p string) error { _, err := os.Lstat(p); return err }, func(dir string) ([]string, error) {
		entries, err := os.ReadDir(dir)
		names := make([]string, len(entries))
		for i, e := range entries {
			names[i] = e.Name()
		}
		return names, err
	})
}

// LenientIn is the lenient-name rule over any file system whose paths use
// sep: lstat says whether a path exists, names lists a directory. Local
// and the in-memory FS (opstest.Mem) both resolve through it.
func LenientIn(abs string, rootLen int, sep string, lstat func(string) error, names func(string) ([]string, error)) (string, error) {
	if err := lstat(abs); !errors.Is(err, fs.ErrNotExist) {
		return abs, nil
	}
	cur := abs[:rootLen]
	rest := strings.Split(strings.TrimPrefix(abs[rootLen:], sep), sep)
	for i, part := range rest {
		next := strings.TrimSuffix(cur, sep) + sep + part
		if err := lstat(next); errors.Is(err, fs.ErrNotExist) {
			found, err := variantsOf(cur, part, names)
			if err != nil || len(found) == 0 {
				return abs, nil
			}
			if len(found) > 1 {
				return abs, &variantError{dir: cur, asked: part, found: found}
			}
			next = strings.TrimSuffix(cur, sep) + sep + found[0]
		} else if err != nil {
			return abs, nil
		}
		cur = next
		if i == len(rest)-1 {
			return cur, nil
		}
	}
	return abs, nil
}

// variantsOf lists the entries of dir that are lenient variants of name.
func variantsOf(dir, name string, names func(string) ([]string, error)) ([]string, error) {
	all, err := names(dir)
	if err != nil {
		return nil, err
	}
	want := foldVariant(name)
	var found []string
	for _, n := range all {
		if n != name && foldVariant(n) == want {
			found = append(found, n)
		}
	}
	return found, nil
}

// TakenVariant reports whether resolving input to p took a lenient
// variant for the file's own name (input's name does not exist, and p names
// the one entry that differs from it only in spaces, quotes or Unicode
// form), and returns the name asked for. Reading or editing the variant is
// what the model meant; creating or replacing a file by a name that is not
// its own is refused by write (a sibling or a silent overwrite).
func TakenVariant(input string, p Path) (asked string, ok bool) {
	in := strings.TrimSpace(input)
	if inner, quoted := UnquotePath(in); quoted {
		in = inner
	}
	in = strings.TrimRight(strings.ReplaceAll(in, "\\", "/"), "/")
	asked = in[strings.LastIndexByte(in, '/')+1:]
	got := path.Base(p.Rel)
	return asked, asked != got && SameNameVariant(asked, got)
}

// variantError is a missing name with several existing variants: which
// one was meant cannot be told, so nothing is guessed.
type variantError struct {
	dir, asked string
	found      []string
}

func (e *variantError) Error() string {
	return "it does not exist, and " + quoteList(e.found) + " in the same directory differ from it only in spaces, quotes or Unicode form; send the exact name of the one you mean"
}

func quoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = "\"" + n + "\""
	}
	return strings.Join(q, " and ")
}
