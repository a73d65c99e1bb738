package shell

import (
	"slices"
	"strings"
	"testing"
)

func TestCommandsDetail(t *testing.T) {
	tests := []struct {
		name string
		cmd  string
		want []Command
	}{
		{"and list", "git status && rm -rf x", []Command{
			{Words: []string{"git", "status"}, Text: "git status"},
			{Words: []string{"rm", "-rf", "x"}, Text: "rm -rf x"},
		}},
		{"pipe, list and substitution", "a | b; c $(d)", []Command{
			{Words: []string{"a"}, Text: "a"},
			{Words: []string{"b"}, Text: "b"},
			{Text: "c $(d)", Dynamic: true},
			{Words: []string{"d"}, Text: "d"},
		}},
		{"assignments stripped, whitespace normalized", "FOO=1  BAR=2 git   log  -n 3", []Command{
			{Words: []string{"git", "log", "-n", "3"}, Text: "git log -n 3"},
		}},
		{"quotes removed in words", `grep -e 'a b' "c\"d" e\ f`, []Command{
			{Words: []string{"grep", "-e", "a b", `c"d`, "e f"}, Text: `grep -e 'a b' "c\"d" e\ f`},
		}},
		{"sudo inner", "sudo -u bob rm x", []Command{
			{Words: []string{"sudo", "-u", "bob", "rm", "x"}, Text: "sudo -u bob rm x", Wrapper: true,
				Inner: []Command{{Words: []string{"rm", "x"}, Text: "rm x"}}},
		}},
		{"bash -c inner", "bash -c 'ls | wc -l'", []Command{
			{Words: []string{"bash", "-c", "ls | wc -l"}, Text: "bash -c 'ls | wc -l'", Wrapper: true,
				Inner: []Command{{Words: []string{"ls"}, Text: "ls"}, {Words: []string{"wc", "-l"}, Text: "wc -l"}}},
		}},
		{"dynamic name", "$CMD x", []Command{{Text: "$CMD x", Dynamic: true, Opaque: true}}},
		{"dynamic argument is not opaque", "rm $f", []Command{{Text: "rm $f", Dynamic: true}}},
		{"here-document to a shell", "sh <<'EOF'\nrm -f v\nEOF", []Command{
			{Words: []string{"sh"}, Text: "sh", Wrapper: true,
				Inner: []Command{{Words: []string{"rm", "-f", "v"}, Text: "rm -f v"}}},
		}},
		{"unquoted here-document keeps literal names", "bash <<EOF\nrm -f $f\nEOF", []Command{
			{Words: []string{"bash"}, Text: "bash", Wrapper: true,
				Inner: []Command{{Text: "rm -f $f", Dynamic: true}}},
		}},
		{"here-string to a shell", "bash -s <<< 'rm x'", []Command{
			{Words: []string{"bash", "-s"}, Text: "bash -s", Wrapper: true,
				Inner: []Command{{Words: []string{"rm", "x"}, Text: "rm x"}}},
		}},
		{"a pipe into a shell is opaque", "echo 'rm x' | sh", []Command{
			{Words: []string{"echo", "rm x"}, Text: "echo 'rm x'"},
			{Words: []string{"sh"}, Text: "sh", Wrapper: true, Opaque: true},
		}},
		{"a here-document to cat is data", "cat <<EOF\nrm x\nEOF", []Command{
			{Words: []string{"cat"}, Text: "cat"},
		}},
		{"alias text", "alias zz=rm ll='ls -l'", []Command{
			{Words: []string{"alias", "zz=rm", "ll=ls -l"}, Text: "alias zz=rm ll='ls -l'", Wrapper: true,
				Inner: []Command{{Words: []string{"rm"}, Text: "rm"}, {Words: []string{"ls", "-l"}, Text: "ls -l"}}},
		}},
		{"alias listing", "alias", []Command{{Words: []string{"alias"}, Text: "alias"}}},
		{"declare", "export A=1", []Command{{Words: []string{"export", "A=1"}, Text: "export A=1"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Analyze(tt.cmd, Options{}).Commands
			if !slices.EqualFunc(got, tt.want, commandEqual) {
				t.Errorf("Analyze(%q).Commands =\n%+v\nwant\n%+v", tt.cmd, got, tt.want)
			}
		})
	}
}

func commandEqual(a, b Command) bool {
	return slices.Equal(a.Words, b.Words) && (a.Words == nil) == (b.Words == nil) &&
		a.Text == b.Text && a.Dynamic == b.Dynamic && a.Wrapper == b.Wrapper && a.Opaque == b.Opaque &&
		slices.EqualFunc(a.Inner, b.Inner, commandEqual)
}

func TestReasons(t *testing.T) {
	tests := []struct {
		name string
		cmd  string
		want []string
	}{
		{"rm", "rm -rf x", []string{"rm deletes files"}},
		{"append", "echo hi >> log", []string{"writes to log via >>"}},
		{"overwrite", "cat a > b", []string{"> overwrites b"}},
		{"unknown program", "make", []string{"make is not a known read-only program"}},
		{"destructive first", "make && git push -f", []string{"git push --force rewrites remote history", "make is not a known read-only program"}},
		{"wrapper", "xargs grep x", []string{"xargs runs another command"}},
		{"sed -i", "sed -i s/a/b/ f", []string{"sed -i edits files in place"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Analyze(tt.cmd, Options{}).Reasons; !slices.Equal(got, tt.want) {
				t.Errorf("Analyze(%q).Reasons = %q, want %q", tt.cmd, got, tt.want)
			}
		})
	}
	t.Run("parse error", func(t *testing.T) {
		got := Analyze(`echo "abc`, Options{})
		if len(got.Reasons) != 1 || !strings.HasPrefix(got.Reasons[0], "parse error: ") || got.ParseError == nil {
			t.Errorf("got reasons %q, error %v; want one parse error reason", got.Reasons, got.ParseError)
		}
	})
}

// Exists sees the redirection target as written, and only for truncating
// redirections to literal paths other than /dev/null.
func TestExistsCalls(t *testing.T) {
	var asked []string
	exists := func(p string) bool { asked = append(asked, p); return p == "old.txt" }
	got := Analyze(`echo a > old.txt; echo b > new.txt; echo c >> old.txt; echo d > /dev/null; echo e > "$x"`, Options{Exists: exists})
	if want := []string{"old.txt", "new.txt"}; !slices.Equal(asked, want) {
		t.Errorf("Exists asked %q, want %q", asked, want)
	}
	want := []string{"> overwrites old.txt", `> overwrites "$x"`}
	if !slices.Equal(got.Reasons[:2], want) {
		t.Errorf("reasons %q, want prefix %q", got.Reasons, want)
	}
}

// Nesting past MaxDepth is not parsed, but destructive names are still
// found.
func TestDepthLimit(t *testing.T) {
	line := "rm -rf x"
	for range MaxDepth + 3 {
		line = "eval " + line
	}
	got := Analyze(line, Options{})
	if !got.Destructive || got.ReadOnly {
		t.Errorf("Analyze(%q) destructive=%v readOnly=%v, want destructive", line, got.Destructive, got.ReadOnly)
	}
	depth := 0
	for cmds := got.Commands; len(cmds) > 0; cmds = cmds[0].Inner {
		depth++
	}
	if depth > MaxDepth+1 {
		t.Errorf("Commands nested %d deep, want at most %d", depth, MaxDepth+1)
	}
}

func TestSedScriptSafe(t *testing.T) {
	tests := []struct {
		script string
		want   bool
	}{
		{"p", true},
		{"10,20p", true},
		{"/start/,/end/d", true},
		{`s/a\/b/c/g`, true},
		{"s|/usr|/opt|2", true},
		{"1~2{s/x/y/;p}", true},
		{"$!N;P;D", true},
		{"/x/a appended; w not-a-command", true},
		{"y/abc/xyz/", true},
		{":a;N;$!ba;s/\\n/ /g", true},
		{"\\%regex%d", true},
		{"w out", false},
		{"1W out", false},
		{"s/a/b/w out", false},
		{"s/a/b/gw out", false},
		{"s/a/b/e", false},
		{"e ls", false},
		{"/x/!e", false},
		{"s/a/b", false}, // unterminated: unsure
		{"k", false},     // unknown command
	}
	for _, tt := range tests {
		if got := sedScriptSafe(tt.script); got != tt.want {
			t.Errorf("sedScriptSafe(%q) = %v, want %v", tt.script, got, tt.want)
		}
	}
}

// A typical 100-character line from an agent; the reference is the parse
// alone, to show what the classification adds.
const benchLine = `cd internal/shell && go vet ./... 2>&1 | grep -v '^#' | head -n 40; git status --short | wc -l`

func BenchmarkAnalyze(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		Analyze(benchLine, Options{})
	}
}

func BenchmarkParseOnly(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		parseOnly(benchLine)
	}
}
