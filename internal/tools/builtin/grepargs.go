package builtin

import (
	"strings"

	"github.com/agentls/agentls/internal/tools"
)

// grepTypeGlobs maps ripgrep's --type names models send as "type" to the
// glob that selects the same files.
var grepTypeGlobs = map[string]string{
	"go": "*.go", "py": "*.py", "python": "*.py", "js": "*.{js,jsx,mjs,cjs}", "ts": "*.{ts,tsx,mts,cts}",
	"typescript": "*.{ts,tsx,mts,cts}", "rust": "*.rs", "rs": "*.rs", "java": "*.java", "c": "*.{c,h}",
	"cpp": "*.{cpp,cc,cxx,hpp,hh,hxx,h}", "rb": "*.rb", "ruby": "*.rb", "md": "*.{md,markdown}",
	"markdown": "*.{md,markdown}", "json": "*.json", "yaml": "*.{yaml,yml}", "toml": "*.toml",
	"sh": "*.{sh,bash}", "html": "*.{html,htm}", "css": "*.css", "lua": "*.lua", "php": "*.php",
	"swift": "*.swift", "kotlin": "*.{kt,kts}", "cs": "*.cs", "sql": "*.sql", "vue": "*.vue",
}

// mapGrepExtras handles fields other agents' grep tools have: type is
// mapped to glob where ripgrep's type names it clearly; output_mode (and
// the like) cannot be honoured and is named in the result.
func mapGrepExtras(args map[string]any, n *tools.Normalization) {
	if v, ok := args["type"]; ok {
		delete(args, "type")
		s, _ := v.(string)
		g, known := grepTypeGlobs[strings.ToLower(strings.TrimSpace(s))]
		_, hasGlob := args["glob"]
		if _, inc := args["include"]; inc {
			hasGlob = true
		}
		switch {
		case known && !hasGlob:
			args["glob"] = g
			n.Add("type %q → glob %q", s, g)
		case known:
			n.Notice("ignored `type`: `glob` was given; put the file types in the glob, e.g. %s", g)
		default:
			n.Notice("ignored `type` (%s): {{grep}} has no file types; select files with glob, e.g. {\"pattern\": \"…\", \"glob\": \"*.go\"}", tools.JSONKind(v))
		}
	}
	for _, k := range []string{"output_mode", "outputMode"} {
		if v, ok := args[k]; ok {
			delete(args, k)
			if s, _ := v.(string); s == "content" {
				n.Add("dropped unknown field %q", k) // content is what grep prints
				continue
			}
			n.Add("dropped unknown field %q", k)
			n.Notice("ignored `%s` (%s): {{grep}} always prints matching lines as path:line:text, so the files are the first field of each line; use {{find}} to list files by name", k, tools.JSONKind(v))
		}
	}
}
