// Package textedit is the pure edit engine behind the edit and write tools.
//
// It owns matching an edit's oldText against a file (a ladder of ever looser
// comparisons: exact, line endings, trailing whitespace, Unicode folding,
// indentation), splicing the replacements, and describing the change for
// clients: LSP TextEdits against the old text, a git-style unified diff, the
// first changed line and content hashes.
//
// Invariants: the package does no I/O and holds no state. Fuzzy matches are
// mapped back to byte ranges of the original file and only those ranges are
// replaced, so every byte outside the matched lines is preserved; the BOM,
// the line-ending style and the presence or absence of a final newline are
// kept as they were.
package textedit
