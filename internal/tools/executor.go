package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentls/agentls/internal/mention"
)

// Request is one tool call as it arrives from a client.
type Request struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	CallID    string          `json:"callId,omitempty"`
	// Approved is a token from Executor.Prepare (tools/prepare): the
	// client asked its user about this very call, so the permission step
	// does not ask again. Bound to the name and arguments, valid once.
	Approved string `json:"approved,omitempty"`
}

// Decision is the permission step's verdict.
type Decision struct {
	Allow bool
	// Reason is shown to the model when the call is denied: which rule or
	// mode decided and what to do instead.
	Reason string
	// Rule names the rule or mode that decided, for details and the audit log.
	Rule string
	// Asked is set when the user was asked; Answer is their decision
	// (allowOnce, allowAlways, rejectOnce, rejectAlways).
	Asked  bool
	Answer string
	// Refusal, when set, is the call's result without running: its
	// side-effect-free checks (Prepared.Check) failed, so nobody was
	// asked about a call that could not succeed.
	Refusal *Result
}

// Permission decides whether a prepared call may run. It may block (asking
// the user) and must return when ctx is cancelled.
type Permission interface {
	Check(ctx context.Context, p *Prepared) Decision
}

// AllowAll is the permission step until a policy is configured.
type AllowAll struct{}

// Check implements Permission.
func (AllowAll) Check(context.Context, *Prepared) Decision {
	return Decision{Allow: true, Rule: "default: allow"}
}

// Masker hides secrets in text that leaves the server.
type Masker interface {
	Mask(s string) (string, map[string]int)
}

// Spiller saves full output that governance had to cut and returns its path.
type Spiller interface {
	Save(prefix string, data []byte) (string, error)
}

// ReporterFactory makes the reporter of one call; the rpc layer stamps the
// call id and tool on every notification.
type ReporterFactory func(callID, tool string) Reporter

// Prepared is a call that passed lookup, normalization and validation.
type Prepared struct {
	Tool   *Tool
	Call   *Call
	Args   map[string]any // normalized, validated arguments
	Input  any            // decoded input (typed for core tools)
	Labels Labels
	Norm   Normalization
	// Approved: the request carried a valid tools/prepare token, so the
	// client already asked its user about this call.
	Approved bool
}

// Executor is the one place a call runs.
type Executor struct {
	Registry   *Registry
	Env        *Env
	Permission Permission
	Masker     Masker  // nil = no masking
	Spill      Spiller // nil = cut output is not saved
	Log        *slog.Logger
	// OnResult observes every finished call (audit log).
	OnResult func(p *Prepared, req Request, r Result, d Decision, dur time.Duration)
	// Unknown may explain a name that is no registered tool better than
	// the list of tools does (an upstream server that is down); nil = no.
	Unknown func(names mention.Prefix, name string) (msg string, ok bool)

	seq atomic.Int64
	// running counts the callIds of the calls under way, so that a
	// generated id never repeats one a client gave (their notifications
	// would be indistinguishable).
	runningMu sync.Mutex
	running   map[string]int
	// tokens are the approvals tools/prepare handed out.
	tokens approvalTokens
}

func (x *Executor) log() *slog.Logger {
	if x.Log != nil {
		return x.Log
	}
	return slog.New(slog.DiscardHandler)
}

// names is how the client's model sees the tool names (Env.Names).
func (x *Executor) names() mention.Prefix {
	if x.Env == nil {
		return ""
	}
	return x.Env.Names
}

func (x *Executor) newID() string {
	return "call-" + strconv.FormatInt(x.seq.Add(1), 10)
}

// claimIDs gives each of reqs without a callId one that no running call
// and no other of reqs has, and counts all of reqs' ids as running until
// release is called.
func (x *Executor) claimIDs(reqs []Request) (release func()) {
	x.runningMu.Lock()
	defer x.runningMu.Unlock()
	if x.running == nil {
		x.running = map[string]int{}
	}
	for _, r := range reqs {
		if r.CallID != "" {
			x.running[r.CallID]++
		}
	}
	ids := make([]string, len(reqs))
	for i := range reqs {
		for reqs[i].CallID == "" {
			if id := x.newID(); x.running[id] == 0 {
				reqs[i].CallID = id
				x.running[id]++
			}
		}
		ids[i] = reqs[i].CallID
	}
	return func() {
		x.runningMu.Lock()
		defer x.runningMu.Unlock()
		for _, id := range ids {
			if x.running[id]--; x.running[id] <= 0 {
				delete(x.running, id)
			}
		}
	}
}

// Call runs one request through the whole path and always returns a result.
func (x *Executor) Call(ctx context.Context, req Request, rf ReporterFactory) Result {
	reqs := []Request{req}
	defer x.claimIDs(reqs)()
	req = reqs[0]
	p, res, ok := x.prepare(req, rf, true)
	if !ok {
		return res
	}
	x.approve(p, req)
	return x.run(ctx, p, req)
}

