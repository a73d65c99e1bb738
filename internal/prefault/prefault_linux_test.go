//go:build linux && (amd64 || arm64)

package prefault

import (
	"os"
	"os/exec"
	"reflect"
	"runtime"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// minorFaults counts the calling thread's minor page faults.
func minorFaults(t *testing.T) int64 {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_THREAD, &ru); err != nil {
		t.Fatal(err)
	}
	return ru.Minflt
}

// faultsTouching counts the faults of reading (or writing) one byte per
// page of b.
func faultsTouching(t *testing.T, b []byte, write bool) int64 {
	before := minorFaults(t)
	var sum byte
	for i := 0; i < len(b); i += pageSize {
		if write {
			b[i] = 1
		} else {
			sum += b[i]
		}
	}
	runtime.KeepAlive(sum)
	return minorFaults(t) - before
}

func TestPopulateMapsPagesAheadOfUse(t *testing.T) {
	runtime.LockOSThread() // RUSAGE_THREAD counts this thread only
	defer runtime.UnlockOSThread()
	const pages = 64
	size := pages * pageSize

	anon := func() []byte {
		b, err := unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { unix.Munmap(b) })
		return b
	}
	cold := anon()
	if n := faultsTouching(t, cold, true); n < pages/2 {
		t.Fatalf("writing %d fresh pages faulted %d times; this machine cannot show the difference", pages, n)
	}
	warm := anon()
	if !populate(unsafeAddr(warm), uintptr(size), madvPopulateWrite) {
		t.Skip("kernel without MADV_POPULATE_WRITE (Linux < 5.14)")
	}
	if n := faultsTouching(t, warm, true); n > 2 {
		t.Errorf("writing %d populated pages faulted %d times, want none", pages, n)
	}

	// Read-only file mappings, as the executable's: mapped without a fault.
	f, err := os.CreateTemp(t.TempDir(), "code")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(make([]byte, size)); err != nil {
		t.Fatal(err)
	}
	mapFile := func() []byte {
		b, err := unix.Mmap(int(f.Fd()), 0, size, unix.PROT_READ, unix.MAP_PRIVATE)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { unix.Munmap(b) })
		return b
	}
	if n := faultsTouching(t, mapFile(), false); n == 0 {
		t.Fatalf("reading a fresh file mapping did not fault; this machine cannot show the difference")
	}
	code := mapFile()
	populate(unsafeAddr(code), uintptr(size), madvPopulateRead)
	if n := faultsTouching(t, code, false); n > 1 {
		t.Errorf("reading a populated file mapping faulted %d times, want none", n)
	}
}

func TestExeSpansCoverThisBinarysCode(t *testing.T) {
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		t.Skip("no /proc:", err)
	}
	pc := reflect.ValueOf(TestExeSpansCoverThisBinarysCode).Pointer()
	for _, s := range exeSpans(maps) {
		if s.lo <= pc && pc < s.hi {
			return
		}
	}
	t.Errorf("no span of %#x holds this test's code at %#x", exeSpans(maps), pc)
}

func TestOptedOutReadsTheEnvironment(t *testing.T) {
	if os.Getenv("PREFAULT_HELPER") == "1" {
		if optedOut(make([]byte, 7)) { // a small buffer: entries span reads
			os.Exit(3)
		}
		os.Exit(0)
	}
	for _, tc := range []struct {
		env  string
		want int
	}{{"AGENTLS_PREFAULT=off", 3}, {"AGENTLS_PREFAULT=on", 0}} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestOptedOutReadsTheEnvironment$")
		cmd.Env = append(os.Environ(), "PREFAULT_HELPER=1", tc.env)
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		if code != tc.want {
			t.Errorf("%s: helper exited %d, want %d (3: opted out)", tc.env, code, tc.want)
		}
	}
}

func unsafeAddr(b []byte) uintptr { return uintptr(unsafe.Pointer(&b[0])) }
