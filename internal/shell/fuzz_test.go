package shell

import "testing"

// FuzzAnalyze checks that Analyze never panics and that its labels agree
// with each other on any input.
func FuzzAnalyze(f *testing.F) {
	for _, s := range []string{
		"ls -la | grep x", "echo $(rm x)", "bash -c 'sudo rm -rf /'", "find . -exec rm {} +",
		"git push --force", "sed -n '/a/,/b/{p;q}' f", "cat <<EOF\n$(x)\nEOF", `echo "abc`,
		"f() { ls; }; f", "xargs -I{} sh -c 'rm {}'", "env -S 'rm x'", "a=(1 2); ${a[@]}",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		got := Analyze(line, Options{})
		if got.ReadOnly && (got.Destructive || got.ParseError != nil) {
			t.Fatalf("Analyze(%q): read-only and destructive=%v parseError=%v", line, got.Destructive, got.ParseError)
		}
		if got.ReadOnly != (len(got.Reasons) == 0) {
			t.Fatalf("Analyze(%q): readOnly=%v with reasons %q", line, got.ReadOnly, got.Reasons)
		}
		for _, c := range got.Commands {
			if got.ReadOnly && c.Wrapper {
				t.Fatalf("Analyze(%q): read-only with wrapper %q", line, c.Text)
			}
			if c.Dynamic && c.Words != nil {
				t.Fatalf("Analyze(%q): dynamic command %q has words", line, c.Text)
			}
		}
	})
}
