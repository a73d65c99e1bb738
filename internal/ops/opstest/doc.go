// Package opstest holds what tests need of the operations layer and the
// shipped binary does not: Mem, an in-memory [ops.FS] that resolves paths
// through the same steps as ops.Local, and ReadFileInfo. Only _test.go files
// import it.
package opstest
