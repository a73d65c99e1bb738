package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// docsHeadingTests names, for every heading of docs/tools.md and
// docs/protocol.md, where the behaviour under it is tested: Go test
// functions (by name, anywhere in the repository) and script folders or
// files (repository paths). A reader who changes a section finds its tests
// here; a new section without an entry fails TestDocsEveryHeadingNamesItsTests.
// Headings are matched by their text up to the first " `" or " (".
var docsHeadingTests = map[string]map[string][]string{
	"docs/tools.md": {
		"Shared behaviour":                  {"cmd/agentls/testdata/script/arguments", "TestInitializeDetailsBeforeReplyAndCallIDs"},
		"Results and the host's output cap": {"internal/mcp/hosts_doc_test.go", "test/hosts/codex.test.mjs", "test/mcp/host-budget.test.mjs"},
		"read":                              {"cmd/agentls/testdata/script/read"},
		"ls":                                {"cmd/agentls/testdata/script/ls"},
		"grep":                              {"cmd/agentls/testdata/script/grep"},
		"find":                              {"cmd/agentls/testdata/script/find"},
		"edit":                              {"cmd/agentls/testdata/script/edit"},
		"write":                             {"cmd/agentls/testdata/script/write"},
		"bash":                              {"cmd/agentls/testdata/script/bash"},
		"The sandbox":                       {"internal/sandbox/escape_linux_test.go", "TestSandboxDecidesWhetherACommandAsks"},
		"bash_output":                       {"cmd/agentls/testdata/script/bash/bash_output_filter.txtar", "TestABackgroundServerIsReadKilledAndItsPortFreed"},
		"bash_kill":                         {"cmd/agentls/testdata/script/bash/bash_kill_stops_job.txtar", "TestNoProcessOutlivesAgentlsHoweverItEnds"},
		"Secret masking":                    {"TestSecretsAreMaskedInEveryOutputChannel", "cmd/agentls/testdata/script/governance"},
		"tool_search":                       {"cmd/agentls/testdata/script/tool_search"},
		"Extension tools":                   {"TestExtensionToolRunsLikeBash", "cmd/agentls/testdata/script/tool_search/call_deferred_by_name.txtar"},
		"Upstream MCP servers":              {"TestUpstreamRestart", "internal/upstream/config_test.go", "test/mcp/upstream_contract.test.mjs"},
		"Permissions":                       {"cmd/agentls/testdata/script/permissions", "TestSandboxDecidesWhetherACommandAsks"},
		"Audit log":                         {"TestTwoProcessesAuditLogParallel", "internal/audit/audit_test.go"},
	},
	"docs/protocol.md": {
		"Lifecycle":          {"TestProtocolLifecycle", "TestLifecycleClosingStdinCancelsAndExits"},
		"initialize":         {"TestDocsInitializeResult", "TestInitializeInitializationOptions"},
		"Limits":             {"TestLimitsCustomStatedAndEnforced", "TestDocsLimitsTable"},
		"Client → server":    {"TestProtocolFramesAndMessageErrors", "TestProtocolCancelRunningCall"},
		"Text document sync": {"TestIncrementalChangesCountUTF16AndABadRangeDropsTheDocument", "TestTextSyncApplyEditRanges"},
		"Server → client":    {"TestConfirmShowsTheChangeAndIsNotSentForACallThatWouldFail", "TestDiagnosticsNewProblems"},
		"tools/prepare":      {"TestPrepareSaysWhatACallNeedsAndItsTokenApprovesItOnce", "TestPrepareAnswersWithoutRunning"},
		"tools/confirm":      {"TestConfirmShowsTheChangeAndIsNotSentForACallThatWouldFail", "TestCancelWhileAskingCancelsTheConfirm"},
		"tools/diagnostics":  {"TestDiagnosticsNewProblems", "TestDiagnosticsUnansweredAndErrors"},
		"Errors":             {"TestProtocolFramesAndMessageErrors", "TestMCPRawLineReplies"},
		"agentls mcp":        {"TestMCPRawLineReplies", "TestMCPStdioEnding", "test/mcp/contract.test.mjs"},
	},
}

var docsHeading = regexp.MustCompile(`^#{2,3} (.+)$`)

// headingKey is a heading's text up to its argument list or aside:
// "read `{path, …}`" → "read", "`agentls mcp` (MCP over stdio)" → "agentls mcp".
func headingKey(h string) string {
	h = strings.TrimPrefix(h, "`")
	for _, sep := range []string{" `", " (", "`"} {
		if i := strings.Index(h, sep); i > 0 {
			h = h[:i]
		}
	}
	return strings.TrimSpace(h)
}

// Every section of the tool and protocol contracts names at least one test
// of what it states, and every test it names exists.
func TestDocsEveryHeadingNamesItsTests(t *testing.T) {
	t.Parallel()
	repo := docsRepo(t)
	funcs := map[string]bool{}
	testFunc := regexp.MustCompile(`(?m)^func (Test\w+)\(`)
	err := filepath.WalkDir(repo, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "node_modules" || d.Name() == ".git") {
			return filepath.SkipDir
		}
		if strings.HasSuffix(p, "_test.go") {
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			for _, m := range testFunc.FindAllStringSubmatch(string(data), -1) {
				funcs[m[1]] = true
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for doc, want := range docsHeadingTests {
		data, err := os.ReadFile(filepath.Join(repo, doc))
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		for _, line := range strings.Split(string(data), "\n") {
			m := docsHeading.FindStringSubmatch(line)
			if m == nil {
				continue
			}
			key := headingKey(m[1])
			seen[key] = true
			refs, ok := want[key]
			if !ok || len(refs) == 0 {
				t.Errorf("%s: section %q names no test (add it to docsHeadingTests)", doc, key)
				continue
			}
			for _, r := range refs {
				if strings.HasPrefix(r, "Test") {
					if !funcs[r] {
						t.Errorf("%s: section %q names %s, which is no test function in the repository", doc, key, r)
					}
				} else if _, err := os.Stat(filepath.Join(repo, r)); err != nil {
					t.Errorf("%s: section %q names %s: %v", doc, key, r, err)
				}
			}
		}
		for key := range want {
			if !seen[key] {
				t.Errorf("%s: docsHeadingTests names section %q, which the document does not have", doc, key)
			}
		}
	}
}
