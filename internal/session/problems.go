package session

import (
	"github.com/agentls/agentls/internal/policy"
	"github.com/agentls/agentls/internal/tools"
)

// OnProblems makes fn receive, besides Options.OnReload, the configuration
// problems found from now on (a reload, an upstream server's failure), for
// a front end that learns of the session only once it is built (agentls
// mcp tells its client with notifications/message). nil stops it.
func (s *Session) OnProblems(fn func(problems []string)) {
	if fn == nil {
		s.problemSink.Store(nil)
		return
	}
	s.problemSink.Store(&fn)
}

// reportProblems hands problems to Options.OnReload and OnProblems's sink.
func (s *Session) reportProblems(probs []string) {
	if len(probs) == 0 {
		return
	}
	if s.reloadSpec.onReload != nil {
		s.reloadSpec.onReload(probs)
	}
	if fn := s.problemSink.Load(); fn != nil {
		(*fn)(probs)
	}
}

// unknownToolRules names, masked, the rules of cfg whose tool reg lacks:
// they never match, which their author did not mean.
func unknownToolRules(cfg *policy.Config, reg *tools.Registry, mask func(string) string) []string {
	var probs []string
	for _, p := range cfg.UnknownTools(func(tool string) bool { _, ok := reg.Lookup(tool); return ok }) {
		probs = append(probs, mask(p.String()))
	}
	return probs
}
