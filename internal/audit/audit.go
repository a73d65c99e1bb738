package audit

import (
	"bufio"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/agentls/agentls/internal/owner"
	"github.com/agentls/agentls/internal/tools"
)

// Retention and size limits.
const (
	// MaxFiles is how many log files the directory keeps (newest first).
	MaxFiles = 20
	// MaxTotalBytes caps the directory's log files together.
	MaxTotalBytes = 50 << 20
	// MaxFileBytes starts a new file for a session whose file grew past it.
	MaxFileBytes = 10 << 20
	// MaxStringBytes cuts each string argument value in an entry; the rest is
	// replaced by a note with the original length.
	MaxStringBytes = 4 << 10
)

// EnvDir overrides the default directory.
const EnvDir = "AGENTLS_AUDIT_DIR"

// Decisions recorded in Entry.Decision; when the user was asked it is
// "ask:" + their answer (ask:allowOnce, ask:allowAlways, ask:rejectOnce,
// ask:rejectAlways).
const (
	DecisionAllow         = "allow"
	DecisionDeny          = "deny"
	DecisionAskUnanswered = "ask:unanswered"
	DecisionInvalid       = "invalid" // the call failed before the permission step
)

// Masker hides secrets (tools.Masker has the same method).
type Masker interface {
	Mask(s string) (string, map[string]int)
}

// Entry is one line of the log.
type Entry struct {
	Time   time.Time `json:"time"`
	CallID string    `json:"callId"`
	Tool   string    `json:"tool"`
	// Arguments are the call's arguments: a json.RawMessage or any value
	// that marshals to JSON. Record masks every string in them.
	Arguments   any            `json:"arguments,omitempty"`
	Decision    string         `json:"decision"`
	Rule        string         `json:"rule,omitempty"`
	DurationMs  float64        `json:"durationMs"`
	ResultBytes int            `json:"resultBytes"`
	IsError     bool           `json:"isError"`
	Redactions  map[string]int `json:"redactions,omitempty"`
}

// Log appends entries to the session's file. It is safe for concurrent use.
type Log struct {
	dir    string
	masker Masker
	pid    int

	mu      sync.Mutex
	f       *os.File
	w       *bufio.Writer
	size    int64
	err     error // first write error, returned by Close
	closed  bool
	started time.Time

	// pruned is closed when the pruning Open starts in the background is
	// done; pruneErr is its result, read only after pruned is closed.
	pruned   chan struct{}
	pruneErr error
}

// DefaultDir is $AGENTLS_AUDIT_DIR, else $XDG_STATE_HOME/agentls/audit, else
// ~/.local/state/agentls/audit.
func DefaultDir() (string, error) {
	if d := os.Getenv(EnvDir); d != "" {
		return d, nil
	}
	if d := os.Getenv("XDG_STATE_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "agentls", "audit"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("audit directory: %w", err)
	}
	return filepath.Join(home, ".local", "state", "agentls", "audit"), nil
}

// Open creates dir (mode 0700) and a new session file in it (mode 0600),
// and removes the oldest files beyond the limits. The removal runs in the
// background, off a session's startup path; Close waits for it and returns
// its error. m may be nil (no masking).
func Open(dir string, m Masker) (*Log, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("audit: %w", err)
	}
	l := &Log{dir: dir, masker: m, pid: os.Getpid(), started: time.Now().UTC(), pruned: make(chan struct{})}
	if err := l.create(); err != nil {
		return nil, err
	}
	keep := l.f.Name()
	go func() {
		defer close(l.pruned)
		l.pruneErr = prune(dir, keep)
	}()
	return l, nil
}

// Path is the file entries currently go to.
func (l *Log) Path() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return ""
	}
	return l.f.Name()
}

// rotate closes the current file, opens a new one and prunes old files.
// Called with l.mu held.
func (l *Log) rotate() error {
	// Open's pruning must be over, or it could remove the new file.
	<-l.pruned
	if err := l.create(); err != nil {
		return err
	}
	return prune(l.dir, l.f.Name())
}

