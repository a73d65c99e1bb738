// Package faux is a scripted model for end-to-end tests: a queue of
// assistant turns (text or tool calls, or a function that inspects the
// transcript so far) driving a small agent loop against the real agentls
// sidecar, the way an editor's agent would.
package faux

import (
	"context"
	"fmt"

	"github.com/agentls/agentls/test/harness"
)

// ToolCall is a call the model makes.
type ToolCall struct {
	ID   string
	Name string
	Args map[string]any
}

// Message is one transcript entry.
type Message struct {
	Role    string // "user", "assistant", "tool"
	Text    string
	Calls   []ToolCall      // assistant turns
	CallID  string          // tool messages
	Result  *harness.Result // tool messages
	IsError bool
}

// Turn is what the model answers: text, tool calls, or both.
type Turn struct {
	Text  string
	Calls []ToolCall
}

// TurnFunc computes a turn from the transcript so far (a model that reacts
// to tool results).
type TurnFunc func(transcript []Message) (Turn, error)

// Provider replays its turns in order.
type Provider struct {
	turns []TurnFunc
	next  int
}

// New returns a provider with the given scripted turns.
func New(turns ...TurnFunc) *Provider { return &Provider{turns: turns} }

// CallTools is a turn with fixed tool calls.
func CallTools(calls ...ToolCall) TurnFunc {
	return func([]Message) (Turn, error) { return Turn{Calls: calls}, nil }
}

// Next returns the next turn, or an error when the script ran out.
func (p *Provider) Next(transcript []Message) (Turn, error) {
	if p.next >= len(p.turns) {
		return Turn{}, fmt.Errorf("faux provider: script exhausted after %d turns", p.next)
	}
	f := p.turns[p.next]
	p.next++
	return f(transcript)
}

// MaxTurns bounds a loop so a bad script cannot spin forever.
const MaxTurns = 20

// Run drives the agent loop: ask the model, run its tool calls through
// agentls, feed the results back, until the model answers without calls.
// It returns the transcript and the final text.
func Run(ctx context.Context, p *Provider, c *harness.Client, prompt string) ([]Message, string, error) {
	transcript := []Message{{Role: "user", Text: prompt}}
	for range MaxTurns {
		turn, err := p.Next(transcript)
		if err != nil {
			return transcript, "", err
		}
		for i := range turn.Calls {
			if turn.Calls[i].ID == "" {
				turn.Calls[i].ID = fmt.Sprintf("t%d-%d", len(transcript), i)
			}
		}
		transcript = append(transcript, Message{Role: "assistant", Text: turn.Text, Calls: turn.Calls})
		if len(turn.Calls) == 0 {
			return transcript, turn.Text, nil
		}
		for _, call := range turn.Calls {
			var r harness.Result
			err := c.Call(ctx, "tools/call", map[string]any{"name": call.Name, "arguments": call.Args, "callId": call.ID}, &r)
			if err != nil {
				return transcript, "", fmt.Errorf("tools/call %s: %w", call.Name, err)
			}
			transcript = append(transcript, Message{Role: "tool", CallID: call.ID, Text: r.Text(), Result: &r, IsError: r.IsError})
		}
	}
	return transcript, "", fmt.Errorf("faux provider: no final answer after %d turns", MaxTurns)
}

// LastToolText returns the text of the most recent tool result.
func LastToolText(transcript []Message) string {
	for i := len(transcript) - 1; i >= 0; i-- {
		if transcript[i].Role == "tool" {
			return transcript[i].Text
		}
	}
	return ""
}
