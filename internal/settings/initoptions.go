package settings

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/agentls/agentls/internal/mention"
)

// InitOptions are the editor's initializationOptions (docs/protocol.md).
type InitOptions struct {
	// Editor is the settings part (mode, permissions, limits, sandbox):
	// the source highest in precedence. An absent mode stays "": the
	// workspace or user settings may set one.
	Editor         Settings
	DeferThreshold int
	// ToolNamePrefix is how the client's model sees the tool names (VS
	// Code: "agentls_"): descriptions and instructions name tools that way.
	// tools/list and tools/call keep the bare names.
	ToolNamePrefix string
}

// Modes accepted in initializationOptions.mode.
var Modes = []string{"default", "acceptEdits", "readOnly", "bypass"}

// Checks are what ParseInitOptions asks of the packages that give the
// values their meaning.
type Checks struct {
	// Rule checks one permission rule (policy.ParseRule): one rule that
	// does not parse fails initialize, as dropping it would void the
	// editor's every rule, its denies too.
	Rule func(rule string) error
	// Limits checks the limits object (tools.Limits.Apply).
	Limits func(limits any) error
}

// ParseInitOptions validates initializationOptions. Problems that change
// the meaning are errors naming the field and what to send; unknown
// fields are warnings (unknown limit names are the session's to report,
// with those of the settings files).
func ParseInitOptions(raw json.RawMessage, check Checks) (InitOptions, []string, error) {
	var o InitOptions
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || string(t) == "null" || string(t) == "[]" {
		return o, nil, nil
	}
	var m map[string]any
	if err := json.Unmarshal(t, &m); err != nil {
		return o, nil, fmt.Errorf("must be a JSON object: %v", err)
	}
	if why := twiceNamed(t); why != "" {
		return o, nil, fmt.Errorf("%s", why)
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
			if !ok || !slices.Contains(Modes, str) {
				return o, nil, fmt.Errorf("mode must be one of %s, got %s", strings.Join(Modes, ", "), show(v))
			}
			o.Editor.Mode = str
		case "permissions":
			w, err := parsePermissions(v, &o.Editor.Permissions, check.Rule)
			if err != nil {
				return o, nil, err
			}
			warnings = append(warnings, w...)
		case "limits":
			if err := check.Limits(v); err != nil {
				return o, nil, err
			}
			o.Editor.Limits = v
		case "sandbox":
			b, err := json.Marshal(v)
			if err != nil {
				return o, nil, fmt.Errorf("sandbox: %v", err)
			}
			o.Editor.Sandbox = b
		case "deferThreshold":
			f, ok := v.(float64)
			if !ok || f < 0 || f != float64(int(f)) {
				return o, nil, fmt.Errorf("deferThreshold must be a whole number ≥ 0, got %s", show(v))
			}
			o.DeferThreshold = int(f)
		case "toolNamePrefix":
			str, ok := v.(string)
			if !ok || !mention.Prefix(str).Valid() {
				return o, nil, fmt.Errorf("toolNamePrefix must be a string of letters, digits, _ and - (at most %d), like \"agentls_\", got %s", mention.MaxPrefix, show(v))
			}
			o.ToolNamePrefix = str
		default:
			if looksLikeRules(k) {
				// "permission" or "deny" at the top: the rules would be
				// dropped with only a warning, so nothing starts.
				return o, nil, fmt.Errorf("unknown option %q: %s", k, rulesGoInPermissions)
			}
			warnings = append(warnings, fmt.Sprintf("unknown option %q ignored", k))
		}
	}
	return o, warnings, nil
}

// parsePermissions reads the permissions object v into p.
func parsePermissions(v any, p *Permissions, checkRule func(string) error) ([]string, error) {
	if arr, ok := v.([]any); ok && len(arr) == 0 {
		return nil, nil
	}
	pm, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("permissions must be an object {allow: [], ask: [], deny: []}, got %s", show(v))
	}
	var warnings []string
	for pk, pv := range pm {
		list, err := stringList("permissions."+pk, pv)
		if err != nil {
			return nil, err
		}
		switch pk {
		case "allow", "ask", "deny":
			for i, r := range list {
				if err := checkRule(r); err != nil {
					return nil, fmt.Errorf("permissions.%s[%d] %q: %v", pk, i, r, err)
				}
			}
		}
		switch pk {
		case "allow":
			p.Allow = list
		case "ask":
			p.Ask = list
		case "deny":
			p.Deny = list
		default:
			// A misspelt list ("Deny", "denied") would drop its rules
			// with only a warning: fail closed instead. Other keys (Claude
			// Code's additionalDirectories, defaultMode) are not agentls's
			// and are only warned.
			if ruleListLike(pk) {
				return nil, fmt.Errorf("%s", notARuleList(pk))
			}
			warnings = append(warnings, fmt.Sprintf("unknown option permissions.%s ignored", pk))
		}
	}
	return warnings, nil
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