// create closes the current file and opens a new one. Called with l.mu held
// (or before l is shared).
func (l *Log) create() error {
	if l.f != nil {
		if err := l.w.Flush(); err != nil {
			return fmt.Errorf("audit: %w", err)
		}
		if err := l.f.Close(); err != nil {
			return fmt.Errorf("audit: %w", err)
		}
		l.f = nil
	}
	base := fmt.Sprintf("%s-%d", l.started.Format("20060102-150405"), l.pid)
	var f *os.File
	var err error
	for i := 1; ; i++ {
		name := base + ".jsonl"
		if i > 1 {
			name = base + "." + strconv.Itoa(i) + ".jsonl"
		}
		f, err = os.OpenFile(filepath.Join(l.dir, name), os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o600)
		if !errors.Is(err, fs.ErrExist) {
			break
		}
	}
	if err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	l.f, l.w, l.size = f, bufio.NewWriter(f), 0
	return nil
}

// Record appends one entry and flushes it to the file. Time defaults to now;
// every string (arguments, tool, call id, decision, rule) is masked and long
// strings are cut. After Close it does nothing.
func (l *Log) Record(e Entry) error {
	if e.Time.IsZero() {
		e.Time = time.Now()
	}
	e.Time = e.Time.UTC()
	counts := map[string]int{}
	e.Arguments = l.clean(e.Arguments, counts)
	// The other strings pass the same masker: a tool name is whatever the
	// client sent (an unknown tool's name may be a pasted token), a rule is
	// user-written settings text.
	for _, f := range [...]*string{&e.CallID, &e.Tool, &e.Decision, &e.Rule} {
		*f = cut(l.mask(*f, counts))
	}
	if len(counts) > 0 {
		e.Redactions = counts
	}
	b, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	b = append(b, '\n')
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil
	}
	if err := l.write(b); err != nil {
		if l.err == nil {
			l.err = err
		}
		return err
	}
	return nil
}

func (l *Log) write(b []byte) error {
	if l.size > 0 && l.size+int64(len(b)) > MaxFileBytes {
		if err := l.rotate(); err != nil {
			return err
		}
	}
	n, err := l.w.Write(b)
	l.size += int64(n)
	if err == nil {
		err = l.w.Flush()
	}
	if err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	return nil
}

// Close flushes and closes the file, waits for Open's pruning and returns
// the first error: of a write, or of that pruning.
func (l *Log) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return l.err
	}
	l.closed = true
	if l.f != nil {
		if err := l.w.Flush(); err != nil && l.err == nil {
			l.err = err
		}
		if err := l.f.Close(); err != nil && l.err == nil {
			l.err = err
		}
	}
	<-l.pruned
	l.err = cmp.Or(l.err, l.pruneErr)
	return l.err
}

// clean turns raw arguments into a JSON value, masks every string (map keys
// included) and cuts long strings, after masking so a cut never splits a
// secret. Redactions are added to counts.
func (l *Log) clean(v any, counts map[string]int) any {
	switch x := v.(type) {
	case nil:
		return nil
	case map[string]any:
		if !plainJSON(x) {
			v = roundTrip(x)
		}
	case json.RawMessage:
		if len(x) == 0 {
			return nil
		}
		var parsed any
		if err := json.Unmarshal(x, &parsed); err != nil {
			v = string(x) // not JSON: keep it as text, masked
		} else {
			v = parsed
		}
	default:
		v = roundTrip(x)
	}
	return l.walk(v, counts)
}

// roundTrip normalises a typed value to plain JSON values.
func roundTrip(x any) any {
	b, err := json.Marshal(x)
	if err != nil {
		// The error may quote the value.
		return fmt.Sprintf("unloggable arguments: %v", err)
	}
	var parsed any
	if err := json.Unmarshal(b, &parsed); err != nil {
		return x
	}
	return parsed
}

// plainJSON reports whether v holds only the types json.Unmarshal gives an
// `any`, so the arguments of a call (decoded once already) skip a second
// encode and decode on every call.
func plainJSON(v any) bool {
	switch x := v.(type) {
	case nil, bool, string:
		return true
	case float64:
		return !math.IsNaN(x) && !math.IsInf(x, 0) // json.Marshal refuses these
	case map[string]any:
		for _, e := range x {
			if !plainJSON(e) {
				return false
			}
		}
		return true
	case []any:
		for _, e := range x {
			if !plainJSON(e) {
				return false
			}
		}
		return true
	}
	return false
}

func (l *Log) walk(v any, counts map[string]int) any {
	switch x := v.(type) {
	case string:
		return cut(l.mask(x, counts))
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[l.mask(k, counts)] = l.walk(e, counts)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = l.walk(e, counts)
		}
		return out
	}
	return v
}

