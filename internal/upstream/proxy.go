package upstream

import (
	"context"
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentls/agentls/internal/tools"
)

// Upstream tools as agentls tools: their names, schemas and calls, and
// the results converted.

// ToolName is the agentls name of an upstream tool: every character of tool
// outside [a-zA-Z0-9_-] becomes "_" (one per rune; one per byte of invalid
// UTF-8), and the whole is cut to MaxToolName bytes.
func ToolName(server, tool string) string {
	n := server + ToolNameSep + strings.Map(func(r rune) rune {
		if r < utf8.RuneSelf && nameByte(byte(r)) {
			return r
		}
		return '_'
	}, tool)
	if len(n) > MaxToolName {
		n = n[:MaxToolName]
	}
	return n
}

// registerLocked adds the listed tools the registry does not have yet; the
// ones it cannot add are reported (Manager.OnProblem), off the lock.
func (s *server) registerLocked(listed []*sdk.Tool) {
	if s.registered == nil {
		s.registered = map[string]bool{}
	}
	var problems []string
	for _, ut := range listed {
		if ut == nil || s.registered[ut.Name] {
			continue
		}
		t, err := s.proxyTool(ut)
		if err == nil {
			err = s.m.reg.Register(t)
		}
		if err != nil {
			s.log.Warn("upstream tool not registered", "tool", ut.Name, "err", err)
			problems = append(problems, fmt.Sprintf("MCP server %q: its tool %q is not offered: %v", s.cfg.Name, ut.Name, err))
			continue
		}
		s.registered[ut.Name] = true
	}
	if len(problems) > 0 {
		s.m.wg.Go(func() { s.m.report(problems) })
	}
}

// proxyTool builds the deferred agentls tool that forwards to ut.
func (s *server) proxyTool(ut *sdk.Tool) (*tools.Tool, error) {
	name := ToolName(s.cfg.Name, ut.Name)
	schema, _ := ut.InputSchema.(map[string]any)
	if schema == nil {
		schema = map[string]any{"type": "object"}
	}
	delete(schema, "$schema") // drafts the validator does not know
	t, err := tools.NewTool(name, ut.Description, schema)
	if err != nil {
		// The upstream validates its own input: keep its schema for the
		// model and validate only that the arguments are an object.
		s.log.Info("upstream schema not usable for validation; the server validates", "tool", ut.Name, "err", err)
		if t, err = tools.NewTool(name, ut.Description, map[string]any{"type": "object"}); err != nil {
			return nil, err
		}
		t.Schema = schema
	}
	t.Deferred, t.Source = true, s.source()
	t.Title = ut.Title
	if t.Title == "" && ut.Annotations != nil {
		t.Title = ut.Annotations.Title
	}
	var labels tools.Labels
	t.OpenWorld = true
	if a := ut.Annotations; a != nil {
		labels.ReadOnly = a.ReadOnlyHint
		labels.Destructive = !a.ReadOnlyHint && (a.DestructiveHint == nil || *a.DestructiveHint)
		t.Idempotent = a.IdempotentHint
		if a.OpenWorldHint != nil {
			t.OpenWorld = *a.OpenWorldHint
		}
	} else {
		labels.Destructive = true
	}
	labels.ConcurrencySafe = labels.ReadOnly
	upstreamName := ut.Name
	t.SetHandler(func(map[string]any) tools.Labels { return labels },
		func(ctx context.Context, c *tools.Call, args map[string]any) (tools.Result, error) {
			return s.call(ctx, c, upstreamName, args), nil
		})
	return t, nil
}

// lostWait bounds how long a call that lost its connection waits for the
// server's watcher to record the loss.
const lostWait = time.Second

