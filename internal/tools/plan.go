package tools

import "context"

// Plan is what a call would do, found without doing it: the permission
// step shows it in its question (tools/confirm, an MCP elicitation,
// tools/prepare).
type Plan struct {
	// Preview is the structured preview of the question: for edit and
	// write the change details the call would report (ChangeDetails),
	// nil when the tool has none.
	Preview map[string]any
}

// Check runs the tool's side-effect-free checks of the call: a non-nil
// Result is the refusal the call would end in, so nobody should be asked
// about it. A tool without checks plans nothing and passes.
func (p *Prepared) Check(ctx context.Context) (Plan, *Result) {
	if p.Tool.check == nil {
		return Plan{}, nil
	}
	plan, r := p.Tool.check(ctx, p.Call, p.Input)
	if r != nil {
		r.IsError = true
	}
	return plan, r
}
