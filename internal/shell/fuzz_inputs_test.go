package shell

import (
	"strings"
	"testing"

	"mvdan.cc/sh/v3/syntax"
)

// auditWriters are programs that write, delete or run other programs with
// any arguments: a line that calls one is never read-only.
var auditWriters = map[string]bool{
	"rm": true, "rmdir": true, "mv": true, "cp": true, "dd": true, "mkdir": true, "touch": true,
	"chmod": true, "chown": true, "chgrp": true, "ln": true, "truncate": true, "shred": true,
	"install": true, "sh": true, "bash": true, "zsh": true, "dash": true, "eval": true,
	"source": true, ".": true, "sudo": true, "doas": true, "xargs": true, "nohup": true,
	"nice": true, "timeout": true, "stdbuf": true, "builtin": true, "perl": true, "ruby": true,
	"curl": true, "wget": true, "kill": true, "pkill": true, "killall": true, "make": true,
	"patch": true, "rsync": true, "scp": true, "ssh": true, "vi": true, "vim": true,
}

// auditQuiet are the redirection targets a read-only line may write to.
var auditQuiet = map[string]bool{"/dev/null": true, "/dev/stdout": true, "/dev/stderr": true}

// FuzzAnalyzeAudit checks Analyze's read-only verdict against an
// independent look at the syntax tree: a line that does not parse (with the
// same parser) is never read-only, and a read-only line has literal command
// names, calls none of auditWriters, and redirects output only to
// auditQuiet or other descriptors. Knowing that no target exists may make
// a line less destructive, never more, and never changes read-only.
func FuzzAnalyzeAudit(f *testing.F) {
	for _, s := range []string{
		"ls -la | grep x > /dev/null", "cat <<EOF\n$(rm x)\nEOF", "{rm,-rf,x}", "echo x >& f",
		"command -v rm", "f() { rm x; }", "ls 2>&1 >/dev/null", "exec 3>f", "a=$(ls) ls \"$a\"",
		"awk 'BEGIN{system(\"x\")}'", "sed -n 'w f' x", "git log --output=f",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		a := Analyze(line, Options{})
		b := Analyze(line, Options{Exists: func(string) bool { return false }})
		if a.ReadOnly != b.ReadOnly {
			t.Fatalf("Analyze(%q): read-only %v, %v when no target exists", line, a.ReadOnly, b.ReadOnly)
		}
		if b.Destructive && !a.Destructive {
			t.Fatalf("Analyze(%q): destructive only when no target exists", line)
		}
		file, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(line), "")
		if err != nil {
			if a.ReadOnly {
				t.Fatalf("Analyze(%q): read-only, but the line does not parse: %v", line, err)
			}
			return
		}
		if !a.ReadOnly {
			return
		}
		syntax.Walk(file, func(n syntax.Node) bool {
			switch n := n.(type) {
			case *syntax.CallExpr:
				if len(n.Args) == 0 {
					return true
				}
				name, ok := auditLiteral(n.Args[0])
				if !ok {
					t.Fatalf("Analyze(%q): read-only, but a command name is not literal: %s", line, printNode(n.Args[0]))
				}
				if auditWriters[name] {
					t.Fatalf("Analyze(%q): read-only, but it calls %s", line, name)
				}
			case *syntax.Redirect:
				target := ""
				if n.Word != nil {
					target = n.Word.Lit()
				}
				switch n.Op {
				case syntax.RdrOut, syntax.AppOut, syntax.RdrAll, syntax.AppAll, syntax.ClbOut, syntax.RdrInOut:
					if !auditQuiet[target] {
						t.Fatalf("Analyze(%q): read-only, but it writes to %s", line, printNode(n.Word))
					}
				case syntax.DplOut:
					if target != "-" && !isDigits(target) && !auditQuiet[target] {
						t.Fatalf("Analyze(%q): read-only, but >& writes to %s", line, printNode(n.Word))
					}
				}
			}
			return true
		})
	})
}

// auditLiteral is w's value when it is made only of literal text and
// quotes holding literal text.
func auditLiteral(w *syntax.Word) (string, bool) {
	var b strings.Builder
	var parts func(ps []syntax.WordPart) bool
	parts = func(ps []syntax.WordPart) bool {
		for _, p := range ps {
			switch p := p.(type) {
			case *syntax.Lit:
				b.WriteString(p.Value)
			case *syntax.SglQuoted:
				if p.Dollar {
					return false
				}
				b.WriteString(p.Value)
			case *syntax.DblQuoted:
				if p.Dollar || !parts(p.Parts) {
					return false
				}
			default:
				return false
			}
		}
		return true
	}
	ok := parts(w.Parts)
	return b.String(), ok
}

func printNode(n syntax.Node) string {
	var b strings.Builder
	syntax.NewPrinter().Print(&b, n)
	return b.String()
}
