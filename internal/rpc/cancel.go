package rpc

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
)

// cancelHandler routes $/cancelRequest to the request it names, like
// protocol.CancelHandler (lifecycle calls, which run inline, are not
// cancellable), but takes any id JSON-RPC allows: LSP's integer
// ids are 32-bit, and protocol.CancelParams refuses a larger one that
// jsonrpc2 accepted on the request itself, so such a call could never be
// cancelled.
func cancelHandler(handler jsonrpc2.Handler) jsonrpc2.Handler {
	cancellable, canceller := jsonrpc2.CancelHandler(handler)
	return func(ctx context.Context, req *jsonrpc2.Request) (any, error) {
		if lifecycleCall(req.Method()) {
			return handler(ctx, req) // inline: no context derived from the pooled one
		}
		if req.Method() != protocol.MethodCancelRequest {
			return cancellable(ctx, req)
		}
		id, err := cancelID(json.RawMessage(req.Params()))
		if err != nil {
			return nil, fmt.Errorf("%w: %w", jsonrpc2.ErrParse, err)
		}
		canceller(id)
		return nil, nil
	}
}

// cancelID reads the id of $/cancelRequest's params: a string or an
// integer within int64.
func cancelID(params json.RawMessage) (jsonrpc2.ID, error) {
	var p struct {
		ID json.RawMessage `json:"id"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		return jsonrpc2.ID{}, err
	}
	raw := bytes.TrimSpace(p.ID)
	var s string
	if len(raw) > 0 && raw[0] == '"' && json.Unmarshal(raw, &s) == nil {
		return jsonrpc2.NewStringID(s), nil
	}
	var n json.Number
	if err := json.Unmarshal(raw, &n); err == nil {
		if i, err := n.Int64(); err == nil {
			return jsonrpc2.NewNumberID(i), nil
		}
		// 7.0 names the request 7 (some encoders write every number so).
		if f, err := n.Float64(); err == nil && f == math.Trunc(f) && math.Abs(f) < 1<<53 {
			return jsonrpc2.NewNumberID(int64(f)), nil
		}
	}
	return jsonrpc2.ID{}, fmt.Errorf("malformed cancel id %s: want a string or an integer", raw)
}
