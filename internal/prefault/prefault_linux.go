//go:build linux && (amd64 || arm64)

package prefault

import (
	"runtime"
	"unsafe"
)

const (
	// heapAhead is how much heap, on either side of the first object the
	// package allocates, is mapped ahead of use: the start's allocations
	// fill about 3 MiB.
	heapAhead = 2 << 20
	// chunk bounds one madvise call: it holds the address space's lock
	// for reading, and the runtime's own mmap calls wait for it.
	chunk = 512 << 10

	madvPopulateRead  = 22 // MADV_POPULATE_READ, Linux 5.14
	madvPopulateWrite = 23 // MADV_POPULATE_WRITE
	atFDCWD           = -100
	// pageSize is the smallest page size. On a kernel with larger pages
	// (some arm64 ones) madvise refuses a start aligned to 4 KiB only, and
	// warm stops: those machines go without.
	pageSize = 4096
)

// rawSyscall3 makes a system call without telling the scheduler, as
// syscall.RawSyscall does; only short calls are made with it (see chunk).
// Implemented in sys_linux_*.s.
func rawSyscall3(trap, a1, a2, a3 uintptr) uintptr

func init() {
	if runtime.GOMAXPROCS(0) < 2 {
		return
	}
	go warm(16 << 10)
}

// warm maps the heap around its end (heapAhead either way, within its
// mapping), then the executable's read-only mappings, unless turned off.
func warm(bufSize int) {
	// A make of non-constant size is on the heap, in a span fresh from
	// the heap's end or near it: where the allocations still to come go.
	buf := make([]byte, bufSize)
	if optedOut(buf) {
		return
	}
	here := uintptr(unsafe.Pointer(&buf[0])) &^ (pageSize - 1)
	fd := open("/proc/self/maps\x00")
	if fd < 0 {
		populate(here, heapAhead, madvPopulateWrite)
		return
	}
	// The executable's and the heap's lines come before the mmaps': a
	// long maps file cut at len(buf) loses neither.
	maps := buf[:read(fd, buf)]
	rawSyscall3(sysClose, uintptr(fd), 0, 0)
	// The heap below here is spans handed out but mostly not yet written
	// (a span's pages are touched as its objects are allocated): the
	// start faults on it as much as on what comes after here.
	lo, hi := here, here+heapAhead
	if heap, ok := spanAt(maps, here); ok {
		lo, hi = max(heap.lo, here-min(here, heapAhead)), min(heap.hi, hi)
	}
	if !populate(lo, hi-lo, madvPopulateWrite) {
		return // no MADV_POPULATE_* here
	}
	for _, s := range exeSpans(maps) {
		if !populate(s.lo, s.hi-s.lo, madvPopulateRead) {
			return
		}
	}
}

// optedOut reports whether the environment sets AGENTLS_PREFAULT=off.
func optedOut(buf []byte) bool {
	fd := open("/proc/self/environ\x00")
	if fd < 0 {
		return false
	}
	defer rawSyscall3(sysClose, uintptr(fd), 0, 0)
	var scan optOutScan
	for {
		n := int(rawSyscall3(sysRead, uintptr(fd), uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf))))
		if n <= 0 {
			return scan.end()
		}
		if scan.feed(buf[:n]) {
			return true
		}
	}
}

// populate maps n bytes from lo, a chunk per call. It reports false when
// the kernel refuses the advice (too old), true otherwise: a range that
// went away, or an interrupted call, only stops that range.
func populate(lo, n, advice uintptr) bool {
	for off := uintptr(0); off < n; off += chunk {
		size := min(chunk, n-off)
		if errno := -int(rawSyscall3(sysMadvise, lo+off, size, advice)); errno > 0 {
			return errno != errEINVAL
		}
	}
	return true
}

// open opens a file (name NUL-terminated) for reading; a negative result
// is an error.
func open(name string) int {
	dirfd := atFDCWD
	return int(rawSyscall3(sysOpenat, uintptr(dirfd), uintptr(unsafe.Pointer(unsafe.StringData(name))), 0))
}

// read fills buf from fd as far as it goes.
func read(fd int, buf []byte) int {
	n := 0
	for n < len(buf) {
		r := int(rawSyscall3(sysRead, uintptr(fd), uintptr(unsafe.Pointer(&buf[n])), uintptr(len(buf)-n)))
		if r <= 0 {
			break
		}
		n += r
	}
	return n
}
