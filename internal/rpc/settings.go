package rpc

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/agentls/agentls/internal/policy"
	"github.com/agentls/agentls/internal/tools"
)

// Settings are the initializationOptions of docs/protocol.md.
type Settings struct {
	Mode           string       `json:"mode,omitempty"`
	Permissions    Permissions  `json:"permissions"`
	Limits         tools.Limits `json:"-"` // validated; zero = the defaults
	RawLimits      any          `json:"-"` // as sent, merged with the settings files' by the session
	DeferThreshold int          `json:"deferThreshold,omitempty"`
	// Sandbox is the sandbox object as sent; the policy reads it (strictly,
	// failing closed) with the settings files' blocks.
	Sandbox json.RawMessage `json:"-"`
	// ToolNamePrefix is how the client's model sees the tool names (VS
	// Code: "agentls_"): descriptions and instructions name tools that way.
	// tools/list and tools/call keep the bare names.
	ToolNamePrefix string         `json:"toolNamePrefix,omitempty"`
	Extra          map[string]any `json:"-"`
}

// Permissions are rule lists in Claude Code's syntax.
type Permissions struct {
	Allow []string `json:"allow,omitempty"`
	Ask   []string `json:"ask,omitempty"`
	Deny  []string `json:"deny,omitempty"`
}

// Modes accepted in initializationOptions.mode.
var Modes = []string{"default", "acceptEdits", "readOnly", "bypass"}

// ParseSettings validates initializationOptions. Problems that change the
// meaning are errors naming the field and what to send; unknown fields are
// warnings.
func ParseSettings(raw json.RawMessage) (Settings, []string, error) {
	var s Settings
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || string(t) == "null" || string(t) == "[]" {
		return Settings{}, nil, nil
	}
	var m map[string]any
	if err := json.Unmarshal(t, &m); err != nil {
		return s, nil, fmt.Errorf("must be a JSON object: %v", err)
	}
	var warnings []string
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := m[k]
		switch k {
		case "mode":
			str, ok := v.(string)
			if !ok || !contains(Modes, str) {
				return s, nil, fmt.Errorf("mode must be one of %s, got %s", strings.Join(Modes, ", "), show(v))
			}
			s.Mode = str
		case "permissions":
			if arr, ok := v.([]any); ok && len(arr) == 0 {
				continue
			}
			pm, ok := v.(map[string]any)
			if !ok {
				return s, nil, fmt.Errorf("permissions must be an object {allow: [], ask: [], deny: []}, got %s", show(v))
			}
			for pk, pv := range pm {
				list, err := stringList("permissions."+pk, pv)
				if err != nil {
					return s, nil, err
				}
				if pk == "allow" || pk == "ask" || pk == "deny" {
					// One rule that does not parse would void the editor's
					// every rule, its denies too: refuse it here instead.
					for i, r := range list {
						if _, err := policy.ParseRule(r); err != nil {
							return s, nil, fmt.Errorf("permissions.%s[%d] %q: %v", pk, i, r, err)
						}
					}
				}
				switch pk {
				case "allow":
					s.Permissions.Allow = list
				case "ask":
					s.Permissions.Ask = list
				case "deny":
					s.Permissions.Deny = list
				default:
					// A misspelt list ("Deny", "denied") would drop its
					// rules with only a warning: fail closed instead.
					// Other keys (Claude Code's additionalDirectories,
					// defaultMode) are not agentls's and are only warned.
					if misspeltRuleList(pk) {
						return s, nil, fmt.Errorf("permissions.%s is not a rule list: use allow, ask or deny (rules under another name would be dropped)", pk)
					}
					warnings = append(warnings, fmt.Sprintf("unknown option permissions.%s ignored", pk))
				}
			}
		case "limits":
			// Warnings (unknown names) are the session's to report, with
			// those of the settings files.
			l, _, err := tools.DefaultLimits().Apply(v)
			if err != nil {
				return s, nil, err
			}
			s.Limits, s.RawLimits = l, v
		case "sandbox":
			b, err := json.Marshal(v)
			if err != nil {
				return s, nil, fmt.Errorf("sandbox: %v", err)
			}
			s.Sandbox = b
		case "deferThreshold":
			f, ok := v.(float64)
			if !ok || f < 0 || f != float64(int(f)) {
				return s, nil, fmt.Errorf("deferThreshold must be a whole number ≥ 0, got %s", show(v))
			}
			s.DeferThreshold = int(f)
		case "toolNamePrefix":
			str, ok := v.(string)
			if !ok || !tools.ValidToolNamePrefix(str) {
				return s, nil, fmt.Errorf("toolNamePrefix must be a string of letters, digits, _ and - (at most %d), like \"agentls_\", got %s", tools.MaxToolNamePrefix, show(v))
			}
			s.ToolNamePrefix = str
		default:
			if looksLikeRules(k) {
				// "permission" or "deny" at the top: the rules would be
				// dropped with only a warning, so nothing starts.
				return s, nil, fmt.Errorf("unknown option %q: permission rules go in \"permissions\": {\"allow\": [], \"ask\": [], \"deny\": []} (rules under another name would be dropped)", k)
			}
			warnings = append(warnings, fmt.Sprintf("unknown option %q ignored", k))
		}
	}
	// An absent mode stays "": the workspace or user settings may set one.
	return s, warnings, nil
}

func stringList(name string, v any) ([]string, error) {
	arr, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("%s must be an array of rule strings like \"Bash(npm test:*)\", got %s", name, show(v))
	}
	out := make([]string, 0, len(arr))
	for i, x := range arr {
		str, ok := x.(string)
		if !ok {
			return nil, fmt.Errorf("%s[%d] must be a rule string, got %s", name, i, show(x))
		}
		out = append(out, str)
	}
	return out, nil
}

func show(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// looksLikeRules reports whether an unknown initializationOptions key was
// meant to hold permission rules (a misspelt "permissions", or a rule list
// one level too high).
// misspeltRuleList reports whether a key under "permissions" names one of
// the rule lists under another spelling ("Deny", "denied", "allowed").
func misspeltRuleList(k string) bool {
	l := strings.ToLower(k)
	return strings.HasPrefix(l, "allow") || strings.HasPrefix(l, "ask") || strings.HasPrefix(l, "deny") || strings.HasPrefix(l, "denie")
}

func looksLikeRules(k string) bool {
	l := strings.ToLower(k)
	switch l {
	case "allow", "ask", "deny", "rules":
		return true
	}
	return strings.HasPrefix(l, "perm")
}
