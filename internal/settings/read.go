package settings

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
)

// Settings is one settings source: a settings file, or the editor's part
// of initializationOptions:
//
//	{"mode": "...", "permissions": {"allow": [], "ask": [], "deny": []},
//	 "limits": {...}, "sandbox": {...}}
//
// permissions.defaultMode is accepted for mode (Claude Code's spelling).
type Settings struct {
	Mode        string      `json:"mode,omitempty"`
	Permissions Permissions `json:"permissions"`
	// Limits are the tools' limits ({"readLines": 500}) as decoded; the
	// session merges and checks them (tools.Limits.Apply).
	Limits any `json:"limits,omitempty"`
	// Sandbox is the sandbox object (policy.ParseSandbox reads it
	// strictly).
	Sandbox json.RawMessage `json:"sandbox,omitempty"`
}

// Permissions are the three rule lists, in Claude Code's syntax.
type Permissions struct {
	Allow       []string `json:"allow,omitempty"`
	Ask         []string `json:"ask,omitempty"`
	Deny        []string `json:"deny,omitempty"`
	DefaultMode string   `json:"defaultMode,omitempty"`
}

// Read reads the settings file at path. ok is false when it is missing
// (problem "") or cannot be used (problem says why: unreadable, invalid
// JSON with the line and column, a link to nothing, rules under a key
// that would drop them).
func Read(path string) (s Settings, problem string, ok bool) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		if target, lerr := os.Readlink(path); lerr == nil {
			// A link whose target is gone (a dotfiles checkout not
			// there) held rules the user meant: not the same as no file.
			return s, fmt.Sprintf("it is a symbolic link to %s, which does not exist", target), false
		}
		return s, "", false
	}
	if err != nil {
		return s, fmt.Sprintf("cannot read %s: %v", path, err), false
	}
	if err := json.Unmarshal(data, &s); err != nil {
		msg := err.Error()
		var se *json.SyntaxError
		if errors.As(err, &se) {
			line, col := lineCol(data, se.Offset-1) // Offset is just past the bad byte
			msg = fmt.Sprintf("line %d, column %d: %v", line, col, err)
		}
		return Settings{}, "invalid JSON: " + msg, false
	}
	if why := twiceNamed(data); why != "" {
		// encoding/json keeps the last of two members of one name (any
		// case): a second "deny" would drop the first one's rules.
		return Settings{}, why, false
	}
	if why := misplacedRules(data); why != "" {
		// Rules under another name would be dropped without a word, a
		// deny rule among them: the file counts as broken instead.
		return Settings{}, why, false
	}
	return s, "", true
}

// misplacedRules names a key of a settings file (valid JSON) that was meant
// to hold permission rules but would not be read as such: a misspelt
// "permissions" or a rule list at the top ("permission", "deny"), or a
// misspelt list under "permissions" ("denied", "allowed"). json.Unmarshal
// already takes other cases of the right names ("Deny"). Claude Code's
// other keys (env, hooks, additionalDirectories, …) are not rules.
func misplacedRules(data []byte) string {
	var top map[string]json.RawMessage
	if json.Unmarshal(data, &top) != nil {
		return ""
	}
	for k, v := range top {
		if !strings.EqualFold(k, "permissions") {
			if looksLikeRules(k) {
				return fmt.Sprintf("%q is not a settings key: %s", k, rulesGoInPermissions)
			}
			continue
		}
		var lists map[string]json.RawMessage
		if json.Unmarshal(v, &lists) != nil {
			continue
		}
		for pk := range lists {
			// json.Unmarshal takes the lists' names in any case.
			if l := strings.ToLower(pk); l != "allow" && l != "ask" && l != "deny" && ruleListLike(pk) {
				return notARuleList(pk)
			}
		}
	}
	return ""
}

const rulesGoInPermissions = `permission rules go in "permissions": {"allow": [], "ask": [], "deny": []} (rules under another name would be dropped)`

// looksLikeRules reports whether a top-level key was meant to hold
// permission rules (a misspelt "permissions", or a rule list one level too
// high).
func looksLikeRules(k string) bool {
	switch l := strings.ToLower(k); l {
	case "allow", "ask", "deny", "rules":
		return true
	default:
		return strings.HasPrefix(l, "perm")
	}
}

// ruleListLike reports whether a key under "permissions" looks like one
// of the rule lists: the list itself in any case ("allow", "Deny") or
// another spelling of it ("denied", "allowed").
func ruleListLike(k string) bool {
	l := strings.ToLower(k)
	return strings.HasPrefix(l, "allow") || strings.HasPrefix(l, "ask") || strings.HasPrefix(l, "den")
}

func notARuleList(k string) string {
	return fmt.Sprintf("permissions.%s is not a rule list: use allow, ask or deny (rules under another name would be dropped)", k)
}

// twiceNamed names "permissions", or a rule list under it, given twice in
// a settings file (valid JSON), in the same case or another.
func twiceNamed(data []byte) string {
	dec := json.NewDecoder(bytes.NewReader(data))
	seen := map[string]bool{}
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return ""
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return ""
		}
		key, _ := t.(string)
		if !strings.EqualFold(key, "permissions") {
			var skip json.RawMessage
			if dec.Decode(&skip) != nil {
				return ""
			}
			continue
		}
		if seen["permissions"] {
			return `"permissions" is given twice: only the last would be read, so the rules of the other would be dropped; merge them into one`
		}
		seen["permissions"] = true
		var lists json.RawMessage
		if dec.Decode(&lists) != nil {
			return ""
		}
		if why := listTwice(lists); why != "" {
			return why
		}
	}
	return ""
}

// listTwice names a rule list given twice in the permissions object raw.
func listTwice(raw json.RawMessage) string {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return ""
	}
	seen := map[string]bool{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return ""
		}
		key, _ := t.(string)
		if l := strings.ToLower(key); l == "allow" || l == "ask" || l == "deny" {
			if seen[l] {
				return fmt.Sprintf("permissions.%s is given twice: only the last would be read, so the rules of the other would be dropped; merge them into one list", l)
			}
			seen[l] = true
		}
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return ""
		}
	}
	return ""
}

func lineCol(data []byte, off int64) (int, int) {
	line, col := 1, 1
	for i := int64(0); i < off && i < int64(len(data)); i++ {
		if data[i] == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	return line, col
}
