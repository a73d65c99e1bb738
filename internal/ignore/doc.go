// Package ignore owns the one ignore engine of agentls: which paths of a
// workspace folder are hidden from ls, find, grep's Go fallback and the file
// watcher.
//
// Semantics follow git exactly for .gitignore files, .git/info/exclude and
// the user's global excludes file (core.excludesFile); lines are parsed by
// github.com/boyter/gocodewalker/go-gitignore and matched with its
// semantics, but by a memoized fnmatch here, so a hostile line such
// as "*a*a*a*a*a*b" costs polynomial, not exponential, time; scoping,
// precedence and "an excluded directory hides everything below it" here,
// all verified against `git check-ignore` by a conformance test. On top of git,
// as ripgrep does, .ignore and .agentlsignore files use the same syntax and
// scoping but take priority over .gitignore (.agentlsignore highest). The
// rules apply inside and outside git repositories (like rg --no-require-git),
// a nested repository (a directory holding .git) starts a fresh set of git
// rules, and .git itself is always ignored. The global excludes file ranks
// lowest, below info/exclude, and is anchored at the repository root (the
// folder root outside any repository); a nested repository applies it again
// from its own root.
//
// All reads go through an fs.FS rooted at the workspace folder; rule files
// are read lazily and cached per directory until Invalidate (Walk also
// revalidates a directory's rule files by size and mtime as it passes).
// Rules from outside the folder come in as an Outer (the operations layer
// reads them, and finds the global file from git's config): git applies a
// repository's rule files to a subdirectory opened as the workspace, and the
// global file everywhere. Nested repositories reuse the folder's global
// file rather than reading their own config.
//
// On Linux, when the fs.FS hands out *os.File directories (os.DirFS, os.Root.FS), Walk lists
// directories through descriptors opened one name at a time relative to the
// parent (O_NOFOLLOW, so it stays inside the root as os.Root does) with entry
// types from getdents: os.Root.FS's ReadDir would re-resolve every path
// component and lstat every entry, which made the walk 2-3× slower.
package ignore
