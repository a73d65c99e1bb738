package e2e

// Black-box audit of `agentls mcp`'s stdin spin (README.md "MCP hosts",
// ARCHITECTURE.md): "For 300 µs after each message from the client it keeps
// asking stdin for the next instead of sleeping (at most that much CPU per
// message); AGENTLS_SPIN=off turns that off, and so does a machine with one
// CPU." Plus the stdio behaviour of docs/protocol.md's MCP section
// (newline-delimited JSON, malformed lines answered, end of input, SIGTERM,
// cancellation), in both modes. The server is driven by hand over raw pipes.

import (
	"bytes"
	"encoding/json"
	"fmt"
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

// a24sTimeout bounds every wait for the server; generous for a loaded machine.
const a24sTimeout = 10 * time.Second

// a24sClkTck is USER_HZ, the unit of utime and stime in /proc/<pid>/stat.
const a24sClkTck = 100

// a24sIdleLimit is how much CPU an idle server may use in one second.
const a24sIdleLimit = 20 * time.Millisecond

type a24sErr struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data"`
}

type a24sMsg struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  *a24sErr        `json:"error"`
}

func (m a24sMsg) isResponse() bool { return m.Method == "" && (m.Result != nil || m.Error != nil) }

// a24sProc is one `agentls mcp` child with raw stdio pipes.
type a24sProc struct {
	t      *testing.T
	label  string
	cmd    *exec.Cmd
	stdin  *os.File
	wmu    sync.Mutex
	errLog string

	mu      sync.Mutex
	msgs    []a24sMsg
	bad     []string
	changed chan struct{}
	eof     bool
	nextID  int

	exited  chan struct{}
	waitErr error

	// gate, held by a test, stops the client reading stdout.
	gate sync.Mutex
}

// a24sEnv is the environment without the variables these tests set, plus
// a private config dir selecting mode bypass (bash and write run unasked).
func a24sEnv(t *testing.T, extra ...string) []string {
	cfg := t.TempDir()
	writeFile(t, filepath.Join(cfg, "agentls", "settings.json"), `{"mode": "bypass"}`)
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "GOMAXPROCS=") || strings.HasPrefix(kv, "AGENTLS_SPIN=") || strings.HasPrefix(kv, "XDG_CONFIG_HOME=") {
			continue
		}
		env = append(env, kv)
	}
	env = append(env, "XDG_CONFIG_HOME="+cfg)
	return append(env, extra...)
}

// a24sStart runs `[wrap...] agentls mcp --root root` with env added.
// With sock, stdin and stdout are Unix socket pairs (as Node.js's
// child_process gives a child), else pipes.
func a24sStart(t *testing.T, label, root string, wrap []string, sock bool, env ...string) *a24sProc {
	t.Helper()
	bin := harness.Binary(t)
	argv := append(append([]string{}, wrap...), bin, "mcp", "--root", root)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = a24sEnv(t, env...)
	pair := os.Pipe
	if sock {
		pair = a24sSocketPair
	}
	inR, inW, err := pair()
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, err := pair()
	if err != nil {
		t.Fatal(err)
	}
	errPath := filepath.Join(t.TempDir(), "stderr")
	errF, err := os.Create(errPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errF
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %v: %v", argv, err)
	}
	inR.Close()
	outW.Close()
	errF.Close()
	p := &a24sProc{t: t, label: label, cmd: cmd, stdin: inW, errLog: errPath, changed: make(chan struct{}), exited: make(chan struct{}), nextID: 1000}
	go func() {
		p.waitErr = cmd.Wait()
		close(p.exited)
	}()
	go p.readLoop(outR)
	t.Cleanup(func() {
		p.closeStdin()
		select {
		case <-p.exited:
		case <-time.After(a24sTimeout):
			_ = cmd.Process.Kill()
			<-p.exited
		}
		outR.Close()
		if t.Failed() {
			b, _ := os.ReadFile(errPath)
			if len(b) > 4000 {
				b = b[len(b)-4000:]
			}
			t.Logf("[%s] stderr tail:\n%s", label, b)
		}
	})
	return p
}

// a24sSocketPair is a connected Unix stream socket pair.
func a24sSocketPair() (*os.File, *os.File, error) {
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, nil, err
	}
	return os.NewFile(uintptr(fds[0]), "sock-a"), os.NewFile(uintptr(fds[1]), "sock-b"), nil
}

func (p *a24sProc) readLoop(r *os.File) {
	var buf []byte
	chunk := make([]byte, 1<<20)
	for {
		p.gate.Lock()
		p.gate.Unlock()
		n, err := r.Read(chunk)
		buf = append(buf, chunk[:n]...)
		for {
			i := bytes.IndexByte(buf, '\n')
			if i < 0 {
				break
			}
			line := append([]byte(nil), buf[:i]...)
			buf = buf[i+1:]
			p.addLine(line)
		}
		if err != nil {
			if len(bytes.TrimSpace(buf)) > 0 {
				p.addLine(buf)
			}
			p.mu.Lock()
			p.eof = true
			close(p.changed)
			p.changed = make(chan struct{})
			p.mu.Unlock()
			return
		}
	}
}

func (p *a24sProc) addLine(line []byte) {
	if len(bytes.TrimSpace(line)) == 0 {
		return
	}
	var m a24sMsg
	err := json.Unmarshal(line, &m)
	p.mu.Lock()
	if err != nil {
		p.bad = append(p.bad, string(line))
	} else {
		p.msgs = append(p.msgs, m)
	}
	close(p.changed)
	p.changed = make(chan struct{})
	p.mu.Unlock()
	if err == nil && m.Method != "" && len(m.ID) > 0 && string(m.ID) != "null" {
		// A request from the server (none expected): refuse it.
		p.sendJSON(map[string]any{"jsonrpc": "2.0", "id": m.ID, "error": map[string]any{"code": -32601, "message": "not supported by the test client"}})
	}
}

