package mcp

import (
	"context"
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentls/agentls/internal/policy"
)

// problemTeller sends configuration problems (a settings file that is not
// valid JSON, a rule skipped or never matching) to the client as
// notifications/message, where an MCP host shows the user its server's
// warnings; the log on stderr is seldom read.
type problemTeller struct {
	// send is the SDK's own sending handler (set once in New): until the
	// client picks a level with logging/setLevel the SDK's Log sends
	// nothing, and the spec leaves the server to choose what it sends
	// then. These warnings must reach the user.
	send sdk.MethodHandler

	mu     sync.Mutex
	ss     *sdk.ServerSession
	chosen bool // the client sent logging/setLevel: its level filters
}

func (t *problemTeller) levelChosen() {
	t.mu.Lock()
	t.chosen = true
	t.mu.Unlock()
}

// tellStartProblems sends the session's start-up problems once it is open.
func (s *Server) tellStartProblems(ss *sdk.ServerSession) {
	s.problems.mu.Lock()
	s.problems.ss = ss
	s.problems.mu.Unlock()
	s.mu.Lock()
	base := s.base
	s.mu.Unlock()
	if base == nil {
		base = context.Background()
	}
	s.wg.Go(func() {
		if sess, err := s.session(base); err == nil {
			s.tellProblems(sess.Problems)
		}
	})
}

// tellProblems sends each problem (already masked by the session) as a
// notifications/message: level error, or warning for a rule kept that
// never matches. Before the client is initialized there is no one to
// tell; the log has them.
func (s *Server) tellProblems(problems []string) {
	t := &s.problems
	t.mu.Lock()
	ss, chosen := t.ss, t.chosen
	t.mu.Unlock()
	s.mu.Lock()
	base := s.base
	s.mu.Unlock()
	if ss == nil || base == nil || base.Err() != nil {
		return
	}
	for _, p := range problems {
		level := sdk.LoggingLevel("error")
		if policy.Warning(p) {
			level = "warning"
		}
		params := &sdk.LoggingMessageParams{Level: level, Logger: ServerName, Data: "agentls: " + p}
		var err error
		if chosen {
			err = ss.Log(base, params)
		} else {
			_, err = t.send(base, "notifications/message", &sdk.ServerRequest[*sdk.LoggingMessageParams]{Session: ss, Params: params})
		}
		if err != nil {
			s.log.Debug("notifications/message not sent", "err", err)
		}
	}
}