// call forwards one call to the upstream.
func (s *server) call(ctx context.Context, c *tools.Call, name string, args map[string]any) tools.Result {
	cs, err := s.session(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return tools.Errorf("%s was cancelled", c.Tool)
		}
		return tools.Errorf("%s", unavailable(c.Tool, s.cfg.Name, err, err))
	}
	params := &sdk.CallToolParams{Name: name, Arguments: args}
	token := s.cfg.Name + "-" + strconv.FormatInt(s.tokenSeq.Add(1), 10)
	s.mu.Lock()
	var gone <-chan struct{}
	if s.cs == cs {
		gone = s.gone
	}
	s.progress[token] = c.Reporter
	up := map[string]any{"server": s.cfg.Name, "tool": name}
	if s.remote() {
		up["transport"] = s.cfg.Type
	} else {
		pid := 0
		if s.cmd != nil && s.cmd.Process != nil {
			pid = s.cmd.Process.Pid
		}
		up["pid"] = pid
	}
	s.mu.Unlock()
	defer func() { s.mu.Lock(); delete(s.progress, token); s.mu.Unlock() }()
	params.SetProgressToken(token)
	res, err := cs.CallTool(ctx, params)
	details := map[string]any{"upstream": up}
	if err != nil {
		if ctx.Err() != nil {
			r := tools.Errorf("%s was cancelled", c.Tool)
			r.Details = details
			return r
		}
		if s.remote() {
			r := s.remoteCallFailed(c, cs, err)
			r.Details = details
			return r
		}
		if !connectionLost(err) {
			r := s.answeredError(c, err.Error())
			r.Details = details
			return r
		}
		// A crash shows here first when the call was in flight; watch
		// records it and restarts the server. The answer waits for that
		// record (briefly), so the model's next call is told the server
		// is restarting instead of going to the dead connection.
		select {
		case <-gone:
		case <-time.After(lostWait):
		case <-ctx.Done():
		}
		r := tools.Errorf("%s failed: the MCP server %q did not answer (%v). It is restarted automatically; call again shortly.", c.Tool, s.cfg.Name, err)
		r.Details = details
		return r
	}
	out := convertResult(res)
	if out.Details == nil {
		out.Details = map[string]any{}
	}
	for k, v := range details {
		out.Details[k] = v
	}
	return out
}

// onProgress forwards an upstream progress notification to the call that
// carries its token.
func (s *server) onProgress(ctx context.Context, r *sdk.ProgressNotificationClientRequest) {
	tok := fmt.Sprint(r.Params.ProgressToken)
	s.mu.Lock()
	rep := s.progress[tok]
	s.mu.Unlock()
	if rep == nil {
		return
	}
	p := tools.Progress{Message: r.Params.Message}
	if r.Params.Total > 0 {
		pct := 100 * r.Params.Progress / r.Params.Total
		p.Percentage = &pct
	}
	rep.Progress(p)
}

// convertResult maps an upstream result to an agentls result; structured
// content goes to details.
func convertResult(res *sdk.CallToolResult) tools.Result {
	out := tools.Result{IsError: res.IsError}
	for _, c := range res.Content {
		switch c := c.(type) {
		case *sdk.TextContent:
			out.Content = append(out.Content, tools.Content{Type: "text", Text: c.Text})
		case *sdk.ImageContent:
			out.Content = append(out.Content, tools.Content{Type: "image", Data: base64.StdEncoding.EncodeToString(c.Data), MimeType: c.MIMEType})
		case *sdk.AudioContent:
			out.Content = append(out.Content, tools.Content{Type: "text", Text: fmt.Sprintf("[audio (%s, %d bytes) not shown]", c.MIMEType, len(c.Data))})
		case *sdk.ResourceLink:
			out.Content = append(out.Content, tools.Content{Type: "text", Text: fmt.Sprintf("[resource %s: %s]", c.Name, c.URI)})
		case *sdk.EmbeddedResource:
			if c.Resource != nil && c.Resource.Text != "" {
				out.Content = append(out.Content, tools.Content{Type: "text", Text: c.Resource.Text})
			} else if c.Resource != nil {
				out.Content = append(out.Content, tools.Content{Type: "text", Text: fmt.Sprintf("[resource %s (%s) not shown]", c.Resource.URI, c.Resource.MIMEType)})
			}
		}
	}
	if len(out.Content) == 0 {
		out.Content = []tools.Content{{Type: "text", Text: "(no output)"}}
	}
	if res.StructuredContent != nil {
		out.Details = map[string]any{"structuredContent": res.StructuredContent}
	}
	return out
}