// write sends raw bytes (the caller supplies any newline).
func (p *a24sProc) write(b []byte) {
	p.wmu.Lock()
	defer p.wmu.Unlock()
	if _, err := p.stdin.Write(b); err != nil {
		p.t.Logf("[%s] write: %v", p.label, err)
	}
}

func (p *a24sProc) sendJSON(v any) {
	b, err := json.Marshal(v)
	if err != nil {
		p.t.Fatal(err)
	}
	p.write(append(b, '\n'))
}

func (p *a24sProc) closeStdin() {
	p.wmu.Lock()
	defer p.wmu.Unlock()
	_ = p.stdin.Close()
}

func (p *a24sProc) newID() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.nextID++
	return p.nextID
}

// reqLine is the newline-terminated line of a request.
func a24sReqLine(id int, method string, params any) []byte {
	msg := map[string]any{"jsonrpc": "2.0", "id": id, "method": method}
	if params != nil {
		msg["params"] = params
	}
	b, _ := json.Marshal(msg)
	return append(b, '\n')
}

func a24sCallLine(id int, tool string, args any) []byte {
	return a24sReqLine(id, "tools/call", map[string]any{"name": tool, "arguments": args})
}

// waitFor returns the first message satisfying pred.
func (p *a24sProc) waitFor(d time.Duration, pred func(a24sMsg) bool) (a24sMsg, bool) {
	deadline := time.After(d)
	seen := 0
	for {
		p.mu.Lock()
		for ; seen < len(p.msgs); seen++ {
			if pred(p.msgs[seen]) {
				m := p.msgs[seen]
				p.mu.Unlock()
				return m, true
			}
		}
		ch, eof := p.changed, p.eof
		p.mu.Unlock()
		if eof {
			return a24sMsg{}, false
		}
		select {
		case <-ch:
		case <-deadline:
			return a24sMsg{}, false
		}
	}
}

func a24sIsID(id int) func(a24sMsg) bool {
	want := strconv.Itoa(id)
	return func(m a24sMsg) bool { return m.isResponse() && string(m.ID) == want }
}

// response waits for the response with the given id or fails the test.
func (p *a24sProc) response(what string, id int) a24sMsg {
	p.t.Helper()
	m, ok := p.waitFor(a24sTimeout, a24sIsID(id))
	if !ok {
		p.t.Fatalf("[%s] no response to %s (id %d) within %v (stdout closed: %v); last messages:\n%s", p.label, what, id, a24sTimeout, p.stdoutClosed(), p.dump())
	}
	return m
}

func (p *a24sProc) stdoutClosed() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.eof
}

func (p *a24sProc) dump() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var sb strings.Builder
	from := len(p.msgs) - 8
	if from < 0 {
		from = 0
	}
	for _, m := range p.msgs[from:] {
		b, _ := json.Marshal(m)
		if len(b) > 400 {
			b = append(b[:400], "…"...)
		}
		sb.Write(b)
		sb.WriteByte('\n')
	}
	for _, l := range p.bad {
		fmt.Fprintf(&sb, "bad line: %.200q\n", l)
	}
	return sb.String()
}

// countID is how many responses carry the id.
func (p *a24sProc) countID(id int) int {
	want := strconv.Itoa(id)
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, m := range p.msgs {
		if m.isResponse() && string(m.ID) == want {
			n++
		}
	}
	return n
}

// request sends a request and waits for its response.
func (p *a24sProc) request(method string, params any) a24sMsg {
	p.t.Helper()
	id := p.newID()
	p.write(a24sReqLine(id, method, params))
	return p.response(method, id)
}

