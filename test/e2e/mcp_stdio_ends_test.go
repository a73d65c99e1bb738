package e2e

// The stdio behaviour of `agentls mcp` (docs/protocol.md's MCP section):
// newline-delimited JSON, malformed lines answered, end of input, SIGTERM,
// cancellation, a client that stops reading, over pipes and over Unix
// socket pairs (what Node.js hosts give a child), and no CPU used while
// idle. The server is driven by hand over raw pipes.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agentls/agentls/test/harness"
)

// mcpioClkTck is USER_HZ, the unit of utime and stime in /proc/<pid>/stat.
const mcpioClkTck = 100

// An idle server is measured over mcpioIdleWindow after mcpioIdleSettle
// and may use 1/mcpioIdleShare of it (5 %): the Go runtime's housekeeping
// (a GC cycle finishing, the scavenger, about 1 % of a CPU) stays under
// that on a loaded machine, a loop polling its input does not.
const (
	mcpioIdleSettle = 500 * time.Millisecond
	mcpioIdleWindow = 2 * time.Second
	mcpioIdleShare  = 20
)

// mcpioProc is one `agentls mcp` child on raw stdio pipes or socket
// pairs, read as MCP lines by the shared raw client through a gate.
type mcpioProc struct {
	*mcpRawConn
	label string
	gate  sync.Mutex    // held by a test, stops the client reading stdout
	done  chan struct{} // closed once the process has exited
}

// gatedReader reads only while its gate is free.
type gatedReader struct {
	r    io.Reader
	gate *sync.Mutex
}

func (g gatedReader) Read(b []byte) (int, error) {
	g.gate.Lock()
	g.gate.Unlock()
	return g.r.Read(b)
}

// mcpioEnv is the environment with user settings selecting mode bypass
// (bash and write run unasked); exec keeps the last of duplicate keys.
func mcpioEnv(t *testing.T) []string { return append(os.Environ(), mcpRawBypassEnv(t)) }

// mcpioStart runs `agentls mcp --root root`. With sock, stdin and stdout are
// Unix socket pairs (as Node.js's child_process gives a child), else pipes.
func mcpioStart(t *testing.T, label, root string, sock bool) *mcpioProc {
	t.Helper()
	cmd := exec.Command(harness.Binary(t), "mcp", "--root", root)
	cmd.Env = mcpioEnv(t)
	pair := os.Pipe
	if sock {
		pair = mcpioSocketPair
	}
	inR, inW, err := pair()
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, err := pair()
	if err != nil {
		t.Fatal(err)
	}
	stderr := &lockedBuffer{}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	inR.Close()
	outW.Close()
	c := &mcpRawClient{taken: map[int]bool{}}
	c.rawClient = &rawClient[mcpMsg]{t: t, cmd: cmd, stdin: inW, stderr: stderr, lines: true, wake: make(chan struct{}), exited: make(chan struct{})}
	c.setHandler(refuseRequests)
	p := &mcpioProc{mcpRawConn: &mcpRawConn{mcpRawClient: c, nextID: 1000}, label: label, done: make(chan struct{})}
	go func() {
		cmd.Wait()
		close(p.done)
	}()
	go func() {
		c.readLines(bufio.NewReaderSize(gatedReader{outR, &p.gate}, 1<<20), c.rawClient)
		<-p.done
		outR.Close()
		close(c.exited)
	}()
	t.Cleanup(func() {
		// The gate ends open, held by the test or not, or the read loop
		// (and close, which waits for it) would wait for ever.
		p.gate.TryLock()
		p.gate.Unlock()
		c.close()
		if t.Failed() {
			t.Logf("[%s] stderr tail:\n%s", label, lastBytes(stderr.String(), 4000))
		}
	})
	return p
}

// mcpioSocketPair is a connected Unix stream socket pair.
func mcpioSocketPair() (*os.File, *os.File, error) {
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err != nil {
		return nil, nil, err
	}
	syscall.CloseOnExec(fds[0]) // SOCK_CLOEXEC is Linux's: this builds on macOS too
	syscall.CloseOnExec(fds[1])
	return os.NewFile(uintptr(fds[0]), "sock-a"), os.NewFile(uintptr(fds[1]), "sock-b"), nil
}

