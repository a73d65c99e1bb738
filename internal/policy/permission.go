package policy

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// Confirmer asks the user about a call (the rpc layer implements it with
// the tools/confirm request). Confirm must return once ctx is done.
type Confirmer interface {
	Confirm(ctx context.Context, req ConfirmRequest) (ConfirmAnswer, error)
}

// ConfirmRequest is the tools/confirm payload.
type ConfirmRequest struct {
	CallID    string         `json:"callId"`
	Tool      string         `json:"tool"`
	Arguments map[string]any `json:"arguments,omitempty"`
	Reason    string         `json:"reason"`         // a sentence for the user
	Rule      string         `json:"rule,omitempty"` // what asked: a rule with its source, mode:<mode>, builtin:<name>
	Preview   map[string]any `json:"preview,omitempty"`
	// Title and Message are the question as Render words it: a short
	// title and Markdown showing what is approved.
	Title   string `json:"title,omitempty"`
	Message string `json:"message,omitempty"`
}

// Answers of tools/confirm.
const (
	AllowOnce    = "allowOnce"
	AllowAlways  = "allowAlways"
	RejectOnce   = "rejectOnce"
	RejectAlways = "rejectAlways"
)

// ConfirmAnswer is the tools/confirm result.
type ConfirmAnswer struct {
	Decision string `json:"decision"`
	Message  string `json:"message,omitempty"`
	// Declined: the answer is a client's decline of a form (an MCP
	// elicitation), which a host may also send when nobody could answer.
	Declined bool `json:"-"`
}

// Outcome is the permission step's result for one call.
type Outcome struct {
	Allowed bool
	// Rule is the deciding rule, mode or builtin; "user" when the user
	// answered.
	Rule string
	// Reason is for the model when the call is denied.
	Reason string
	// Asked: the user was asked; Answer is what they chose.
	Asked  bool
	Answer string
}

// Gate is the executor's permission step: Evaluate, then ask the user
// through Confirmer when the verdict is ask. Nil Confirmer: the client
// cannot ask, and ask means deny.
type Gate struct {
	Config    *Config
	Confirmer Confirmer
	// Client names who asks in refusals ("editor", "MCP host"); Hints
	// are its user's ways to allow a call, for HowToAllow.
	Client string
	Hints  Hints
	// turn serializes questions: one dialog at a time, and a question
	// queued behind an allowAlways is re-evaluated before it is shown.
	turn chan struct{}
}

// NewGate returns a gate over c.
func NewGate(c *Config, confirm Confirmer) *Gate {
	return &Gate{Config: c, Confirmer: confirm, turn: make(chan struct{}, 1)}
}

// Check decides a call. The error is non-nil only when ctx ended while
// waiting for the user; the outcome is then a denial.
func (g *Gate) Check(ctx context.Context, req Request, cr ConfirmRequest) (Outcome, error) {
	v := g.Config.Evaluate(req)
	switch v.Decision {
	case Allow:
		return Outcome{Allowed: true, Rule: v.Rule, Reason: v.Reason}, nil
	case Deny:
		return Outcome{Rule: v.Rule, Reason: v.Reason}, nil
	}
	if g.Confirmer == nil {
		return Outcome{Rule: v.Rule, Reason: g.refusal(req, v, fmt.Sprintf("this %s cannot ask the user", g.client()))}, nil
	}

	if g.turn != nil { // nil: a Gate not made by NewGate asks concurrently
		select {
		case g.turn <- struct{}{}:
		case <-ctx.Done():
			return Outcome{Rule: v.Rule, Reason: "cancelled while waiting for the user"}, ctx.Err()
		}
		defer func() { <-g.turn }()
	}
	// An answer given while this call waited may have settled it.
	if v = g.Config.Evaluate(req); v.Decision != Ask {
		return Outcome{Allowed: v.Decision == Allow, Rule: v.Rule, Reason: v.Reason}, nil
	}

	cr.Tool = req.Tool
	if cr.Reason == "" {
		cr.Reason = v.Reason
	}
	if cr.Rule == "" {
		cr.Rule = v.Rule
	}
	if cr.Title == "" {
		cr.Title, cr.Message = Render(cr)
	}
	type reply struct {
		a   ConfirmAnswer
		err error
	}
	done := make(chan reply, 1) // buffered: the goroutine never blocks on send
	go func() {
		a, err := g.Confirmer.Confirm(ctx, cr)
		done <- reply{a, err}
	}()
	var rep reply
	select {
	case rep = <-done:
	case <-ctx.Done():
		return Outcome{Rule: v.Rule, Reason: "cancelled while waiting for the user", Asked: true}, ctx.Err()
	}
	if rep.err != nil {
		var cannot *CannotAsk
		if errors.As(rep.err, &cannot) {
			return Outcome{Rule: v.Rule, Reason: g.refusal(req, v, cannot.Reason)}, nil // nobody was asked
		}
		if ctx.Err() != nil {
			return Outcome{Rule: v.Rule, Reason: "cancelled while waiting for the user", Asked: true}, ctx.Err()
		}
		return Outcome{Rule: v.Rule, Asked: true, Reason: fmt.Sprintf("the editor could not ask the user for approval (%v); the call did not run", rep.err)}, nil
	}
	out := Outcome{Rule: "user", Asked: true, Answer: rep.a.Decision}
	switch rep.a.Decision {
	case AllowOnce:
		out.Allowed = true
	case AllowAlways:
		out.Allowed = true
		for _, r := range SessionRules(req) {
			g.Config.AddSessionRule("allow", r)
		}
	case RejectAlways:
		for _, r := range SessionRules(req) {
			g.Config.AddSessionRule("deny", r)
		}
		out.Reason = deniedByUser(rep.a.Message)
	case RejectOnce:
		out.Reason = deniedByUser(rep.a.Message)
		if rep.a.Declined {
			out.Reason = g.refusal(req, v, fmt.Sprintf("the %s declined the question (the user declined it, or the %s could not ask anyone, as in a headless run)", g.client(), g.client()))
		}
	default:
		out.Reason = fmt.Sprintf("the editor answered %q, which is not %s, %s, %s or %s; the call did not run",
			rep.a.Decision, AllowOnce, AllowAlways, RejectOnce, RejectAlways)
	}
	return out, nil
}

// CannotAsk is what a Confirmer returns when its client could not ask the
// user (an MCP client without elicitation, a question cancelled without
// an answer): the call is refused as needing approval, not as denied by a
// user who was never asked. Reason says what happened ("the MCP host
// could not ask the user: it has no elicitation support").
type CannotAsk struct{ Reason string }

func (e *CannotAsk) Error() string { return e.Reason }

func (g *Gate) client() string {
	if g.Client == "" {
		return "editor"
	}
	return g.Client
}

// refusal is the model's text for a call that needed approval and did not
// get it: why it needed it, what happened, and how the user can allow it.
func (g *Gate) refusal(req Request, v Verdict, happened string) string {
	reason := strings.TrimSuffix(v.Reason, "; the user must approve it")
	s := fmt.Sprintf("%s needs the user's approval (%s), but %s, so it did not run.", req.Tool, reason, happened)
	if how := HowToAllow(req, v, g.Hints); how != "" {
		s += " " + how
	}
	return s + " Do something else, or tell the user what you wanted to do and why."
}

func deniedByUser(msg string) string {
	if msg == "" {
		return "denied by the user"
	}
	return "denied by the user: " + msg
}
