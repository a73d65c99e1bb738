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
	// supports elicitation: nobody could be asked.
	Asked bool
	// Decision is one of AllowOnce, AllowAlways, RejectOnce, RejectAlways.
	Decision string
	// Action is the client's elicitation action: accept, decline or
	// cancel (a host may decline or cancel when nobody could answer).
	Action string
}

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

// decisionChoices are the one field of the approval form: a required
// choice whose titles a user reads (MCP's titled single-select enum).
var decisionChoices = []any{
	map[string]any{"const": AllowOnce, "title": "Allow once"},
	map[string]any{"const": AllowAlways, "title": "Allow for the rest of this session"},
	map[string]any{"const": RejectOnce, "title": "Reject once"},
	map[string]any{"const": RejectAlways, "title": "Reject for the rest of this session"},
}

// Ask asks the user of the MCP client behind ctx (the context the executor
// passes to the permission step) to approve a call, with MCP elicitation:
// title and message (Markdown) say what is approved, the form is one
// required choice. It returns Asked=false when the client cannot be
// asked; a declined or cancelled form is a RejectOnce with its Action. On
// a multi-round-trip protocol the first round records the question and
// fails with errNeedsInput; the retry carries the answer.
func Ask(ctx context.Context, tool, title, message string) (Approval, error) {
	if !CanAsk(ctx) {
		return Approval{}, nil
	}
	ss := ctx.Value(sessionKey{}).(*sdk.ServerSession)
	msg := title
	if message != "" {
		msg += "\n\n" + message
	}
	params := &sdk.ElicitParams{
		Mode:    "form",
		Message: msg,
		RequestedSchema: map[string]any{
			"type": "object",
			"properties": map[string]any{
				"decision": map[string]any{"type": "string", "title": "Allow this call?", "oneOf": decisionChoices},
			},
			"required": []any{"decision"},
		},
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
	a := Approval{Asked: true, Decision: RejectOnce, Action: res.Action}
	if res.Action == "accept" {
		if d, _ := res.Content["decision"].(string); d == AllowOnce || d == AllowAlways || d == RejectAlways {
			a.Decision = d
		}
	}
	return a, nil
}

// Confirmer answers the permission gate's questions (policy.Confirmer) with
// MCP elicitation. A client that cannot be asked, or that cancels the
// question, gets policy.CannotAsk (nobody answered); a decline is a
// rejection the gate words as such.
type Confirmer struct{}

// Confirm implements policy.Confirmer.
func (Confirmer) Confirm(ctx context.Context, req policy.ConfirmRequest) (policy.ConfirmAnswer, error) {
	title, message := req.Title, req.Message
	if title == "" {
		title, message = policy.Render(req)
	}
	a, err := Ask(ctx, req.Tool, title, message)
	if err != nil {
		return policy.ConfirmAnswer{}, err
	}
	switch {
	case !a.Asked:
		return policy.ConfirmAnswer{}, &policy.CannotAsk{Reason: "the MCP host could not ask the user: it does not support elicitation"}
	case a.Action == "cancel":
		return policy.ConfirmAnswer{}, &policy.CannotAsk{Reason: "the MCP host could not ask the user: it cancelled the question without an answer"}
	}
	return policy.ConfirmAnswer{Decision: a.Decision, Declined: a.Action == "decline"}, nil
}
