package tools

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"sync"
	"time"
)

// Preparation is the answer of tools/prepare: what a call would need,
// found without writing or running anything.
type Preparation struct {
	// Decision is "allow", "ask", "deny" or "fail" (the call would fail
	// its checks: nothing should be asked).
	Decision string         `json:"decision"`
	Title    string         `json:"title,omitempty"`
	Message  string         `json:"message,omitempty"`
	Preview  map[string]any `json:"preview,omitempty"`
	Reason   string         `json:"reason,omitempty"`
	Error    string         `json:"error,omitempty"`
	// Token (decision "ask") lets the call, sent with the same name and
	// arguments as Request.Approved, run without a second question.
	Token string `json:"token,omitempty"`
}

// Preparer is a Permission that can also say, without asking, what a call
// needs (the policy gate, the checks, the question it would ask).
type Preparer interface {
	Prepare(ctx context.Context, p *Prepared) Preparation
}

// Prepare answers tools/prepare for req: lookup, normalization and
// validation as for a call (a call that fails them is "fail"), then the
// permission step's answer without asking. Nothing is written or run. An
// "ask" carries a token for Request.Approved.
func (x *Executor) Prepare(ctx context.Context, req Request) Preparation {
	// tools/prepare runs no call, so the audit log records none.
	p, res, ok := x.prepare(req, nil, false)
	if !ok {
		msg, _ := x.mask(resultText(res))
		return Preparation{Decision: "fail", Error: msg}
	}
	pr, ok := x.permission().(Preparer)
	if !ok {
		return Preparation{Decision: "allow"}
	}
	out := pr.Prepare(ctx, p)
	// Everything here reaches the client's user: masked like a result.
	for _, f := range []*string{&out.Title, &out.Message, &out.Reason, &out.Error} {
		*f, _ = x.mask(*f)
	}
	if out.Preview != nil {
		m, _ := x.maskValue(out.Preview)
		out.Preview, _ = m.(map[string]any)
	}
	if out.Decision == "ask" {
		out.Token = x.tokens.issue(p.Tool.Name, p.Args, time.Now())
	}
	return out
}

func resultText(r Result) string {
	var parts []string
	for _, c := range r.Content {
		if c.Type == "text" || c.Type == "" {
			parts = append(parts, c.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// Approval tokens: at most maxApprovalTokens outstanding (the oldest goes
// first), each valid for approvalTokenTTL and once.
const (
	maxApprovalTokens = 64
	approvalTokenTTL  = 10 * time.Minute
)

// approvalTokens are the outstanding tools/prepare approvals of one
// session. The zero value is ready to use.
type approvalTokens struct {
	mu     sync.Mutex
	byID   map[string]approvalToken
	issued []string // ids in the order issued
}

type approvalToken struct {
	call    [32]byte // hash of the tool name and canonical arguments
	expires time.Time
}

// callKey binds a token to a tool name and its normalized arguments
// (encoding/json sorts object keys: the same arguments, the same key).
func callKey(name string, args map[string]any) [32]byte {
	b, _ := json.Marshal(args)
	return sha256.Sum256(append([]byte(name+"\x00"), b...))
}

func (t *approvalTokens) issue(name string, args map[string]any, now time.Time) string {
	var raw [16]byte
	_, _ = rand.Read(raw[:]) // crypto/rand.Read never fails
	id := hex.EncodeToString(raw[:])
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.byID == nil {
		t.byID = map[string]approvalToken{}
	}
	t.prune(now)
	for len(t.byID) >= maxApprovalTokens {
		delete(t.byID, t.issued[0])
		t.issued = t.issued[1:]
	}
	t.byID[id] = approvalToken{call: callKey(name, args), expires: now.Add(approvalTokenTTL)}
	t.issued = append(t.issued, id)
	return id
}

// take spends the token id: true when it was issued for this very call
// and has not expired. A token is spent by any use, matching or not.
func (t *approvalTokens) take(id, name string, args map[string]any, now time.Time) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	tok, ok := t.byID[id]
	if !ok {
		return false
	}
	delete(t.byID, id)
	return now.Before(tok.expires) && tok.call == callKey(name, args)
}

// prune drops expired tokens and ids already spent from issued.
func (t *approvalTokens) prune(now time.Time) {
	kept := t.issued[:0]
	for _, id := range t.issued {
		if tok, ok := t.byID[id]; ok {
			if now.Before(tok.expires) {
				kept = append(kept, id)
				continue
			}
			delete(t.byID, id)
		}
	}
	t.issued = kept
}
