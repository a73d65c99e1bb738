package e2e

// What /proc says about processes, for the tests that hold agentls to
// leaving nothing behind (descriptors, threads, memory, children): they
// look from outside, as an operator would.

import (
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// proc is one process as /proc/PID/stat and cmdline describe it.
type proc struct {
	pid, ppid int
	state     string // "S", "R", "Z", …
	cmdline   string // arguments joined by spaces; empty for a zombie
}

func (p proc) String() string {
	return fmt.Sprintf("[pid %d ppid %d %s %q]", p.pid, p.ppid, p.state, p.cmdline)
}

// procs lists every process but the test's own.
func procs() []proc {
	es, _ := os.ReadDir("/proc")
	self := os.Getpid()
	var out []proc
	for _, e := range es {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue
		}
		// comm may hold spaces and parentheses: fields start after the last ')'.
		s := string(st)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) < 2 {
			continue
		}
		ppid, _ := strconv.Atoi(f[1])
		cl, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		out = append(out, proc{pid: pid, ppid: ppid, state: f[0], cmdline: strings.TrimSpace(strings.ReplaceAll(string(cl), "\x00", " "))})
	}
	return out
}

// procsWith lists the processes whose command line contains marker (a
// zombie has none, so only live ones).
func procsWith(marker string) []proc {
	var out []proc
	for _, p := range procs() {
		if strings.Contains(p.cmdline, marker) {
			out = append(out, p)
		}
	}
	return out
}

// procDescendants lists every process below pid (an unreaped child is a
// leak too), the watchdog excepted.
func procDescendants(pid int) []proc {
	kids := map[int][]proc{}
	for _, p := range procs() {
		if !isWatchdog(strconv.Itoa(p.pid)) {
			kids[p.ppid] = append(kids[p.ppid], p)
		}
	}
	var out []proc
	for q := []int{pid}; len(q) > 0; q = q[1:] {
		for _, k := range kids[q[0]] {
			out = append(out, k)
			q = append(q, k.pid)
		}
	}
	return out
}

// noDescendants fails unless pid has no process below it within d.
func noDescendants(t *testing.T, what string, pid int, d time.Duration) {
	t.Helper()
	var last []proc
	if !waitUntil(d, func() bool { last = procDescendants(pid); return len(last) == 0 }) {
		t.Errorf("%s: processes left below agentls after %v: %v", what, d, last)
	}
}

var procStatusRE = regexp.MustCompile(`(?m)^(Threads|VmRSS):\s+(\d+)`)

// procStatus returns pid's thread count and resident set (KiB).
func procStatus(t *testing.T, pid int) (threads, rssKB int) {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatalf("status of pid %d: %v", pid, err)
	}
	for _, m := range procStatusRE.FindAllStringSubmatch(string(b), -1) {
		if n, _ := strconv.Atoi(m[2]); m[1] == "Threads" {
			threads = n
		} else {
			rssKB = n
		}
	}
	return threads, rssKB
}

// procMarker is a token unique to the test, put into the command lines of
// the processes it starts (`exec -a MARKER-what …`) so /proc can tell them
// from everyone else's. Processes still carrying it when the test ends (a
// finding the test reports) are killed so they do not outlive it.
func procMarker(t *testing.T) string {
	// Digits only, so it can also be a number's fraction (`sleep 100.MARKER`).
	m := fmt.Sprintf("%d%09d", os.Getpid()%100000, time.Now().UnixNano()%1_000_000_000)
	t.Cleanup(func() {
		for _, p := range procsWith(m) {
			syscall.Kill(p.pid, syscall.SIGKILL)
		}
	})
	return m
}

// isWatchdog reports whether process pid (a /proc name) is an agentls
// watchdog (`agentls __watchdog PID`), which lives as long as its agentls:
// tests counting what agentls left behind skip it.
func isWatchdog(pid string) bool {
	cl, _ := os.ReadFile("/proc/" + pid + "/cmdline")
	args := strings.Split(string(cl), "\x00")
	return len(args) > 1 && args[1] == "__watchdog"
}
