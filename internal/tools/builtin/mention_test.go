package builtin

import (
	"regexp"
	"strings"
	"testing"

	"github.com/agentls/agentls/internal/tools"
)

func TestMentionsRenderMarkedToolNames(t *testing.T) {
	cases := []struct{ name, in, prefix, want string }{
		{"bare", "use {{grep}}, not {{bash}} grep", "", "use grep, not bash grep"},
		{"prefixed", "use {{grep}}, not {{bash}} grep", "agentls_", "use agentls_grep, not agentls_bash grep"},
		{"tool_search keeps its underscore", "call {{tool_search}}", "x-", "call x-tool_search"},
		{"no marks", "globs like {a,b} and [{oldText}]", "agentls_", "globs like {a,b} and [{oldText}]"},
		{"a mark that is not a tool name stays", "{{Not A Name}} and {{read}}", "p_", "{{Not A Name}} and p_read"},
		{"an unclosed mark stays", "{{read", "p_", "{{read"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := tools.Mentions(tc.in, tc.prefix); got != tc.want {
				t.Errorf("tools.Mentions(%q, %q) = %q, want %q", tc.in, tc.prefix, got, tc.want)
			}
		})
	}
}

// Every tool a description or the instructions name is a core tool, and
// the bare text (Description, what MCP hosts get) carries no marks.
func TestDescriptionsNameCoreToolsAsTheClientSeesThem(t *testing.T) {
	core := append(Builtins(tools.DefaultLimits()), NewToolSearch(tools.NewRegistry()))
	names := map[string]bool{}
	for _, tool := range core {
		names[tool.Name] = true
	}
	// A tool's marked text is the framework's; rendered with a prefix no
	// text holds, each mark shows as that prefix before the name.
	const sentinel = "\x00"
	mark := regexp.MustCompile(sentinel + `([a-z_0-9]+)`)
	texts := map[string]string{"instructions": InstructionsFor(sentinel)}
	for _, tool := range core {
		texts[tool.Name] = tool.DescriptionFor(sentinel)
		if strings.Contains(tool.Description, "{{") {
			t.Errorf("%s: the bare description has a mark: %q", tool.Name, tool.Description)
		}
		if tool.DescriptionFor("") != tool.Description {
			t.Errorf("%s: DescriptionFor(\"\") differs from Description", tool.Name)
		}
	}
	mentioned := 0
	for who, text := range texts {
		for _, m := range mark.FindAllStringSubmatch(text, -1) {
			mentioned++
			if !names[m[1]] {
				t.Errorf("%s names {{%s}}, which is not a core tool", who, m[1])
			}
		}
	}
	if mentioned < 20 {
		t.Errorf("only %d tool mentions are marked; the descriptions name other tools more often", mentioned)
	}
	read := NewRead(tools.DefaultLimits())
	if got := read.DescriptionFor(tools.VSCodeToolPrefix); !strings.Contains(got, "Use agentls_grep to find where something is and agentls_find to locate files") {
		t.Errorf("read's description for VS Code does not name agentls_grep and agentls_find:\n%s", got)
	}
	if got := InstructionsFor(tools.VSCodeToolPrefix); !strings.Contains(got, "agentls_edit and agentls_write refuse") || strings.Contains(got, "{{") {
		t.Errorf("instructions for VS Code: %s", got)
	}
}

func TestDescribeVSCodeNamesToolsWithThePrefixAndGivesIconAndTags(t *testing.T) {
	out, err := tools.DescribeFor(Builtins(tools.DefaultLimits()), "vscode", nil, "ignored_")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range out {
		name := c["name"].(string)
		if !strings.HasPrefix(name, tools.VSCodeToolPrefix) || c["toolReferenceName"] != name {
			t.Errorf("contribution name %q / reference %v: want the %s prefix", name, c["toolReferenceName"], tools.VSCodeToolPrefix)
		}
		if icon, _ := c["icon"].(string); !regexp.MustCompile(`^\$\([a-z-]+\)$`).MatchString(icon) {
			t.Errorf("%s: icon %q is not a codicon reference", name, icon)
		}
		if tags, _ := c["tags"].([]string); len(tags) == 0 || tags[0] != "agentls" {
			t.Errorf("%s: tags %v do not start with agentls", name, tags)
		}
		if d := c["modelDescription"].(string); strings.Contains(d, "{{") || strings.Contains(d, "ignored_") {
			t.Errorf("%s: modelDescription %q", name, d)
		}
	}
}