// approve marks p approved when req carries a token tools/prepare issued
// for this very call; the token is spent either way.
func (x *Executor) approve(p *Prepared, req Request) {
	if req.Approved != "" {
		p.Approved = x.tokens.take(req.Approved, p.Tool.Name, p.Args, time.Now())
	}
}

// prepare does lookup → normalize → validate → labels. On failure it returns
// the isError result to send, which audit says to record (OnResult).
func (x *Executor) prepare(req Request, rf ReporterFactory, audit bool) (*Prepared, Result, bool) {
	start := time.Now()
	if req.CallID == "" {
		req.CallID = x.newID()
	}
	fail := func(r Result) (*Prepared, Result, bool) {
		r.CallID = req.CallID
		r.SetDetail("durationMs", msSince(start))
		r = x.govern(nil, r)
		if audit && x.OnResult != nil {
			x.OnResult(nil, req, r, Decision{}, time.Since(start))
		}
		return nil, r, false
	}
	t, ok := x.Registry.Lookup(req.Name)
	if !ok && x.Unknown != nil {
		if msg, ok := x.Unknown(x.names(), req.Name); ok {
			return fail(Errorf("%s", msg))
		}
	}
	if !ok {
		names := x.names()
		// A client that passed on the name its host shows (agentls_read)
		// is told the wire name, not offered the name that just failed.
		if bare, cut := strings.CutPrefix(req.Name, string(names)); cut && names != "" {
			if _, known := x.Registry.Lookup(bare); known {
				return fail(Errorf("unknown tool %q: tools/call takes the bare name, %q; the prefix %q is only how descriptions and hints name the tools.", req.Name, bare, string(names)))
			}
		}
		msg := fmt.Sprintf("unknown tool %q.", req.Name)
		if c := x.Registry.closest(req.Name); c != "" {
			msg += fmt.Sprintf(" Did you mean %q?", names.Of(c))
		}
		available := x.Registry.Names()
		for i, n := range available {
			available[i] = names.Of(n)
		}
		msg += " Available tools: " + strings.Join(available, ", ") + "."
		return fail(Errorf("%s", msg))
	}
	if !x.Registry.IsActive(t.Name) {
		// The model may know a deferred tool's name: calling it activates it.
		x.Registry.Activate(t.Name)
	}
	var rep Reporter = NopReporter{}
	if rf != nil {
		rep = rf(req.CallID, t.Name)
	}
	p := &Prepared{Tool: t, Call: &Call{ID: req.CallID, Tool: t.Name, Env: x.Env, Reporter: &maskingReporter{x: x, r: rep}, mask: x.Masker}}
	p.Norm.names = x.names()
	args, err := normalizeArgs(req.Arguments, t.Schema, t.Aliases, t.PrepareRaw, &p.Norm)
	if err != nil {
		var refused refusalError
		if errors.As(err, &refused) {
			return fail(Errorf("%s: %v\n%s", p.Norm.names.Of(t.Name), err, t.usage(p.Norm.names)))
		}
		return fail(Errorf("%s: %v, e.g. %s\n%s", p.Norm.names.Of(t.Name), err, t.example(), t.usage(p.Norm.names)))
	}
	if t.Prepare != nil {
		t.Prepare(args, &p.Norm)
	}
	if msg := t.validate(args, p.Norm.names); msg != "" {
		r := Errorf("%s", p.Norm.namedIn(msg))
		if note := p.Norm.noticeText(); note != "" {
			r.addNote(note)
		}
		if len(p.Norm.Changes) > 0 {
			r.SetDetail("normalized", p.Norm.Changes)
		}
		return fail(r)
	}
	in, err := t.decode(args)
	if err != nil {
		return fail(Errorf("%s: arguments do not fit the schema: %v\n%s", p.Norm.names.Of(t.Name), err, t.usage(p.Norm.names)))
	}
	p.Args, p.Input, p.Labels = args, in, t.labels(in)
	return p, Result{}, true
}

// run does permission → handler → governance for a prepared call.
func (x *Executor) run(ctx context.Context, p *Prepared, req Request) (res Result) {
	start := time.Now()
	// What runs for the call (the permission step, the handler and the
	// packages it calls) names tools as the client's model sees them.
	ctx = mention.WithPrefix(ctx, x.names())
	d := x.permission().Check(ctx, p)
	defer func() {
		res.CallID = p.Call.ID
		if note := p.Norm.noticeText(); note != "" {
			res.addNote(note)
		}
		if note, _ := ctx.Value(noticeKey{}).(string); note != "" {
			res.addNote(note)
		}
		if len(p.Norm.Changes) > 0 {
			res.SetDetail("normalized", p.Norm.Changes)
		}
		res.SetDetail("durationMs", msSince(start))
		res = x.govern(p.Tool, res)
		if x.OnResult != nil {
			x.OnResult(p, req, res, d, time.Since(start))
		}
	}()
	if d.Refusal != nil {
		return *d.Refusal
	}
	if !d.Allow {
		r := Errorf("%s", d.Reason)
		r.SetDetail("permission", map[string]any{"decision": "deny", "rule": d.Rule, "answer": d.Answer})
		return r
	}
	if d.Asked {
		defer func() {
			res.SetDetail("permission", map[string]any{"decision": "allow", "rule": d.Rule, "answer": d.Answer})
		}()
	}
	if err := ctx.Err(); err != nil {
		return Errorf("%s was cancelled before it started", x.names().Of(p.Tool.Name))
	}
	return x.invoke(ctx, p)
}

