// Package prefault shortens agentls's start by asking the kernel to map, on
// the second core, the pages the start is about to touch.
//
// A Go binary's start touches a few hundred pages (the runtime, about a
// hundred package inits, then the first MCP or JSON-RPC exchange), and each
// first touch is a page-fault trap. On a paravirtualised VM (this project's
// CI machine) a trap costs ~15 µs, where the kernel maps a page in ~1.5 µs
// when asked in bulk (MADV_POPULATE_READ/WRITE, Linux 5.14+). So the package's init starts one
// goroutine that maps the heap around its end and then the binary's
// read-only segments (code, read-only data), in chunks, while the inits and
// main carry on. bench/mcp measures the effect (the "prefault off" peer):
// about 3 ms of a ~20 ms connect+initialize on this project's CI machine.
// The JVM's AlwaysPreTouch and Chrome's native-library prefetch are kin.
//
// The package imports nothing but runtime and unsafe, and makes its system
// calls itself, so its init runs among the first (Go initializes packages
// in import-path order once their imports are): importing syscall would
// start it after a third of the inits. It owns no state: the goroutine ends
// when the last chunk is mapped.
//
// It does nothing off Linux on amd64/arm64, with one P (no second core to
// run on), or when AGENTLS_PREFAULT=off; a kernel without MADV_POPULATE_*
// or without /proc only ends the goroutine sooner. Mapped code and
// read-only data are the page cache's pages, shared and not charged again;
// the heap pages are ones the start mostly uses anyway.
package prefault
