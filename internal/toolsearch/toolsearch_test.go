package toolsearch

import (
	"fmt"
	"reflect"
	"testing"
)

// corpus is 40 extension-like tools with realistic names and descriptions,
// some deliberately close to each other (several "database" and "file"
// tools) so ranking, not mere matching, decides.
func corpus() []Doc {
	raw := []struct{ name, desc string }{
		{"db_migrate", "Run database schema migrations up to the latest version."},
		{"db_seed", "Fill the development database with fixture rows."},
		{"db_console", "Open a read-only SQL console on the database and run one query."},
		{"db_backup", "Dump the database to a compressed file."},
		{"deploy_preview", "Deploy the current branch to a preview environment and print its URL."},
		{"deploy_production", "Deploy a tagged release to production."},
		{"lint_css", "Lint stylesheets with stylelint."},
		{"lint_go", "Run golangci-lint on Go packages."},
		{"format_code", "Format source files in place with the project's formatters."},
		{"run_tests", "Run the unit test suite, optionally filtered by a pattern."},
		{"run_e2e", "Run end-to-end browser tests with Playwright."},
		{"coverage_report", "Produce a test coverage report as HTML."},
		{"build_docker", "Build the Docker image for the service."},
		{"push_image", "Push a built container image to the registry."},
		{"k8s_logs", "Tail logs of a Kubernetes pod."},
		{"k8s_restart", "Restart a Kubernetes deployment."},
		{"open_pr", "Open a pull request on GitHub for the current branch."},
		{"list_issues", "List open GitHub issues with labels."},
		{"changelog", "Generate the changelog from commit messages."},
		{"bump_version", "Bump the semantic version in package files."},
		{"translate_strings", "Extract and translate UI strings."},
		{"image_optimize", "Compress PNG and JPEG images losslessly."},
		{"bench_compare", "Compare benchmark results between two commits."},
		{"profile_cpu", "Record a CPU profile of the server."},
		{"gen_protos", "Generate Go code from protobuf definitions."},
		{"gen_mocks", "Regenerate mocks for interfaces."},
		{"sentry_events", "Fetch recent error events from Sentry."},
		{"feature_flags", "List and toggle feature flags."},
		{"cache_clear", "Clear the build cache."},
		{"license_check", "Check dependency licenses against the allow list."},
		{"filesystem__read_text_file", "Read the complete contents of a file from the file system as text."},
		{"filesystem__read_file", "Read a file (deprecated: use read_text_file)."},
		{"filesystem__read_media_file", "Read an image or audio file; returns base64 data and the MIME type."},
		{"filesystem__read_multiple_files", "Read the contents of multiple files simultaneously."},
		{"filesystem__write_file", "Create a new file or completely overwrite an existing file with new content."},
		{"filesystem__list_directory", "Get a detailed listing of all files and directories in a path."},
		{"filesystem__search_files", "Recursively search for files and directories matching a pattern."},
		{"github__create_issue", "Create a new issue in a GitHub repository."},
		{"github__get_file_contents", "Get the contents of a file or directory from a GitHub repository."},
		{"slack__post_message", "Post a message to a Slack channel."},
	}
	docs := make([]Doc, len(raw))
	for i, r := range raw {
		docs[i] = Doc{Name: r.name, Description: r.desc, Params: []string{"path: file or directory path", "verbose: print more"}}
	}
	docs[0].Params = []string{"steps: number of migrations to apply", "dryRun: print the SQL without running it"}
	return docs
}

func TestRank(t *testing.T) {
	docs := corpus()
	if len(docs) != 40 {
		t.Fatalf("corpus has %d docs, want 40", len(docs))
	}
	tests := []struct {
		name  string
		query string
		first string
	}{
		{"description words find the migration tool", "database migration", "db_migrate"},
		{"mcp name parts rank the exact tool first", "read text file", "filesystem__read_text_file"},
		{"camelCase query matches snake name", "readTextFile", "filesystem__read_text_file"},
		{"inflected query", "deploying previews", "deploy_preview"},
		{"exact name", "lint_css", "lint_css"},
		{"name beats description", "kubernetes restart", "k8s_restart"},
		{"case-insensitive", "SLACK message", "slack__post_message"},
		{"parameter text counts", "dryRun sql", "db_migrate"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			hits := Rank(tc.query, docs, 5)
			if len(hits) == 0 {
				t.Fatalf("Rank(%q) found nothing", tc.query)
			}
			if hits[0].Name != tc.first {
				t.Errorf("Rank(%q)[0] = %s, want %s; all: %v", tc.query, hits[0].Name, tc.first, hits)
			}
			if docs[hits[0].Index].Name != hits[0].Name {
				t.Errorf("hit index %d points at %s", hits[0].Index, docs[hits[0].Index].Name)
			}
		})
	}
}

func TestRankLimitsAndMisses(t *testing.T) {
	docs := corpus()
	if got := Rank("file", docs, 3); len(got) != 3 {
		t.Errorf("limit 3 gave %d hits", len(got))
	}
	if got := Rank("zebra quantum", docs, 5); len(got) != 0 {
		t.Errorf("unrelated query matched %v", got)
	}
	if got := Rank("to a the of for", docs, 5); got != nil {
		t.Errorf("stop words alone matched %v", got)
	}
	if got := Rank("  __ ", docs, 5); got != nil {
		t.Errorf("empty query matched %v", got)
	}
	if got := Rank("file", docs, 0); len(got) < 10 {
		t.Errorf("limit 0 should return every match, got %d", len(got))
	}
}

func TestRankTiesDeterministic(t *testing.T) {
	// Identical docs score the same: order is by name, then position, no
	// matter the input order.
	docs := []Doc{
		{Name: "zeta_tool", Description: "convert units"},
		{Name: "alpha_tool", Description: "convert units"},
		{Name: "mid_tool", Description: "convert units"},
	}
	rev := []Doc{docs[2], docs[1], docs[0]}
	want := []string{"alpha_tool", "mid_tool", "zeta_tool"}
	for i := range 20 {
		for _, in := range [][]Doc{docs, rev} {
			var got []string
			for _, h := range Rank("convert", in, 0) {
				got = append(got, h.Name)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("run %d: order %v, want %v", i, got, want)
			}
		}
	}
}

func TestTokens(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"filesystem__read_text_file", []string{"filesystem", "read", "text", "fil"}},
		{"readTextFile", []string{"read", "text", "fil"}},
		{"HTTPServer-v2", []string{"http", "server", "v2"}},
		{"Migrations migrate migrating migrated", []string{"migrat", "migrat", "migrat", "migrat"}},
		{"class status bus", []string{"class", "status", "bus"}},
		{"dependencies", []string{"dependency"}},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			if got := Tokens(tc.in); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Tokens(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func BenchmarkRank(b *testing.B) {
	base := corpus()
	for _, n := range []int{40, 1000} {
		var docs []Doc
		for i := 0; len(docs) < n; i++ {
			for _, d := range base {
				d.Name = fmt.Sprintf("%s_%d", d.Name, i)
				docs = append(docs, d)
			}
		}
		b.Run(fmt.Sprintf("docs=%d", n), func(b *testing.B) {
			for b.Loop() {
				Rank("database migration", docs[:n], 5)
			}
		})
	}
}
