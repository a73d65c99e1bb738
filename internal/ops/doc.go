// Package ops is the operations layer: the only way tools touch the world.
//
// It owns workspace folders and path resolution (every model-written path
// goes through [Resolver] once), and the file and process operations tools
// use. The local implementation opens one [os.Root] per workspace folder so
// that ".." and outward symlinks cannot escape even if a resolved path races
// with a symlink swap. The in-memory implementation unit tests use is in
// package opstest, outside the shipped binary.
//
// Tools must not call os.* for workspace files; they receive an [FS].
package ops