func (p *mcpioProc) closeStdin() {
	p.wmu.Lock()
	defer p.wmu.Unlock()
	p.stdin.Close()
}

// mcpioReqLine is the newline-terminated line of a request.
func mcpioReqLine(id int, method string, params any) []byte {
	msg := map[string]any{"jsonrpc": "2.0", "id": id, "method": method}
	if params != nil {
		msg["params"] = params
	}
	b, _ := json.Marshal(msg)
	return append(b, '\n')
}

func mcpioCallLine(id int, tool string, args any) []byte {
	return mcpioReqLine(id, "tools/call", map[string]any{"name": tool, "arguments": args})
}

func mcpioIsID(id int) func(mcpMsg) bool { return mcpRawIDIs(strconv.Itoa(id)) }

// response waits for the response with the given id or fails the test.
func (p *mcpioProc) response(what string, id int) mcpMsg {
	p.t.Helper()
	return p.expect(fmt.Sprintf("[%s] %s (id %d)", p.label, what, id), mcpioIsID(id))
}

// countID is how many responses carry the id.
func (p *mcpioProc) countID(id int) int { return len(p.matching(mcpioIsID(id))) }

// wantRead checks a read result shows file i's token and no other's.
func (p *mcpioProc) wantRead(what string, m mcpMsg, i int) {
	p.t.Helper()
	r := p.toolResult(m)
	text, isErr := r.text(), r.IsError
	if isErr || !strings.Contains(text, mcpioToken(i)) || !strings.Contains(text, mcpioName(i)) {
		p.t.Errorf("[%s] %s: read of %s gave (isError=%v) %.300q, want its token %s", p.label, what, mcpioName(i), isErr, text, mcpioToken(i))
	}
	for j := 0; j < mcpioFiles; j++ {
		if j != i && strings.Contains(text, mcpioToken(j)) {
			p.t.Errorf("[%s] %s: read of %s shows another file's token %s", p.label, what, mcpioName(i), mcpioToken(j))
		}
	}
}

const mcpioFiles = 12

func mcpioName(i int) string { return fmt.Sprintf("file%02d.txt", i) }

func mcpioToken(i int) string {
	return fmt.Sprintf("TOKEN-%02d-%s", i, strings.Repeat(string(rune('a'+i)), 6))
}

// mcpioWorkspace holds mcpioFiles small files, each with its own token.
func mcpioWorkspace(t *testing.T) string {
	root := t.TempDir()
	for i := 0; i < mcpioFiles; i++ {
		writeFile(t, filepath.Join(root, mcpioName(i)), fmt.Sprintf("first line of %d\n%s\nlast line\n", i, mcpioToken(i)))
	}
	return root
}

func mcpioReadArgs(i int) map[string]any { return map[string]any{"path": mcpioName(i)} }