func (l *Log) mask(s string, counts map[string]int) string {
	if l.masker == nil {
		return s
	}
	m, c := l.masker.Mask(s)
	for k, n := range c {
		counts[k] += n
	}
	return m
}

func cut(s string) string {
	if len(s) <= MaxStringBytes {
		return s
	}
	i := MaxStringBytes
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + fmt.Sprintf("…[cut: %d bytes in all]", len(s))
}

// logOwner is the pid a log file is named after
// (YYYYMMDD-HHMMSS-<pid>.jsonl, or .<n>.jsonl after a rotation).
func logOwner(name string) (int, bool) {
	base, _, _ := strings.Cut(strings.TrimSuffix(name, ".jsonl"), ".")
	parts := strings.Split(base, "-")
	if len(parts) != 3 {
		return 0, false
	}
	pid, err := strconv.Atoi(parts[2])
	return pid, err == nil && pid > 0
}

// logFile is one log file of the directory.
type logFile struct {
	path  string
	size  int64
	mtime time.Time
}

// files lists the directory's *.jsonl files, oldest first (by modification
// time, then name).
func files(dir string) ([]logFile, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []logFile
	for _, e := range ents {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".jsonl") {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue // removed meanwhile
		}
		out = append(out, logFile{path: filepath.Join(dir, e.Name()), size: info.Size(), mtime: info.ModTime()})
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].mtime.Equal(out[j].mtime) {
			return out[i].mtime.Before(out[j].mtime)
		}
		return out[i].path < out[j].path
	})
	return out, nil
}

// prune removes the oldest files until at most MaxFiles remain and they hold
// at most MaxTotalBytes; keep (the current file) is never removed, nor the
// file another running agentls is writing (the newest named after its pid):
// sessions share the directory, and one's start must not cut another's log.
func prune(dir, keep string) error {
	list, err := files(dir)
	if err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	var total int64
	current := map[int]string{} // pid → its newest file
	for _, f := range list {
		total += f.size
		if pid, ok := logOwner(filepath.Base(f.path)); ok {
			current[pid] = f.path
		}
	}
	n := len(list)
	var errs []error
	for _, f := range list {
		if n <= MaxFiles && total <= MaxTotalBytes {
			break
		}
		if f.path == keep {
			continue
		}
		if pid, ok := logOwner(filepath.Base(f.path)); ok && current[pid] == f.path && owner.Alive(pid) {
			continue
		}
		if err := os.Remove(f.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
			continue
		}
		n--
		total -= f.size
	}
	if len(errs) > 0 {
		return fmt.Errorf("audit: pruning old logs: %w", errors.Join(errs...))
	}
	return nil
}

// Hook returns an Executor.OnResult function that records every finished
// call; the decision is named by DecisionOf, or DecisionInvalid for a call
// that failed before the permission step.
func (l *Log) Hook() func(p *tools.Prepared, req tools.Request, r tools.Result, d tools.Decision, dur time.Duration) {
	return func(p *tools.Prepared, req tools.Request, r tools.Result, d tools.Decision, dur time.Duration) {
		e := Entry{
			CallID:      r.CallID,
			Tool:        req.Name,
			Arguments:   req.Arguments,
			Decision:    DecisionInvalid,
			Rule:        d.Rule,
			DurationMs:  float64(dur.Microseconds()) / 1000,
			ResultBytes: resultBytes(r),
			IsError:     r.IsError,
		}
		if p != nil {
			e.Tool = p.Tool.Name // the canonical name, not the spelling sent
			e.Decision = DecisionOf(d)
		}
		_ = l.Record(e) // the first error is kept for Close
	}
}

// DecisionOf names a permission decision for the log: "ask:" and the user's
// answer when the user was asked ("ask:allowOnce", "ask:rejectAlways"; with
// no answer — cancelled, or the editor could not ask — "ask:unanswered"),
// else allow or deny.
func DecisionOf(d tools.Decision) string {
	switch {
	case d.Asked && d.Answer != "":
		return "ask:" + d.Answer
	case d.Asked:
		return DecisionAskUnanswered
	case d.Allow:
		return DecisionAllow
	}
	return DecisionDeny
}

func resultBytes(r tools.Result) int {
	n := 0
	for _, c := range r.Content {
		n += len(c.Text) + len(c.Data)
	}
	return n
}
