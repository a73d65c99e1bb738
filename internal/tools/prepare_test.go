package tools

import (
	"testing"
	"time"
)

func TestApprovalTokensAreBoundSingleUseAndExpire(t *testing.T) {
	now := time.Now()
	args := map[string]any{"path": "main.go", "edits": []any{map[string]any{"oldText": "a", "newText": "b"}}}
	same := map[string]any{"edits": []any{map[string]any{"newText": "b", "oldText": "a"}}, "path": "main.go"}
	var tok approvalTokens
	t.Run("the same call, once", func(t *testing.T) {
		id := tok.issue("edit", args, now)
		if !tok.take(id, "edit", same, now) {
			t.Fatal("the token does not pass its own call")
		}
		if tok.take(id, "edit", args, now) {
			t.Error("a token passed twice")
		}
	})
	t.Run("other arguments or another tool: refused and spent", func(t *testing.T) {
		id := tok.issue("edit", args, now)
		if tok.take(id, "edit", map[string]any{"path": "other.go"}, now) {
			t.Error("a token passed other arguments")
		}
		if tok.take(id, "edit", args, now) {
			t.Error("a token stayed valid after a mismatch")
		}
		id = tok.issue("edit", args, now)
		if tok.take(id, "write", args, now) {
			t.Error("a token passed another tool")
		}
	})
	t.Run("expired after ten minutes", func(t *testing.T) {
		id := tok.issue("edit", args, now)
		if tok.take(id, "edit", args, now.Add(approvalTokenTTL)) {
			t.Error("an expired token passed")
		}
		id = tok.issue("edit", args, now)
		if !tok.take(id, "edit", args, now.Add(approvalTokenTTL-time.Second)) {
			t.Error("a token expired early")
		}
	})
	t.Run("at most 64 outstanding, the oldest dropped first", func(t *testing.T) {
		first := tok.issue("edit", args, now)
		var last string
		for range maxApprovalTokens {
			last = tok.issue("edit", args, now)
		}
		if len(tok.byID) > maxApprovalTokens {
			t.Errorf("%d tokens outstanding", len(tok.byID))
		}
		if tok.take(first, "edit", args, now) {
			t.Error("the oldest token survived")
		}
		if !tok.take(last, "edit", args, now) {
			t.Error("the newest token was dropped")
		}
	})
}
