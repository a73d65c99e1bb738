package proc

import "strings"

// baseEnv is what every command gets: no pager, no prompt, no editor, no colour, and a
// marker that it runs under agentls.
var baseEnv = [...]string{
	"PAGER=cat", "GIT_PAGER=cat", "GIT_TERMINAL_PROMPT=0", "GIT_EDITOR=true",
	"EDITOR=true", "VISUAL=true", "AGENTLS=1", "TERM=dumb", "NO_COLOR=1",
}

// BaseEnv returns parent with the non-interactive settings applied (PAGER=cat,
// GIT_PAGER=cat, GIT_TERMINAL_PROMPT=0, GIT_EDITOR/EDITOR/VISUAL=true, AGENTLS=1,
// TERM=dumb, NO_COLOR=1), replacing any values parent had for them. parent is not changed.
func BaseEnv(parent []string) []string {
	out := make([]string, 0, len(parent)+len(baseEnv))
	for _, kv := range parent {
		if !overridden(kv) {
			out = append(out, kv)
		}
	}
	return append(out, baseEnv[:]...)
}

func overridden(kv string) bool {
	key, _, _ := strings.Cut(kv, "=")
	for _, b := range baseEnv {
		if bk, _, _ := strings.Cut(b, "="); strings.EqualFold(key, bk) {
			return true
		}
	}
	return false
}
