package mcp

import (
	"context"
	"errors"
	"fmt"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentls/agentls/internal/policy"
)

// sessionKey carries the MCP session of the call into the executor, so a
// permission step can ask this client.
type sessionKey struct{}

// Decisions a user can give to an approval question (the editor protocol's
// tools/confirm decisions).
const (
	AllowOnce    = "allowOnce"
	AllowAlways  = "allowAlways"
	RejectOnce   = "rejectOnce"
	RejectAlways = "rejectAlways"
)

// Approval is the answer to an approval question.
type Approval struct {
	// Asked is false when the call did not come from an MCP client that
	// supports elicitation; the call must then be denied with
	// ApprovalNeeded's message.
	Asked bool
	// Decision is one of AllowOnce, AllowAlways, RejectOnce, RejectAlways.
	Decision string
	// Message is what the user typed, if anything.
	Message string
}

// Allowed reports whether the user allowed the call.
func (a Approval) Allowed() bool { return a.Decision == AllowOnce || a.Decision == AllowAlways }

// CanAsk reports whether ctx belongs to an MCP call whose client supports
// elicitation.
func CanAsk(ctx context.Context) bool {
	ss, _ := ctx.Value(sessionKey{}).(*sdk.ServerSession)
	if ss == nil {
		return false
	}
	p := ss.InitializeParams()
	return p != nil && p.Capabilities != nil && p.Capabilities.Elicitation != nil
}

// roundTrip is a call's multi-round-trip state (MCP 2026-07-28, SEP-2322),
// for clients a server may ask only by answering a call with input
// requests: the responses the call was retried with, and the question a
// permission step could not ask directly.
type roundTrip struct {
	responses sdk.InputResponseMap
	need      *sdk.ElicitParams
}

type roundTripKey struct{}

// approvalInput is the input request id of an approval question.
const approvalInput = "agentls-approval"

// errNeedsInput stops a call whose approval must be asked in a new round.
var errNeedsInput = errors.New("the approval is asked for in another round trip")

// multiRoundTrip reports whether ss's client speaks a protocol on which a
// server asks only through input requests (2026-07-28 and later).
func multiRoundTrip(ss *sdk.ServerSession) bool {
	p := ss.InitializeParams()
	return p != nil && p.ProtocolVersion >= "2026-07-28"
}

// Ask asks the user of the MCP client behind ctx (the context the executor
// passes to the permission step) to approve a call, with MCP elicitation. It
// returns Asked=false when the client cannot be asked; a declined or
// cancelled form is a RejectOnce. On a multi-round-trip protocol the first
// round records the question and fails with errNeedsInput; the retry
// carries the answer.
func Ask(ctx context.Context, tool, reason string, args map[string]any) (Approval, error) {
	if !CanAsk(ctx) {
		return Approval{}, nil
	}
	ss := ctx.Value(sessionKey{}).(*sdk.ServerSession)
	msg := fmt.Sprintf("agentls: allow %s? %s", tool, reason)
	params := &sdk.ElicitParams{
		Mode:    "form",
		Message: msg,
		RequestedSchema: map[string]any{
			"type": "object",
			"properties": map[string]any{
				"decision": map[string]any{
					"type": "string", "title": "Decision",
					"enum": []any{AllowOnce, AllowAlways, RejectOnce, RejectAlways},
				},
				"message": map[string]any{"type": "string", "title": "Message to the model (optional)"},
			},
			"required": []any{"decision"},
		},
		Meta: sdk.Meta{"tool": tool, "arguments": args},
	}
	var res *sdk.ElicitResult
	if rt, _ := ctx.Value(roundTripKey{}).(*roundTrip); rt != nil {
		answer, ok := rt.responses[approvalInput].(*sdk.ElicitResult)
		if !ok {
			rt.need = params
			return Approval{}, errNeedsInput
		}
		res = answer
	} else {
		var err error
		if res, err = ss.Elicit(ctx, params); err != nil {
			return Approval{}, fmt.Errorf("asking the MCP client to approve %s: %w", tool, err)
		}
	}
	a := Approval{Asked: true, Decision: RejectOnce}
	if res.Action == "accept" {
		if d, _ := res.Content["decision"].(string); d == AllowOnce || d == AllowAlways || d == RejectAlways {
			a.Decision = d
		}
		a.Message, _ = res.Content["message"].(string)
	}
	return a, nil
}

// Confirmer answers the permission gate's questions (policy.Confirmer) with
// MCP elicitation; for a client that cannot be asked it returns
// policy.CannotAsk, whose reason tells the model that approval is needed.
type Confirmer struct{}

// Confirm implements policy.Confirmer.
func (Confirmer) Confirm(ctx context.Context, req policy.ConfirmRequest) (policy.ConfirmAnswer, error) {
	a, err := Ask(ctx, req.Tool, req.Reason, req.Arguments)
	if err != nil {
		return policy.ConfirmAnswer{}, err
	}
	if !a.Asked {
		return policy.ConfirmAnswer{}, &policy.CannotAsk{Reason: policy.ApprovalNeeded(req.Tool, req.Reason, "MCP client (no elicitation support)")}
	}
	return policy.ConfirmAnswer{Decision: a.Decision, Message: a.Message}, nil
}