// initialize runs the handshake on protocol 2025-06-18.
func (p *a24sProc) initialize() {
	p.t.Helper()
	m := p.request("initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "a24s", "version": "1"}})
	if m.Error != nil {
		p.t.Fatalf("[%s] initialize: error %d %s", p.label, m.Error.Code, m.Error.Message)
	}
	p.write([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n"))
}

type a24sResult struct {
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	IsError bool `json:"isError"`
}

// toolText decodes a tools/call response; a protocol error fails the test.
func (p *a24sProc) toolText(what string, m a24sMsg) (string, bool) {
	p.t.Helper()
	if m.Error != nil {
		p.t.Fatalf("[%s] %s: protocol error %d %s", p.label, what, m.Error.Code, m.Error.Message)
	}
	var r a24sResult
	if err := json.Unmarshal(m.Result, &r); err != nil {
		p.t.Fatalf("[%s] %s: result %s: %v", p.label, what, m.Result, err)
	}
	var parts []string
	for _, c := range r.Content {
		if c.Type == "text" {
			parts = append(parts, c.Text)
		}
	}
	return strings.Join(parts, "\n"), r.IsError
}

func (p *a24sProc) call(tool string, args any) (string, bool) {
	p.t.Helper()
	id := p.newID()
	p.write(a24sCallLine(id, tool, args))
	return p.toolText(tool, p.response(tool, id))
}

// wantRead checks a read result shows file i's token.
func (p *a24sProc) wantRead(what string, m a24sMsg, i int) {
	p.t.Helper()
	text, isErr := p.toolText(what, m)
	if isErr || !strings.Contains(text, a24sToken(i)) || !strings.Contains(text, a24sName(i)) {
		p.t.Errorf("[%s] %s: read of %s gave (isError=%v) %.300q, want its token %s", p.label, what, a24sName(i), isErr, text, a24sToken(i))
	}
	for j := 0; j < a24sFiles; j++ {
		if j != i && strings.Contains(text, a24sToken(j)) {
			p.t.Errorf("[%s] %s: read of %s shows another file's token %s: %.300q", p.label, what, a24sName(i), a24sToken(j), text)
		}
	}
}

// exitedWithin reports whether the process ended within d.
func (p *a24sProc) exitedWithin(d time.Duration) bool {
	select {
	case <-p.exited:
		return true
	case <-time.After(d):
		return false
	}
}

const a24sFiles = 12

func a24sName(i int) string { return fmt.Sprintf("file%02d.txt", i) }

func a24sToken(i int) string {
	return fmt.Sprintf("TOKEN-%02d-%s", i, strings.Repeat(string(rune('a'+i)), 6))
}

// a24sWorkspace holds a24sFiles small files, each with its own token.
func a24sWorkspace(t *testing.T) string {
	root := t.TempDir()
	for i := 0; i < a24sFiles; i++ {
		writeFile(t, filepath.Join(root, a24sName(i)), fmt.Sprintf("first line of %d\n%s\nlast line\n", i, a24sToken(i)))
	}
	return root
}

func a24sReadArgs(i int) map[string]any { return map[string]any{"path": a24sName(i)} }

// a24sCPU is the process's utime+stime from /proc/<pid>/stat (all threads,
// also those that ended) and the sum of its live threads' run time from
// /proc/<pid>/task/*/schedstat (ns precision).
func a24sCPU(t *testing.T, pid int) (stat, sched time.Duration) {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatalf("read stat: %v", err)
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 13 {
		t.Fatalf("short /proc/%d/stat: %q", pid, s)
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	stat = time.Duration(ut+st) * time.Second / a24sClkTck
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

// checkIdle settles 200 ms, then asserts the process used under
// a24sIdleLimit of CPU in the next second.
func (p *a24sProc) checkIdle(what string) {
	p.t.Helper()
	time.Sleep(200 * time.Millisecond)
	pid := p.cmd.Process.Pid
	s0, n0 := a24sCPU(p.t, pid)
	time.Sleep(time.Second)
	s1, n1 := a24sCPU(p.t, pid)
	p.t.Logf("[%s] idle %s: utime+stime +%v, schedstat +%v in 1 s", p.label, what, s1-s0, n1-n0)
	if s1-s0 >= a24sIdleLimit || n1-n0 >= a24sIdleLimit {
		p.t.Errorf("[%s] idle %s: the server used utime+stime %v (threads' run time %v) in 1 s while no message came; the spin is documented to last 300 µs after a message", p.label, what, s1-s0, n1-n0)
	}
}

// a24sMode is one way of starting the server.
type a24sMode struct {
	name string
	wrap []string
	env  []string
	sock bool
}

var (
	a24sSpin    = a24sMode{name: "spin-default"}
	a24sSpinOff = a24sMode{name: "spin-off", env: []string{"AGENTLS_SPIN=off"}}
)

func (m a24sMode) start(t *testing.T, root string) *a24sProc {
	t.Helper()
	p := a24sStart(t, m.name, root, m.wrap, m.sock, m.env...)
	p.initialize()
	return p
}

// --- scenarios shared by the modes -----------------------------------------

// lockstep: many calls, each sent the moment the previous answer arrives
// (the case the spin is for), answered in order with the right content.
func (p *a24sProc) lockstep(n int) {
	p.t.Helper()
	for k := 0; k < n; k++ {
		i := k % a24sFiles
		id := p.newID()
		if k%5 == 4 {
			p.write(a24sReqLine(id, "ping", nil))
			m := p.response("ping", id)
			if m.Error != nil {
				p.t.Fatalf("[%s] ping %d: error %d %s", p.label, k, m.Error.Code, m.Error.Message)
			}
		} else {
			p.write(a24sCallLine(id, "read", a24sReadArgs(i)))
			p.wantRead(fmt.Sprintf("lockstep call %d", k), p.response("read", id), i)
		}
		if p.countID(id) != 1 {
			p.t.Errorf("[%s] lockstep %d: %d responses for id %d", p.label, k, p.countID(id), id)
		}
	}
}

// pipelined: n calls written one by one without waiting; every one is
// answered once with its own file's content.
func (p *a24sProc) pipelined(n int) {
	p.t.Helper()
	ids := make([]int, n)
	for k := range ids {
		ids[k] = p.newID()
		p.write(a24sCallLine(ids[k], "read", a24sReadArgs(k%a24sFiles)))
	}
	for k, id := range ids {
		p.wantRead(fmt.Sprintf("pipelined call %d", k), p.response("read", id), k%a24sFiles)
	}
	time.Sleep(50 * time.Millisecond)
	for k, id := range ids {
		if c := p.countID(id); c != 1 {
			p.t.Errorf("[%s] pipelined call %d: %d responses for id %d", p.label, k, c, id)
		}
	}
}

// splitWrites: messages cut across writes, and several in one write.
func (p *a24sProc) splitWrites() {
	p.t.Helper()
	// Half a line, a pause (far longer than the 300 µs spin), the rest.
	id := p.newID()
	line := a24sCallLine(id, "read", a24sReadArgs(3))
	half := len(line) / 2
	p.write(line[:half])
	time.Sleep(60 * time.Millisecond)
	if _, ok := p.waitFor(0, a24sIsID(id)); ok {
		p.t.Errorf("[%s] half a line was answered before its end came", p.label)
	}
	p.write(line[half:])
	p.wantRead("half line, pause, rest", p.response("read", id), 3)

	// The newline alone in the second write.
	id = p.newID()
	line = a24sCallLine(id, "read", a24sReadArgs(4))
	p.write(line[:len(line)-1])
	time.Sleep(20 * time.Millisecond)
	p.write([]byte("\n"))
	p.wantRead("newline in a later write", p.response("read", id), 4)

	// One byte per write, with short pauses.
	id = p.newID()
	line = a24sCallLine(id, "read", a24sReadArgs(5))
	for k := range line {
		p.write(line[k : k+1])
		if k%8 == 0 {
			time.Sleep(time.Millisecond)
		}
	}
	p.wantRead("one byte per write", p.response("read", id), 5)

	// Three parts with pauses of 1 ms and 30 ms.
	id = p.newID()
	line = a24sCallLine(id, "read", a24sReadArgs(6))
	a, b := len(line)/3, 2*len(line)/3
	p.write(line[:a])
	time.Sleep(time.Millisecond)
	p.write(line[a:b])
	time.Sleep(30 * time.Millisecond)
	p.write(line[b:])
	p.wantRead("three parts", p.response("read", id), 6)

	// Several messages in one write: calls, a notification, a ping.
	var buf []byte
	var ids []int
	for k := 0; k < 10; k++ {
		ids = append(ids, p.newID())
		buf = append(buf, a24sCallLine(ids[k], "read", a24sReadArgs(k))...)
		if k == 4 {
			buf = append(buf, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"none","progress":1}}`+"\n"...)
		}
	}
	pingID := p.newID()
	buf = append(buf, a24sReqLine(pingID, "ping", nil)...)
	p.write(buf)
	for k, id := range ids {
		p.wantRead(fmt.Sprintf("message %d of one write", k), p.response("read", id), k)
	}
	if m := p.response("ping", pingID); m.Error != nil {
		p.t.Errorf("[%s] ping in one write: error %d %s", p.label, m.Error.Code, m.Error.Message)
	}

	// A write ending inside the second of two messages.
	id1, id2 := p.newID(), p.newID()
	two := append(a24sCallLine(id1, "read", a24sReadArgs(7)), a24sCallLine(id2, "read", a24sReadArgs(8))...)
	cut := len(two) - 25
	p.write(two[:cut])
	p.wantRead("first of two, second cut", p.response("read", id1), 7)
	time.Sleep(20 * time.Millisecond)
	p.write(two[cut:])
	p.wantRead("second of two after a pause", p.response("read", id2), 8)
}

// bigLines: 1 MB lines, in one write and in pieces.
func (p *a24sProc) bigLines(root string) {
	p.t.Helper()
	mk := func(seed int) string {
		var sb strings.Builder
		for k := 0; sb.Len() < 1<<20; k++ {
			fmt.Fprintf(&sb, "line %07d of seed %d: the quick brown fox\n", k, seed)
		}
		return sb.String()
	}
	for _, piece := range []int{0, 64 << 10, 4093} {
		content := mk(piece)
		name := fmt.Sprintf("big-%s-%d.txt", p.label, piece)
		id := p.newID()
		line := a24sCallLine(id, "write", map[string]any{"path": name, "content": content})
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
		text, isErr := p.toolText("1 MB write", p.response("write", id))
		if isErr {
			p.t.Errorf("[%s] 1 MB write (pieces of %d bytes) failed: %.300q", p.label, piece, text)
			continue
		}
		got, err := os.ReadFile(filepath.Join(root, name))
		if err != nil || string(got) != content {
			p.t.Errorf("[%s] 1 MB write (pieces of %d bytes): file has %d bytes (err %v), want the %d sent", p.label, piece, len(got), err, len(content))
		}
	}
	// A 1 MB ping (padding in _meta), then a normal call.
	id := p.newID()
	line := a24sReqLine(id, "ping", map[string]any{"_meta": map[string]any{"pad": strings.Repeat("x", 1<<20)}})
	p.write(line)
	if m := p.response("1 MB ping", id); m.Error != nil {
		p.t.Errorf("[%s] 1 MB ping: error %d %s", p.label, m.Error.Code, m.Error.Message)
	}
	id = p.newID()
	p.write(a24sCallLine(id, "read", a24sReadArgs(9)))
	p.wantRead("call after 1 MB lines", p.response("read", id), 9)
}

// malformed: bad lines get error replies and the session goes on.
func (p *a24sProc) malformed() {
	p.t.Helper()
	before := func() int { p.mu.Lock(); defer p.mu.Unlock(); return len(p.msgs) }()
	pick := func(pred func(a24sMsg) bool) (a24sMsg, bool) {
		deadline := time.Now().Add(a24sTimeout)
		for time.Now().Before(deadline) {
			p.mu.Lock()
			for _, m := range p.msgs[before:] {
				if pred(m) {
					p.mu.Unlock()
					return m, true
				}
			}
			p.mu.Unlock()
			time.Sleep(2 * time.Millisecond)
		}
		return a24sMsg{}, false
	}
	// Not JSON, split over two writes.
	p.write([]byte("this is not"))
	time.Sleep(20 * time.Millisecond)
	p.write([]byte(" json at all\n"))
	if m, ok := pick(func(m a24sMsg) bool { return m.Error != nil && m.Error.Code == -32700 }); !ok {
		p.t.Errorf("[%s] a line that is not JSON got no -32700 reply; got:\n%s", p.label, p.dump())
	} else if string(m.ID) != "null" && len(m.ID) != 0 {
		p.t.Errorf("[%s] -32700 reply has id %s, want null", p.label, m.ID)
	}
	// Not JSON-RPC 2.0, with an id, in the same write as a good call.
	bad := p.newID()
	good := p.newID()
	p.write(append([]byte(fmt.Sprintf(`{"jsonrpc":"1.0","id":%d,"method":"ping"}`+"\n", bad)), a24sCallLine(good, "read", a24sReadArgs(10))...))
	m := p.response("jsonrpc 1.0 line", bad)
	if m.Error == nil || m.Error.Code != -32600 {
		p.t.Errorf("[%s] jsonrpc 1.0 request: got %+v, want -32600 with its id", p.label, m)
	}
	p.wantRead("call after a bad line", p.response("read", good), 10)
	// An empty batch.
	p.write([]byte("[]\n"))
	if _, ok := pick(func(m a24sMsg) bool { return m.Error != nil && m.Error.Code == -32600 && string(m.ID) == "null" }); !ok {
		p.t.Errorf("[%s] empty batch got no -32600 reply; got:\n%s", p.label, p.dump())
	}
	if r, _ := p.call("read", a24sReadArgs(11)); !strings.Contains(r, a24sToken(11)) {
		p.t.Errorf("[%s] call after an empty batch: %.300q", p.label, r)
	}
}

// pause: a call after a second of silence still works.
func (p *a24sProc) pause() {
	p.t.Helper()
	time.Sleep(time.Second)
	id := p.newID()
	p.write(a24sCallLine(id, "read", a24sReadArgs(2)))
	p.wantRead("call after 1 s pause", p.response("read", id), 2)
	id = p.newID()
	p.write(a24sCallLine(id, "read", a24sReadArgs(1)))
	p.wantRead("call right after that", p.response("read", id), 1)
}

// exercise runs every scenario in one session, then checks it goes idle.
func (m a24sMode) exercise(t *testing.T) {
	root := a24sWorkspace(t)
	p := m.start(t, root)
	p.lockstep(150)
	p.pipelined(40)
	p.splitWrites()
	p.malformed()
	p.bigLines(root)
	p.pause()
	p.checkIdle("after the last answer")
	if len(p.bad) > 0 {
		t.Errorf("[%s] lines on stdout that are not JSON: %q", p.label, p.bad)
	}
}

// --- tests -----------------------------------------------------------------

// Correctness is the same with the spin (default) and without it.
func TestAudit24SpinCorrectnessBothModes(t *testing.T) {
	for _, m := range []a24sMode{a24sSpin, a24sSpinOff} {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			m.exercise(t)
		})
	}
}

// GOMAXPROCS from the environment (1 and 4) works the same.
func TestAudit24SpinGOMAXPROCS(t *testing.T) {
	for _, n := range []string{"1", "4"} {
		m := a24sMode{name: "gomaxprocs-" + n, env: []string{"GOMAXPROCS=" + n}}
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			m.exercise(t)
		})
	}
}

// On one CPU (taskset -c 0) the spin is documented off; the server works
// and does not burn CPU when idle.
func TestAudit24SpinOneCPU(t *testing.T) {
	ts, err := exec.LookPath("taskset")
	if err != nil {
		t.Skip("no taskset")
	}
	for _, m := range []a24sMode{
		{name: "taskset-spin-default", wrap: []string{ts, "-c", "0"}},
		{name: "taskset-gomaxprocs-4", wrap: []string{ts, "-c", "0"}, env: []string{"GOMAXPROCS=4"}},
	} {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			m.exercise(t)
		})
	}
}

// The spin is bounded: idle after a burst of calls, idle with half a line
// pending (no message has come, so there is nothing to spin after), and
// idle between messages a few ms apart.
func TestAudit24SpinIdleCPU(t *testing.T) {
	root := a24sWorkspace(t)
	p := a24sSpin.start(t, root)
	p.lockstep(300)
	p.checkIdle("after 300 quick calls")

	id := p.newID()
	line := a24sCallLine(id, "read", a24sReadArgs(0))
	p.write(line[:len(line)/2])
	p.checkIdle("with half a line pending")
	p.write(line[len(line)/2:])
	p.wantRead("rest of the pending line", p.response("read", id), 0)

	// A notification as the last message (no answer to wait for).
	p.write([]byte(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"x","progress":1}}` + "\n"))
	p.checkIdle("after a notification")
	if r, _ := p.call("read", a24sReadArgs(1)); !strings.Contains(r, a24sToken(1)) {
		t.Errorf("call after idle: %.300q", r)
	}
	// A bad line as the last message.
	p.write([]byte("not json\n"))
	p.checkIdle("after a malformed line")
	if r, _ := p.call("read", a24sReadArgs(2)); !strings.Contains(r, a24sToken(2)) {
		t.Errorf("call after idle: %.300q", r)
	}
}

// "At most that much CPU per message": pings 10 ms apart cost the spinning
// server no more than a few ms of CPU each (a spin that ran until the next
// message would cost the whole 10 ms gap each time).
func TestAudit24SpinPerMessageCPU(t *testing.T) {
	const n, gap = 80, 10 * time.Millisecond
	per := map[string]time.Duration{}
	for _, m := range []a24sMode{a24sSpin, a24sSpinOff} {
		root := a24sWorkspace(t)
		p := m.start(t, root)
		p.lockstep(20)
		time.Sleep(200 * time.Millisecond)
		pid := p.cmd.Process.Pid
		s0, n0 := a24sCPU(t, pid)
		for k := 0; k < n; k++ {
			id := p.newID()
			p.write(a24sReqLine(id, "ping", nil))
			p.response("ping", id)
			time.Sleep(gap)
		}
		s1, n1 := a24sCPU(t, pid)
		per[m.name] = (n1 - n0) / n
		t.Logf("[%s] %d pings %v apart: utime+stime +%v, schedstat +%v (%v per ping)", m.name, n, gap, s1-s0, n1-n0, (n1-n0)/n)
		if limit := time.Duration(n) * 3 * time.Millisecond; s1-s0 > limit || n1-n0 > limit {
			t.Errorf("[%s] %d pings %v apart used utime+stime %v (threads %v), over %v: more than 300 µs of spin per message", m.name, n, gap, s1-s0, n1-n0, limit)
		}
	}
	t.Logf("per ping: spin %v, off %v, difference %v (documented spin: at most 300 µs)", per[a24sSpin.name], per[a24sSpinOff.name], per[a24sSpin.name]-per[a24sSpinOff.name])
}

// a24sBashPID starts `bash` that records its pid and sleeps; returns the
// request id and the pid once the file appears.
func (p *a24sProc) a24sBashSleep(root string) (int, int) {
	p.t.Helper()
	pidFile := filepath.Join(root, fmt.Sprintf("pid-%d", time.Now().UnixNano()))
	id := p.newID()
	p.write(a24sCallLine(id, "bash", map[string]any{"command": "echo $$ > " + pidFile + "; exec sleep 30", "timeout": 60}))
	var pid int
	if !waitUntil(a24sTimeout, func() bool {
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

func a24sAlive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	return len(f) > 0 && f[0] != "Z" && f[0] != "X"
}

// Closing stdin right after a message (inside the spin window) ends the
// server; the request read before the end is answered; a running command
// is killed.
func TestAudit24SpinCloseStdin(t *testing.T) {
	for _, m := range []a24sMode{a24sSpin, a24sSpinOff} {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			root := a24sWorkspace(t)

			// A request and the end of input back to back.
			p := m.start(t, root)
			id := p.newID()
			p.write(a24sCallLine(id, "read", a24sReadArgs(4)))
			p.closeStdin()
			if r, ok := p.waitFor(a24sTimeout, a24sIsID(id)); !ok {
				t.Errorf("[%s] the read sent just before closing stdin was not answered (docs: requests read before the end are still answered)", m.name)
			} else {
				p.wantRead("read before EOF", r, 4)
			}
			if !p.exitedWithin(a24sTimeout) {
				t.Errorf("[%s] server still running %v after stdin closed right after a request", m.name, a24sTimeout)
			} else {
				t.Logf("[%s] exit after EOF: %v", m.name, p.waitErr)
			}

			// The end of input the moment an answer arrives (the server is
			// spinning on stdin then).
			p = m.start(t, root)
			p.lockstep(10)
			id = p.newID()
			p.write(a24sCallLine(id, "read", a24sReadArgs(5)))
			p.response("read", id)
			p.closeStdin()
			if !p.exitedWithin(a24sTimeout) {
				t.Errorf("[%s] server still running %v after stdin closed right after an answer", m.name, a24sTimeout)
			}

			// The end of input with a command running: it is killed and
			// the call answered (its output or -32800).
			p = m.start(t, root)
			bid, pid := p.a24sBashSleep(root)
			p.closeStdin()
			if r, ok := p.waitFor(a24sTimeout, a24sIsID(bid)); !ok {
				t.Errorf("[%s] bash call running at EOF was never answered (docs: it answers what it has or -32800)", m.name)
			} else if r.Error != nil && r.Error.Code != -32800 {
				t.Errorf("[%s] bash call at EOF: error %d %s, want a result or -32800", m.name, r.Error.Code, r.Error.Message)
			}
			if !p.exitedWithin(a24sTimeout) {
				t.Errorf("[%s] server still running %v after stdin closed with a command running", m.name, a24sTimeout)
			}
			if !waitUntil(a24sTimeout, func() bool { return !a24sAlive(pid) }) {
				t.Errorf("[%s] the command (pid %d) outlived the server's end of input", m.name, pid)
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		})
	}
}

// SIGTERM while spinning ends the server; a running command is killed.
func TestAudit24SpinSIGTERM(t *testing.T) {
	for _, m := range []a24sMode{a24sSpin, a24sSpinOff} {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			root := a24sWorkspace(t)
			p := m.start(t, root)
			p.lockstep(10)
			id := p.newID()
			p.write(a24sCallLine(id, "read", a24sReadArgs(3)))
			p.response("read", id)
			_ = p.cmd.Process.Signal(syscall.SIGTERM)
			if !p.exitedWithin(a24sTimeout) {
				t.Errorf("[%s] server still running %v after SIGTERM right after an answer", m.name, a24sTimeout)
			} else {
				t.Logf("[%s] exit after SIGTERM: %v", m.name, p.waitErr)
			}

			p = m.start(t, root)
			_, pid := p.a24sBashSleep(root)
			_ = p.cmd.Process.Signal(syscall.SIGTERM)
			if !p.exitedWithin(a24sTimeout) {
				t.Errorf("[%s] server still running %v after SIGTERM with a command running", m.name, a24sTimeout)
			}
			if !waitUntil(a24sTimeout, func() bool { return !a24sAlive(pid) }) {
				t.Errorf("[%s] the command (pid %d) outlived SIGTERM to the server", m.name, pid)
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		})
	}
}

// notifications/cancelled kills the command, sends no response for it, and
// the session goes on.
func TestAudit24SpinCancel(t *testing.T) {
	for _, m := range []a24sMode{a24sSpin, a24sSpinOff} {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			root := a24sWorkspace(t)
			p := m.start(t, root)
			bid, pid := p.a24sBashSleep(root)
			p.write([]byte(fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":%d,"reason":"test"}}`+"\n", bid)))
			if !waitUntil(a24sTimeout, func() bool { return !a24sAlive(pid) }) {
				t.Errorf("[%s] the cancelled command (pid %d) still runs", m.name, pid)
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
			// The next call is answered, and still nothing for the
			// cancelled one.
			id := p.newID()
			p.write(a24sCallLine(id, "read", a24sReadArgs(7)))
			p.wantRead("call after a cancel", p.response("read", id), 7)
			time.Sleep(300 * time.Millisecond)
			if c := p.countID(bid); c != 0 {
				r, _ := p.waitFor(0, a24sIsID(bid))
				t.Errorf("[%s] the cancelled call got %d response(s) (docs: none is sent): %s %+v", m.name, c, r.Result, r.Error)
			}
			p.checkIdle("after a cancel")
		})
	}
}

// Stdio as Unix socket pairs (what Node.js hosts give a child) works the
// same in both modes.
func TestAudit24SpinSocketStdio(t *testing.T) {
	for _, m := range []a24sMode{
		{name: "sock-spin-default", sock: true},
		{name: "sock-spin-off", sock: true, env: []string{"AGENTLS_SPIN=off"}},
	} {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			m.exercise(t)
		})
	}
}

// a24sReads is the process's count of read system calls (/proc/<pid>/io
// syscr): a server asking stdin again and again makes many.
func a24sReads(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/io", pid))
	if err != nil {
		t.Fatalf("read /proc/%d/io: %v", pid, err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "syscr:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			return n
		}
	}
	t.Fatalf("no syscr in /proc/%d/io: %q", pid, b)
	return 0
}

// a24sReadsPerPing sends n pings, each 3 ms after the previous answer, and
// returns the read system calls and the CPU time per ping.
func (p *a24sProc) readsPerPing(n int) (float64, time.Duration) {
	p.t.Helper()
	pid := p.cmd.Process.Pid
	time.Sleep(100 * time.Millisecond)
	r0 := a24sReads(p.t, pid)
	_, c0 := a24sCPU(p.t, pid)
	for k := 0; k < n; k++ {
		id := p.newID()
		p.write(a24sReqLine(id, "ping", nil))
		p.response("ping", id)
		time.Sleep(3 * time.Millisecond)
	}
	r1 := a24sReads(p.t, pid)
	_, c1 := a24sCPU(p.t, pid)
	return float64(r1-r0) / float64(n), (c1 - c0) / time.Duration(n)
}

// Whether the server asks stdin again after a message shows in its count of
// read system calls: many per message with the spin, a couple without.
// Documented: on by default, off with AGENTLS_SPIN=off and on one CPU
// (whatever GOMAXPROCS says), and it stops (no reads while idle).
func TestAudit24SpinOnOff(t *testing.T) {
	ts, _ := exec.LookPath("taskset")
	type tc struct {
		m    a24sMode
		spin bool
	}
	cases := []tc{
		{a24sSpin, true},
		{a24sSpinOff, false},
		{a24sMode{name: "gomaxprocs-1", env: []string{"GOMAXPROCS=1"}}, true},
		{a24sMode{name: "sock-spin-default", sock: true}, true},
		{a24sMode{name: "sock-spin-off", sock: true, env: []string{"AGENTLS_SPIN=off"}}, false},
	}
	if ts != "" {
		cases = append(cases,
			tc{a24sMode{name: "taskset-1cpu", wrap: []string{ts, "-c", "0"}}, false},
			tc{a24sMode{name: "taskset-1cpu-gomaxprocs-4", wrap: []string{ts, "-c", "0"}, env: []string{"GOMAXPROCS=4"}}, false},
		)
	}
	for _, c := range cases {
		t.Run(c.m.name, func(t *testing.T) {
			t.Parallel()
			p := c.m.start(t, a24sWorkspace(t))
			p.lockstep(10)
			reads, cpu := p.readsPerPing(100)
			t.Logf("[%s] per ping: %.1f read syscalls, %v CPU", c.m.name, reads, cpu)
			if c.spin && reads < 20 {
				t.Errorf("[%s] %.1f read system calls per message: the documented spin (asking stdin again for 300 µs after each message) does not happen", c.m.name, reads)
			}
			if !c.spin && reads > 10 {
				t.Errorf("[%s] %.1f read system calls per message: the server keeps asking stdin, but the spin is documented off here", c.m.name, reads)
			}
			time.Sleep(200 * time.Millisecond)
			pid := p.cmd.Process.Pid
			r0 := a24sReads(t, pid)
			time.Sleep(time.Second)
			if d := a24sReads(t, pid) - r0; d > 50 {
				t.Errorf("[%s] %d read system calls in 1 s with no message: the server keeps asking stdin while idle", c.m.name, d)
			}
		})
	}
}

// Stdin a regular file of requests (piped in, then the end): every request
// is answered and the process exits; stdin /dev/null ends it at once.
func TestAudit24SpinFileStdin(t *testing.T) {
	for _, m := range []a24sMode{a24sSpin, a24sSpinOff} {
		t.Run(m.name, func(t *testing.T) {
			root := a24sWorkspace(t)
			var in bytes.Buffer
			in.Write(a24sReqLine(1, "initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "a24s", "version": "1"}}))
			in.WriteString(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n")
			for k := 0; k < 30; k++ {
				in.Write(a24sCallLine(10+k, "read", a24sReadArgs(k%a24sFiles)))
			}
			inPath := filepath.Join(t.TempDir(), "in.jsonl")
			writeBytes(t, inPath, in.Bytes())
			for _, stdin := range []string{inPath, os.DevNull} {
				f, err := os.Open(stdin)
				if err != nil {
					t.Fatal(err)
				}
				cmd := exec.Command(harness.Binary(t), "mcp", "--root", root)
				cmd.Env = a24sEnv(t, m.env...)
				cmd.Stdin = f
				var out bytes.Buffer
				cmd.Stdout = &out
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				done := make(chan error, 1)
				go func() { done <- cmd.Wait() }()
				select {
				case err := <-done:
					t.Logf("[%s] stdin %s: exit %v", m.name, filepath.Base(stdin), err)
				case <-time.After(a24sTimeout):
					_ = cmd.Process.Kill()
					<-done
					t.Errorf("[%s] stdin %s: still running %v after its input ended", m.name, stdin, a24sTimeout)
				}
				f.Close()
				if stdin == os.DevNull {
					continue
				}
				got := map[string]a24sMsg{}
				for _, l := range strings.Split(out.String(), "\n") {
					var msg a24sMsg
					if json.Unmarshal([]byte(l), &msg) == nil && msg.isResponse() {
						got[string(msg.ID)] = msg
					}
				}
				for k := 0; k < 30; k++ {
					msg, ok := got[strconv.Itoa(10+k)]
					if !ok {
						t.Errorf("[%s] request %d piped from a file was not answered", m.name, 10+k)
						continue
					}
					var r a24sResult
					_ = json.Unmarshal(msg.Result, &r)
					if msg.Error != nil || len(r.Content) == 0 || !strings.Contains(r.Content[0].Text, a24sToken(k%a24sFiles)) {
						t.Errorf("[%s] request %d piped from a file: %s %+v", m.name, 10+k, msg.Result, msg.Error)
					}
				}
			}
		})
	}
}

// A line over 16 MiB gets an error reply and the session goes on.
func TestAudit24SpinOversizeLine(t *testing.T) {
	for _, m := range []a24sMode{a24sSpin, a24sSpinOff} {
		t.Run(m.name, func(t *testing.T) {
			p := m.start(t, a24sWorkspace(t))
			id := p.newID()
			p.write(a24sReqLine(id, "ping", map[string]any{"_meta": map[string]any{"pad": strings.Repeat("y", 17<<20)}}))
			m2, ok := p.waitFor(a24sTimeout, func(x a24sMsg) bool { return x.Error != nil })
			if !ok {
				t.Errorf("[%s] a 17 MiB line got no error reply (docs: longer than 16 MiB gets an error reply); got:\n%s", m.name, p.dump())
			} else {
				t.Logf("[%s] 17 MiB line: id %s error %d %s", m.name, m2.ID, m2.Error.Code, m2.Error.Message)
			}
			if r, _ := p.call("read", a24sReadArgs(3)); !strings.Contains(r, a24sToken(3)) {
				t.Errorf("[%s] call after a 17 MiB line: %.300q", m.name, r)
			}
			p.checkIdle("after a 17 MiB line")
		})
	}
}

// A client that stops reading stdout: the server's answers back up, it does
// not burn CPU meanwhile, and every answer comes once the client reads.
func TestAudit24SpinBlockedStdout(t *testing.T) {
	for _, m := range []a24sMode{a24sSpin, a24sSpinOff} {
		t.Run(m.name, func(t *testing.T) {
			root := a24sWorkspace(t)
			big := strings.Repeat("0123456789abcdef\n", 4096) // 68 KiB
			writeFile(t, filepath.Join(root, "big.txt"), big)
			p := m.start(t, root)
			p.lockstep(5)
			bigArgs := map[string]any{"path": "big.txt", "limit": 4000}
			want, isErr := p.call("read", bigArgs)
			if isErr || strings.Count(want, "0123456789abcdef") < 1000 {
				t.Fatalf("[%s] big read: isError=%v %.300q", m.name, isErr, want)
			}
			p.gate.Lock()
			var ids []int
			for k := 0; k < 80; k++ {
				id := p.newID()
				ids = append(ids, id)
				if k%2 == 0 {
					p.write(a24sCallLine(id, "read", bigArgs))
				} else {
					p.write(a24sCallLine(id, "read", a24sReadArgs(k%a24sFiles)))
				}
			}
			p.checkIdle("with stdout full")
			answered := 0
			for _, id := range ids {
				answered += p.countID(id)
			}
			t.Logf("[%s] %d of %d answers read while the client did not read", m.name, answered, len(ids))
			p.gate.Unlock()
			for k, id := range ids {
				msg := p.response("read", id)
				if k%2 == 0 {
					text, isErr := p.toolText("big read", msg)
					if isErr || text != want {
						t.Errorf("[%s] big read %d after stdout unblocked: isError=%v, %d bytes, want the %d of the same read before", m.name, k, isErr, len(text), len(want))
					}
				} else {
					p.wantRead("read after stdout unblocked", msg, k%a24sFiles)
				}
			}
		})
	}
}

// SIGTERM, and the end of input, while the server's stdout is full (the
// client stopped reading): the process still exits.
func TestAudit24SpinEndWithStdoutFull(t *testing.T) {
	for _, m := range []a24sMode{a24sSpin} {
		for _, how := range []string{"sigterm", "eof"} {
			t.Run(m.name+"-"+how, func(t *testing.T) {
				t.Parallel()
				root := a24sWorkspace(t)
				writeFile(t, filepath.Join(root, "big.txt"), strings.Repeat("0123456789abcdef\n", 4096))
				p := m.start(t, root)
				p.lockstep(5)
				p.gate.Lock()
				defer p.gate.Unlock()
				for k := 0; k < 80; k++ {
					p.write(a24sCallLine(p.newID(), "read", map[string]any{"path": "big.txt", "limit": 4000}))
				}
				time.Sleep(300 * time.Millisecond)
				if how == "sigterm" {
					_ = p.cmd.Process.Signal(syscall.SIGTERM)
				} else {
					p.closeStdin()
				}
				if !p.exitedWithin(a24sTimeout) {
					t.Errorf("[%s] %s with stdout full: the process still runs after %v (docs: SIGTERM: the process exits; end of input: after at most 250+500 ms the session ends and the process exits)", m.name, how, a24sTimeout)
				}
			})
		}
	}
}

// A call cancelled in the same write that carries it: no response is sent
// and its command does not outlive the cancel.
func TestAudit24SpinCancelSameWrite(t *testing.T) {
	for _, m := range []a24sMode{a24sSpin, a24sSpinOff} {
		t.Run(m.name, func(t *testing.T) {
			root := a24sWorkspace(t)
			p := m.start(t, root)
			pidFile := filepath.Join(root, "pid-same-write")
			id := p.newID()
			buf := a24sCallLine(id, "bash", map[string]any{"command": "echo $$ > " + pidFile + "; exec sleep 30", "timeout": 60})
			buf = append(buf, fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":%d}}`+"\n", id)...)
			p.write(buf)
			if r, _ := p.call("read", a24sReadArgs(8)); !strings.Contains(r, a24sToken(8)) {
				t.Errorf("[%s] call after a cancel: %.300q", m.name, r)
			}
			time.Sleep(500 * time.Millisecond)
			if c := p.countID(id); c != 0 {
				r, _ := p.waitFor(0, a24sIsID(id))
				t.Errorf("[%s] a call cancelled in its own write got %d response(s) (docs: none is sent): %s %+v", m.name, c, r.Result, r.Error)
			}
			if b, err := os.ReadFile(pidFile); err == nil {
				pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
				if pid > 0 && !waitUntil(a24sTimeout, func() bool { return !a24sAlive(pid) }) {
					t.Errorf("[%s] the command of a cancelled call (pid %d) still runs", m.name, pid)
					_ = syscall.Kill(pid, syscall.SIGKILL)
				}
			}
		})
	}
}
