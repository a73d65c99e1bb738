package mcp

import (
	"context"
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

// Ask asks the user of the MCP client behind ctx (the context the executor
// passes to the permission step) to approve a call, with MCP elicitation. It
// returns Asked=false when the client cannot be asked; a declined or
// cancelled form is a RejectOnce.
func Ask(ctx context.Context, tool, reason string, args map[string]any) (Approval, error) {
	if !CanAsk(ctx) {
		return Approval{}, nil
	}
	ss := ctx.Value(sessionKey{}).(*sdk.ServerSession)
	msg := fmt.Sprintf("agentls: allow %s? %s", tool, reason)
	res, err := ss.Elicit(ctx, &sdk.ElicitParams{
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
	})
	if err != nil {
		return Approval{}, fmt.Errorf("asking the MCP client to approve %s: %w", tool, err)
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

// ApprovalNeeded is the denial text for an "ask" decision the client could
// not be asked about.
func ApprovalNeeded(tool, reason string) string {
	return fmt.Sprintf("%s needs the user's approval (%s), and this MCP client cannot ask for it (no elicitation support). Tell the user what you wanted to do and why, or use a read-only way.", tool, reason)
}

// Confirmer answers the permission gate's questions (policy.Confirmer) with
// MCP elicitation; a client that cannot be asked gets a rejection whose
// message tells the model that approval is needed.
type Confirmer struct{}

// Confirm implements policy.Confirmer.
func (Confirmer) Confirm(ctx context.Context, req policy.ConfirmRequest) (policy.ConfirmAnswer, error) {
	a, err := Ask(ctx, req.Tool, req.Reason, req.Arguments)
	if err != nil {
		return policy.ConfirmAnswer{}, err
	}
	if !a.Asked {
		return policy.ConfirmAnswer{Decision: policy.RejectOnce, Message: ApprovalNeeded(req.Tool, req.Reason)}, nil
	}
	return policy.ConfirmAnswer{Decision: a.Decision, Message: a.Message}, nil
}