// mcpioCPU is the process's utime+stime from /proc/<pid>/stat (all threads,
// also those that ended) and the sum of its live threads' run time from
// /proc/<pid>/task/*/schedstat (ns precision).
func mcpioCPU(t *testing.T, pid int) (stat, sched time.Duration) {
	t.Helper()
	f := mcpioStat(pid)
	if len(f) < 13 {
		t.Fatalf("/proc/%d/stat: %q", pid, f)
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	stat = time.Duration(ut+st) * time.Second / mcpioClkTck
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", pid))
	for _, tp := range tasks {
		b, err := os.ReadFile(tp)
		if err != nil {
			continue
		}
		if fs := strings.Fields(string(b)); len(fs) > 0 {
			ns, _ := strconv.ParseInt(fs[0], 10, 64)
			sched += time.Duration(ns)
		}
	}
	return stat, sched
}

// checkIdle settles mcpioIdleSettle, then asserts the process used at
// most 1/mcpioIdleShare of the next mcpioIdleWindow of CPU.
func (p *mcpioProc) checkIdle(what string) {
	p.t.Helper()
	time.Sleep(mcpioIdleSettle)
	pid := p.cmd.Process.Pid
	s0, n0 := mcpioCPU(p.t, pid)
	start := time.Now()
	time.Sleep(mcpioIdleWindow)
	s1, n1 := mcpioCPU(p.t, pid)
	window := time.Since(start) // a loaded machine may sleep longer
	limit := window / mcpioIdleShare
	p.t.Logf("[%s] idle %s: utime+stime +%v, schedstat +%v in %v (limit %v)", p.label, what, s1-s0, n1-n0, window.Round(time.Millisecond), limit.Round(time.Millisecond))
	if s1-s0 > limit || n1-n0 > limit {
		p.t.Errorf("[%s] idle %s: the server used utime+stime %v (threads' run time %v) in %v while no message came, over 1/%d of it; an idle server must not poll", p.label, what, s1-s0, n1-n0, window.Round(time.Millisecond), mcpioIdleShare)
	}
}

// stopReading makes the client stop reading stdout until the gate is
// unlocked. After the lock the read loop is either inside a read, which
// takes the next answer (a ping's) and then waits at the gate, or waiting
// at the gate already, the ping's answer left in the pipe: either way
// nothing more is read, so the ping's answer is awaited but not required.
func (p *mcpioProc) stopReading() {
	p.t.Helper()
	p.gate.Lock()
	id := p.start("ping", nil)
	if m, ok := p.wait(2*time.Second, mcpRawIDIs(strconv.Itoa(id))); ok && m.Error != nil {
		p.gate.Unlock()
		p.t.Fatalf("[%s] ping: error %d %s", p.label, m.Error.Code, m.Error.Message)
	}
}

// mcpioMode is one way of starting the server.
type mcpioMode struct {
	name string
	sock bool
}

var mcpioModes = []mcpioMode{{name: "pipe"}, {name: "socket", sock: true}}

func (m mcpioMode) start(t *testing.T, root string) *mcpioProc {
	t.Helper()
	p := mcpioStart(t, m.name, root, m.sock)
	p.initialize("2025-06-18", nil)
	return p
}

// --- scenarios shared by the modes -----------------------------------------

// lockstep: many calls, each sent the moment the previous answer arrives
// (an agent running a batch), answered in order with the right content.
func (p *mcpioProc) lockstep(n int) {
	p.t.Helper()
	for k := 0; k < n; k++ {
		i := k % mcpioFiles
		var id int
		if k%5 == 4 {
			id = p.start("ping", nil)
			m := p.response("ping", id)
			if m.Error != nil {
				p.t.Fatalf("[%s] ping %d: error %d %s", p.label, k, m.Error.Code, m.Error.Message)
			}
		} else {
			id = p.startCall("read", mcpioReadArgs(i))
			p.wantRead(fmt.Sprintf("lockstep call %d", k), p.response("read", id), i)
		}
		if p.countID(id) != 1 {
			p.t.Errorf("[%s] lockstep %d: %d responses for id %d", p.label, k, p.countID(id), id)
		}
	}
}

// pipelined: n calls written one by one without waiting; every one is
// answered once with its own file's content.
func (p *mcpioProc) pipelined(n int) {
	p.t.Helper()
	ids := make([]int, n)
	for k := range ids {
		ids[k] = p.startCall("read", mcpioReadArgs(k%mcpioFiles))
	}
	for k, id := range ids {
		p.wantRead(fmt.Sprintf("pipelined call %d", k), p.response("read", id), k%mcpioFiles)
	}
	time.Sleep(50 * time.Millisecond)
	for k, id := range ids {
		if c := p.countID(id); c != 1 {
			p.t.Errorf("[%s] pipelined call %d: %d responses for id %d", p.label, k, c, id)
		}
	}
}

// splitWrites: messages cut across writes, and several in one write.
func (p *mcpioProc) splitWrites() {
	p.t.Helper()
	// Half a line, a pause (far longer than a message takes), the rest.
	id := p.newID()
	line := mcpioCallLine(id, "read", mcpioReadArgs(3))
	half := len(line) / 2
	p.write(line[:half])
	time.Sleep(60 * time.Millisecond)
	if _, ok := p.wait(0, mcpioIsID(id)); ok {
		p.t.Errorf("[%s] half a line was answered before its end came", p.label)
	}
	p.write(line[half:])
	p.wantRead("half line, pause, rest", p.response("read", id), 3)

	// One byte per write, with short pauses.
	id = p.newID()
	line = mcpioCallLine(id, "read", mcpioReadArgs(5))
	for k := range line {
		p.write(line[k : k+1])
		if k%8 == 0 {
			time.Sleep(time.Millisecond)
		}
	}
	p.wantRead("one byte per write", p.response("read", id), 5)

	// Several messages in one write: calls, a notification, a ping.
	var buf []byte
	var ids []int
	for k := 0; k < 10; k++ {
		ids = append(ids, p.newID())
		buf = append(buf, mcpioCallLine(ids[k], "read", mcpioReadArgs(k))...)
		if k == 4 {
			buf = append(buf, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"none","progress":1}}`+"\n"...)
		}
	}
	pingID := p.newID()
	buf = append(buf, mcpioReqLine(pingID, "ping", nil)...)
	p.write(buf)
	for k, id := range ids {
		p.wantRead(fmt.Sprintf("message %d of one write", k), p.response("read", id), k)
	}
	if m := p.response("ping", pingID); m.Error != nil {
		p.t.Errorf("[%s] ping in one write: error %d %s", p.label, m.Error.Code, m.Error.Message)
	}
}

// bigLines: 1 MB lines, in one write and in pieces (oversize ones oversizeLine).
func (p *mcpioProc) bigLines(root string) {
	p.t.Helper()
	mk := func(seed int) string {
		var sb strings.Builder
		for k := 0; sb.Len() < 1<<20; k++ {
			fmt.Fprintf(&sb, "line %07d of seed %d: the quick brown fox\n", k, seed)
		}
		return sb.String()
	}
	for _, piece := range []int{0, 4093} {
		content := mk(piece)
		name := fmt.Sprintf("big-%s-%d.txt", p.label, piece)
		id := p.newID()
		line := mcpioCallLine(id, "write", map[string]any{"path": name, "content": content})
		if piece == 0 {
			p.write(line)
		} else {
			for k := 0; k < len(line); k += piece {
				e := k + piece
				if e > len(line) {
					e = len(line)
				}
				p.write(line[k:e])
				if (k/piece)%16 == 0 {
					time.Sleep(time.Millisecond)
				}
			}
		}
		if r := p.toolResult(p.response("write", id)); r.IsError {
			p.t.Errorf("[%s] 1 MB write (pieces of %d bytes) failed: %.300q", p.label, piece, r.text())
			continue
		}
		got, err := os.ReadFile(filepath.Join(root, name))
		if err != nil || string(got) != content {
			p.t.Errorf("[%s] 1 MB write (pieces of %d bytes): file has %d bytes (err %v), want the %d sent", p.label, piece, len(got), err, len(content))
		}
	}
	id := p.startCall("read", mcpioReadArgs(9))
	p.wantRead("call after 1 MB lines", p.response("read", id), 9)
}

// oversizeLine: a line over 16 MiB gets an error reply and the session goes on.
func (p *mcpioProc) oversizeLine() {
	p.t.Helper()
	n := p.count()
	p.start("ping", map[string]any{"_meta": map[string]any{"pad": strings.Repeat("y", 17<<20)}})
	if _, ok := p.waitFrom(n, mcpRawTimeout, func(x mcpMsg) bool { return x.Error != nil }); !ok {
		p.t.Errorf("[%s] a 17 MiB line got no error reply (docs: longer than 16 MiB gets an error reply); got:\n%s", p.label, p.dump())
	}
	p.wantRead("call after a 17 MiB line", p.response("read", p.startCall("read", mcpioReadArgs(3))), 3)
}

// exercise runs every scenario in one session, then checks it goes idle.
func (m mcpioMode) exercise(t *testing.T) {
	root := mcpioWorkspace(t)
	p := m.start(t, root)
	p.lockstep(150)
	p.pipelined(40)
	p.splitWrites()
	p.bigLines(root)
	p.oversizeLine()
	p.checkIdle("after the last answer")
	if bad := p.badFrames(); len(bad) > 0 {
		t.Errorf("[%s] lines on stdout that are not JSON: %q", p.label, bad)
	}
}

// --- tests -----------------------------------------------------------------

// Every message is answered correctly, over pipes and over socket pairs.
func TestMCPStdioAnswersEveryMessage(t *testing.T) {
	slow(t)
	for _, m := range mcpioModes {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			m.exercise(t)
		})
	}
}

// mcpioBashPID starts `bash` that records its pid and sleeps; returns the
// request id and the pid once the file appears.
func (p *mcpioProc) mcpioBashSleep(root string) (int, int) {
	p.t.Helper()
	pidFile := filepath.Join(root, fmt.Sprintf("pid-%d", time.Now().UnixNano()))
	id := p.startCall("bash", map[string]any{"command": "echo $$ > " + pidFile + "; exec sleep 30", "timeout": 60})
	var pid int
	if !waitUntil(mcpRawTimeout, func() bool {
		b, err := os.ReadFile(pidFile)
		if err != nil {
			return false
		}
		pid, err = strconv.Atoi(strings.TrimSpace(string(b)))
		return err == nil
	}) {
		p.t.Fatalf("[%s] bash never wrote its pid; messages:\n%s", p.label, p.dump())
	}
	return id, pid
}

// mcpioStat is /proc/<pid>/stat's fields after the command name (state first).
func mcpioStat(pid int) []string {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	return strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
}

func mcpioAlive(pid int) bool {
	f := mcpioStat(pid)
	return len(f) > 0 && f[0] != "Z" && f[0] != "X"
}

// The end of input or SIGTERM ends the server, whatever it is doing: right
// after a request (which is still answered), right after an answer, with a
// command running (it is killed, and the call answered with its output or
// -32800), or with stdout full because the client stopped reading.
func TestMCPStdioEnding(t *testing.T) {
	for _, m := range mcpioModes {
		// The modes side by side, each one's endings one at a time: a
		// loaded machine must not stretch the answer past the grace.
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			for _, tc := range []struct{ end, when string }{
				{"eof", "after a request"}, {"eof", "after an answer"}, {"eof", "with a command running"}, {"eof", "with stdout full"},
				{"sigterm", "after an answer"}, {"sigterm", "with a command running"}, {"sigterm", "with stdout full"},
			} {
				t.Run(tc.end+" "+tc.when, func(t *testing.T) {
					root := mcpioWorkspace(t)
					writeFile(t, filepath.Join(root, "big.txt"), strings.Repeat("0123456789abcdef\n", 4096))
					p := m.start(t, root)
					id, pid := 0, 0
					switch tc.when {
					case "after a request":
						id = p.startCall("read", mcpioReadArgs(4))
					case "after an answer":
						p.lockstep(10)
					case "with a command running":
						id, pid = p.mcpioBashSleep(root)
					case "with stdout full":
						p.lockstep(5)
						p.stopReading()
						defer p.gate.Unlock()
						for k := 0; k < 80; k++ {
							p.startCall("read", map[string]any{"path": "big.txt", "limit": 4000})
						}
						time.Sleep(300 * time.Millisecond)
					}
					if tc.end == "eof" {
						p.closeStdin()
					} else {
						_ = p.cmd.Process.Signal(syscall.SIGTERM)
					}
					if id != 0 && tc.end == "eof" {
						r, ok := p.wait(mcpRawTimeout, mcpioIsID(id))
						switch {
						case !ok:
							t.Errorf("[%s] the call read before the end was not answered (docs: requests read before the end are still answered)", m.name)
						case pid == 0:
							p.wantRead("read before EOF", r, 4)
						case r.Error != nil && r.Error.Code != -32800:
							t.Errorf("[%s] bash call at EOF: error %d %s, want a result or -32800", m.name, r.Error.Code, r.Error.Message)
						}
					}
					select {
					case <-p.done:
					case <-time.After(mcpRawTimeout):
						t.Errorf("[%s] server still running %v after %s %s", m.name, mcpRawTimeout, tc.end, tc.when)
					}
					if pid != 0 && !waitUntil(mcpRawTimeout, func() bool { return !mcpioAlive(pid) }) {
						t.Errorf("[%s] the command (pid %d) outlived the server's end", m.name, pid)
						_ = syscall.Kill(pid, syscall.SIGKILL)
					}
				})
			}
		})
	}
}

// Stdin a regular file of requests (piped in, then the end): every request
// is answered and the process exits; stdin /dev/null ends it at once.
func TestMCPStdioFileStdin(t *testing.T) {
	root := mcpioWorkspace(t)
	var in bytes.Buffer
	in.Write(mcpioReqLine(1, "initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "mcpio", "version": "1"}}))
	in.WriteString(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n")
	for k := 0; k < 30; k++ {
		in.Write(mcpioCallLine(10+k, "read", mcpioReadArgs(k%mcpioFiles)))
	}
	inPath := filepath.Join(t.TempDir(), "in.jsonl")
	writeBytes(t, inPath, in.Bytes())
	for _, stdin := range []string{inPath, os.DevNull} {
		f, err := os.Open(stdin)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		cmd := exec.Command(harness.Binary(t), "mcp", "--root", root)
		cmd.Env, cmd.Stdin = mcpioEnv(t), f
		timer := time.AfterFunc(mcpRawTimeout, func() { cmd.Process.Kill() })
		out, _ := cmd.Output()
		if !timer.Stop() {
			t.Errorf("stdin %s: still running %v after its input ended", stdin, mcpRawTimeout)
		}
		got := map[string]string{}
		for _, l := range strings.Split(string(out), "\n") {
			var msg map[string]any
			if json.Unmarshal([]byte(l), &msg) == nil && msg["method"] == nil && msg["id"] != nil {
				got[compactJSON(msg["id"])] = l
			}
		}
		for k := 0; stdin == inPath && k < 30; k++ {
			if l := got[strconv.Itoa(10+k)]; !strings.Contains(l, mcpioToken(k%mcpioFiles)) || strings.Contains(l, `"error"`) {
				t.Errorf("request %d piped from a file: %q", 10+k, l)
			}
		}
	}
}

// A client that stops reading stdout: the server's answers back up, it does
// not burn CPU meanwhile, and every answer comes once the client reads.
func TestMCPStdioBlockedStdout(t *testing.T) {
	slow(t)
	for _, m := range mcpioModes {
		t.Run(m.name, func(t *testing.T) {
			root := mcpioWorkspace(t)
			big := strings.Repeat("0123456789abcdef\n", 4096) // 68 KiB
			writeFile(t, filepath.Join(root, "big.txt"), big)
			p := m.start(t, root)
			p.lockstep(5)
			bigArgs := map[string]any{"path": "big.txt", "limit": 4000}
			res := p.call("read", bigArgs)
			want := res.text()
			if res.IsError || strings.Count(want, "0123456789abcdef") < 1000 {
				t.Fatalf("[%s] big read: isError=%v %.300q", m.name, res.IsError, want)
			}
			p.stopReading()
			var ids []int
			for k := 0; k < 80; k++ {
				args := mcpioReadArgs(k % mcpioFiles)
				if k%2 == 0 {
					args = bigArgs
				}
				ids = append(ids, p.startCall("read", args))
			}
			p.checkIdle("with stdout full")
			answered := 0
			for _, id := range ids {
				answered += p.countID(id)
			}
			if answered != 0 {
				t.Errorf("[%s] %d of %d answers read while the client did not read: the test's client kept reading, so stdout was not full", m.name, answered, len(ids))
			}
			p.gate.Unlock()
			for k, id := range ids {
				msg := p.response("read", id)
				if k%2 == 0 {
					if r := p.toolResult(msg); r.IsError || r.text() != want {
						t.Errorf("[%s] big read %d after stdout unblocked: isError=%v, %d bytes, want the %d of the same read before", m.name, k, r.IsError, len(r.text()), len(want))
					}
				} else {
					p.wantRead("read after stdout unblocked", msg, k%mcpioFiles)
				}
			}
		})
	}
}