func (x *Executor) permission() Permission {
	if x.Permission != nil {
		return x.Permission
	}
	return AllowAll{}
}

// invoke calls the handler; a panic becomes an isError result and a log line.
func (x *Executor) invoke(ctx context.Context, p *Prepared) (res Result) {
	defer func() {
		if v := recover(); v != nil {
			x.log().Error("tool panicked", "tool", p.Tool.Name, "callId", p.Call.ID, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
			res = Errorf("internal error in %s: %v. This is a bug in agentls, not in your call; try another way.", x.names().Of(p.Tool.Name), v)
		}
	}()
	r, err := p.Tool.run(ctx, p.Call, p.Input)
	if err != nil {
		name := x.names().Of(p.Tool.Name)
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return Errorf("%s stopped: the call's time limit ran out.", name)
		}
		if ctx.Err() != nil {
			return Errorf("%s was cancelled by the client.", name)
		}
		return Errorf("%s failed: %v", name, err)
	}
	return r
}

// Batch runs calls: consecutive concurrency-safe calls (and keyed calls)
// run in parallel, bounded by GOMAXPROCS×2; any other call waits for
// everything before it and runs alone. Results come back in call order.
func (x *Executor) Batch(ctx context.Context, reqs []Request, rf ReporterFactory) []Result {
	results := make([]Result, len(reqs))
	prepared := make([]*Prepared, len(reqs))
	defer x.claimIDs(reqs)()
	for i := range reqs {
		p, r, ok := x.prepare(reqs[i], rf, true)
		if ok {
			x.approve(p, reqs[i])
			prepared[i] = p
		} else {
			results[i] = r
		}
	}
	sem := make(chan struct{}, runtime.GOMAXPROCS(0)*2)
	i := 0
	for i < len(reqs) {
		if prepared[i] == nil {
			i++
			continue
		}
		kind := groupKind(prepared[i].Labels)
		if kind == runAlone {
			results[i] = x.run(ctx, prepared[i], reqs[i])
			i++
			continue
		}
		// A group of consecutive calls of one kind runs in parallel; in a
		// group of keyed calls, same-Key calls form one chain. A call of
		// the other kind waits for the group before it: an edit after a
		// read of its file must see the read's stamp.
		j := i
		chains := map[string][]int{}
		var keys []string
		for j < len(reqs) && (prepared[j] == nil || groupKind(prepared[j].Labels) == kind) {
			if prepared[j] != nil {
				k := prepared[j].Labels.Key
				if k == "" {
					k = "\x00" + strconv.Itoa(j)
				}
				if _, ok := chains[k]; !ok {
					keys = append(keys, k)
				}
				chains[k] = append(chains[k], j)
			}
			j++
		}
		var wg sync.WaitGroup
		for _, k := range keys {
			chain := chains[k]
			wg.Add(1)
			go func() {
				defer wg.Done()
				for _, idx := range chain {
					sem <- struct{}{}
					results[idx] = x.run(ctx, prepared[idx], reqs[idx])
					<-sem
				}
			}()
		}
		wg.Wait()
		i = j
	}
	return results
}

// How a call of a batch may run beside its neighbours.
const (
	runAlone = iota // waits for everything before it, runs alone
	runSafe         // concurrency-safe: in parallel with safe neighbours
	runByKey        // changes one keyed thing (a file): in parallel with keyed neighbours, in order with the same key
)

func groupKind(l Labels) int {
	switch {
	case l.ConcurrencySafe:
		return runSafe
	case l.Key != "":
		return runByKey
	}
	return runAlone
}

func msSince(t time.Time) float64 {
	return float64(time.Since(t).Microseconds()) / 1000
}

// maskingReporter masks secrets in notifications before they leave.
type maskingReporter struct {
	x *Executor
	r Reporter
}

func (m *maskingReporter) Progress(p Progress) {
	p.Output, _ = m.x.mask(p.Output)
	p.Message, _ = m.x.mask(p.Message)
	m.r.Progress(p)
}

func (m *maskingReporter) Details(d map[string]any) {
	md, _ := m.x.maskValue(d)
	m.r.Details(md.(map[string]any))
}
