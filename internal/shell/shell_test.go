package shell

import (
	"slices"
	"strings"
	"testing"
)

// flags summarize an Analysis for the table: which labels are set.
type flags uint8

const (
	ro flags = 1 << iota
	destr
	wrapper  // some command is a Wrapper
	dynamic  // some command is Dynamic
	parseErr // ParseError is set
)

func summarize(a Analysis) flags {
	var f flags
	if a.ReadOnly {
		f |= ro
	}
	if a.Destructive {
		f |= destr
	}
	if a.ParseError != nil {
		f |= parseErr
	}
	for _, c := range a.Commands {
		if c.Wrapper {
			f |= wrapper
		}
		if c.Dynamic {
			f |= dynamic
		}
	}
	return f
}

func (f flags) String() string {
	var parts []string
	for _, n := range []struct {
		f    flags
		name string
	}{{ro, "ro"}, {destr, "destructive"}, {wrapper, "wrapper"}, {dynamic, "dynamic"}, {parseErr, "parseErr"}} {
		if f&n.f != 0 {
			parts = append(parts, n.name)
		}
	}
	return "{" + strings.Join(parts, ",") + "}"
}

func existsNone(string) bool { return false }
func existsAll(string) bool  { return true }

func TestAnalyze(t *testing.T) {
	tests := []struct {
		name   string
		cmd    string
		exists func(string) bool // nil: Options.Exists nil
		want   flags
		texts  []string // if set, the Text of every command in order
	}{
		// Read-only programs, pipes and lists.
		{"pipe ls grep", "ls -la | grep x", nil, ro, []string{"ls -la", "grep x"}},
		{"git log pipe head", "git log --oneline | head", nil, ro, []string{"git log --oneline", "head"}},
		{"list of read-only", "pwd; ls && cat a || echo no", nil, ro, []string{"pwd", "ls", "cat a", "echo no"}},
		{"cmd1; cmd2 one unknown", "ls; make", nil, 0, []string{"ls", "make"}},
		{"git status and npm test", "git status && npm test", nil, 0, []string{"git status", "npm test"}},
		{"npm run build", "npm run build", nil, 0, nil},
		{"go test", "go test ./...", nil, 0, nil},
		{"go vet", "go vet ./...", nil, ro, nil},
		{"go env -w", "go env -w GOFLAGS=-x", nil, 0, nil},
		{"leading assignment", "FOO=1 ls", nil, ro, []string{"ls"}},
		{"assignment to PATH", "PATH=/tmp/evil ls", nil, 0, nil},
		{"git external diff env", "GIT_EXTERNAL_DIFF=./x git diff", nil, 0, nil},
		{"env alone", "env", nil, ro, nil},
		{"env with only assignments", "env FOO=1", nil, ro, nil},
		{"heredoc", "cat <<EOF\nhello $USER\nEOF", nil, ro, []string{"cat"}},
		{"process substitution", "diff <(ls a) <(ls b)", nil, ro | dynamic, []string{"diff <(ls a) <(ls b)", "ls a", "ls b"}},
		{"backquotes read-only", "echo `date`", nil, ro | dynamic, []string{"echo $(date)", "date"}},
		{"quoted name", `"ls" '-l'`, nil, ro, nil},
		{"escaped name", `\ls`, nil, ro, nil},
		{"time keyword", "time ls -l", nil, ro, []string{"ls -l"}},
		{"test clause", "[[ -f x ]] && cat x", nil, ro, nil},
		{"for loop read-only", "for f in *.go; do wc -l $f; done", nil, ro | dynamic, nil},
		{"function defined and called", "f() { ls; }; f", nil, ro, []string{"ls", "f"}},
		{"function calling unknown", "f() { make; }; f", nil, 0, nil},
		{"empty line", "", nil, ro, nil},
		{"comment only", "# nothing", nil, ro, nil},
		{"command -v lookup", "command -v go", nil, ro, nil},
		{"local program", "./ls", nil, 0, nil},
		{"system path", "/bin/ls -l", nil, ro, nil},
		{"node version", "node --version", nil, ro, nil},
		{"node script", "node x.js", nil, 0, nil},

		{"typical pipeline", "grep -rn TODO . | sort | uniq -c | sort -rn | head -20", nil, ro, nil},
		{"wc over git ls-files", "wc -l $(git ls-files '*.go')", nil, ro | dynamic, nil},
		{"go list modules", "go list -m all", nil, ro, nil},
		{"git diff paths", "git --no-pager diff HEAD~1 -- src/", nil, ro, nil},
		{"while read loop", "while read -r l; do echo \"$l\"; done < files.txt", nil, ro | dynamic, nil},
		{"stash push", "git stash", nil, 0, nil},

		// Redirections.
		{"write redirect", "cat a > b", nil, destr, nil},
		{"write redirect new file", "cat a > b", existsNone, 0, nil},
		{"stderr to dev null", "ls 2>/dev/null", nil, ro, nil},
		{"stdout to dev null", "echo hi > /dev/null", nil, ro, nil},
		{"fd dup", "ls 2>&1 | head", nil, ro, nil},
		{"append", "echo hi >> log", nil, 0, nil},
		{"truncate existing", "> existing", existsAll, destr, nil},
		{"truncate missing", "> existing", existsNone, 0, nil},
		{"dup to file", "ls >&out", existsAll, destr, nil},
		{"all to file", "ls &> out", existsNone, 0, nil},
		{"dynamic target", `echo x > "$out"`, existsNone, destr, nil},
		{"read write", "cat <> f", nil, 0, nil},
		{"if with redirect", "if grep -q x f; then echo y > out; fi", existsNone, 0, []string{"grep -q x f", "echo y"}},
		{"group redirect", "{ ls; pwd; } > out", existsAll, destr, nil},

		// Dynamic names and substitutions.
		{"dynamic name", "$CMD x", nil, dynamic, []string{"$CMD x"}},
		{"subst as name", "$(which ls) -l", nil, dynamic, nil},
		{"glob as name", "/bin/r? -rf x", nil, dynamic, nil},
		{"rm in command substitution", "echo $(rm x)", nil, destr | dynamic, []string{"echo $(rm x)", "rm x"}},
		{"rm in backquotes", "echo `rm x`", nil, destr | dynamic, nil},
		{"rm in heredoc", "cat <<EOF\n$(rm x)\nEOF", nil, destr, nil},
		{"rm in assignment", "X=$(rm -f y) ls", nil, destr, nil},
		{"rm in process substitution", "cat <(rm x)", nil, destr | dynamic, nil},

		// Wrappers.
		{"bash -c", "bash -c 'ls'", nil, wrapper, nil},
		{"bash -lc rm", `bash -lc "rm -rf x"`, nil, destr | wrapper, nil},
		{"sh -c dynamic", `sh -c "$X"`, nil, wrapper | dynamic, nil},
		{"nested shells", `bash -c "sh -c 'rm x'"`, nil, destr | wrapper, nil},
		{"eval rm", "eval rm -rf x", nil, destr | wrapper, nil},
		{"xargs rm", "xargs rm", nil, destr | wrapper, nil},
		{"xargs with options", "find . -name '*.o' | xargs -0 -n 1 rm -f", nil, destr | wrapper, nil},
		{"xargs grep", "xargs grep foo", nil, wrapper, nil},
		{"sudo rm", "sudo -u root rm -rf /tmp/x", nil, destr | wrapper, nil},
		{"timeout ls", "timeout 5 ls", nil, wrapper, nil},
		{"timeout rm", "timeout -s KILL 5 rm x", nil, destr | wrapper, nil},
		{"env rm", "env FOO=1 rm x", nil, destr | wrapper, nil},
		{"env -S", "env -S 'rm -rf x'", nil, destr | wrapper, nil},
		{"nohup nice", "nohup nice -n 5 git clean -fdx", nil, destr | wrapper, nil},
		{"find -exec rm", `find . -name '*.tmp' -exec rm {} \;`, nil, destr | wrapper, nil},
		{"find -exec grep", `find . -exec grep -l x {} +`, nil, wrapper, nil},
		{"watch", "watch -n 1 'ls; rm x'", nil, destr | wrapper, nil},
		{"trap", "trap 'rm -f /tmp/x' EXIT", nil, destr | wrapper, nil},
		{"trap -p", "trap -p", nil, ro, nil},
		{"exec only redirect", "exec 2>&1", nil, ro, nil},
		{"command rm", "command rm x", nil, destr | wrapper, nil},
		{"xargs sh -c", "xargs -I{} sh -c 'rm {}'", nil, destr | wrapper, nil},
		{"pipe into sh", "echo ls | sh", nil, wrapper, nil},
		{"name with IFS", "rm${IFS}-rf${IFS}/", nil, destr | dynamic, nil},
		{"ionice on a pid", "ionice -c 3 -p 1234", nil, 0, nil},
		{"parallel scan", "parallel rm ::: a b", nil, destr | wrapper, nil},
		{"su -c", "su - root -c 'rm -rf /'", nil, destr | wrapper, nil},

		// Destructive programs.
		{"rm -rf root", "rm -rf /", nil, destr, nil},
		{"rm quoted", `'rm' x`, nil, destr, nil},
		{"rm with loop variable", "for f in *; do rm $f; done", nil, destr | dynamic, []string{"rm $f"}},
		{"subshell rm", "(cd x && rm y)", nil, destr, []string{"cd x", "rm y"}},
		{"find -delete", "find . -delete", nil, destr, nil},
		{"chmod -R", "chmod -R 777 .", nil, destr, nil},
		{"chmod plain", "chmod +x run.sh", nil, 0, nil},
		{"kill", "kill -9 1234", nil, destr, nil},
		{"dd", "dd if=/dev/zero of=/dev/sda", nil, destr, nil},
		{"mkfs.ext4", "mkfs.ext4 /dev/sdb1", nil, destr, nil},
		{"truncate", "truncate -s 0 log", nil, destr, nil},
		{"docker rm", "docker rm -f web", nil, destr, nil},
		{"docker system prune", "docker system prune -af", nil, destr, nil},
		{"docker ps", "docker ps", nil, 0, nil},
		{"kubectl delete", "kubectl -n prod delete pod x", nil, destr, nil},
		{"mv is a write", "mv a b", nil, 0, nil},
		{"sed -i", "sed -i s/a/b/ f", nil, 0, nil},

		// git.
		{"git push --force", "git push --force", nil, destr, nil},
		{"git push -f origin", "git push -f origin main", nil, destr, nil},
		{"git push lease", "git push --force-with-lease=main origin", nil, destr, nil},
		{"git push plus refspec", "git push origin +main", nil, destr, nil},
		{"git push delete refspec", "git push origin :old", nil, destr, nil},
		{"git push plain", "git push origin main", nil, 0, nil},
		{"git reset --hard", "git reset --hard HEAD~1", nil, destr, nil},
		{"git reset soft", "git reset HEAD~1", nil, 0, nil},
		{"git clean -fd", "git clean -fd", nil, destr, nil},
		{"git checkout dot", "git checkout -- .", nil, destr, nil},
		{"git checkout branch", "git checkout -b feature", nil, 0, nil},
		{"git restore", "git restore .", nil, destr, nil},
		{"git restore staged", "git restore --staged a.go", nil, 0, nil},
		{"git branch -D", "git branch -D old", nil, destr, nil},
		{"git branch list", "git branch -a -v", nil, ro, nil},
		{"git branch create", "git branch feature", nil, 0, nil},
		{"git branch contains", "git branch --contains HEAD~3", nil, ro, nil},
		{"git stash drop", "git stash drop", nil, destr, nil},
		{"git stash list", "git stash list", nil, ro, nil},
		{"git tag list", "git tag -l 'v1.*'", nil, ro, nil},
		{"git tag create", "git tag v1.0", nil, 0, nil},
		{"git with -C", "git -C sub status", nil, ro, nil},
		{"git -c config", "git -c core.pager=evil log", nil, 0, nil},
		{"git -c push force", "git -c x=y push -f", nil, destr, nil},
		{"git diff output", "git diff --output=patch.txt", nil, 0, nil},
		{"git grep pager", "git grep -Ovim foo", nil, 0, nil},
		{"git config get", "git config --get user.name", nil, ro, nil},
		{"git config set", "git config user.name bob", nil, 0, nil},
		{"git remote -v", "git remote -v", nil, ro, nil},
		{"git remote add", "git remote add o url", nil, 0, nil},
		{"git commit", "git commit -m x", nil, 0, nil},

		// Flags of read-only programs.
		{"sort -o", "sort -o out in", nil, 0, nil},
		{"sort -o after operand", "sort in -o out", nil, 0, nil},
		{"sort abbreviated output", "sort --outp=x in", nil, 0, nil},
		{"sort -t o", "sort -to -k2 in", nil, ro, nil},
		{"sort glob may be option", "sort *", nil, 0, nil},
		{"uniq output operand", "uniq in out", nil, 0, nil},
		{"uniq one operand", "uniq -c in", nil, ro, nil},
		{"find with unquoted var", "find . $ARGS", nil, dynamic, nil},
		{"find quoted var value", `find . -name "$pat"`, nil, ro | dynamic, nil},
		{"find -fprint", "find . -fprint out", nil, 0, nil},
		{"find quoted var as action", `find . "$act"`, nil, dynamic, nil},
		{"find unquoted var value", "find . -name $pat", nil, dynamic, nil},
		{"tree -o", "tree -o out.txt", nil, 0, nil},
		{"rg --pre", "rg --pre ./x foo", nil, 0, nil},
		{"rg plain", "rg -n 'func main' --type go", nil, ro, nil},
		{"sed print", "sed -n '10,20p' file.go", nil, ro, nil},
		{"sed substitute", "sed 's/hello/world/g' f", nil, ro, nil},
		{"sed w command", "sed -n 'w out' f", nil, 0, nil},
		{"sed s w flag", "sed 's/a/b/w out' f", nil, 0, nil},
		{"sed e command", "sed '1e rm x' f", nil, 0, nil},
		{"sed -ni", "sed -ni p f", nil, 0, nil},
		{"sed dynamic script", `sed "$S" f`, nil, dynamic, nil},
		{"sed -e blocks", "sed -e '/^#/d' -e '/x/{p;q}' f", nil, ro, nil},
		{"awk print", "awk '{print $1}' f", nil, ro, nil},
		{"awk system", `awk '{system("rm " $1)}' f`, nil, 0, nil},
		{"awk redirect", `awk '{print > "out"}' f`, nil, 0, nil},
		{"awk -f", "awk -f prog.awk f", nil, 0, nil},
		{"yq -i", "yq -i '.a = 1' f.yaml", nil, 0, nil},
		{"yq read", "yq '.a' f.yaml", nil, ro, nil},
		{"date set", "date -s '2020-01-01'", nil, 0, nil},
		{"date format", "date +%s", nil, ro, nil},
		{"xxd two operands", "xxd -r dump bin", nil, 0, nil},
		{"less interactive", "less f", nil, 0, nil},
		{"tee new file", "echo x | tee f", existsNone, 0, nil},
		{"tee existing file", "echo x | tee f", existsAll, destr, nil},
		{"tee append", "echo x | tee -a f", existsAll, 0, nil},
		{"grep dynamic pattern", `grep -r "$PAT" .`, nil, ro | dynamic, nil},

		// Parse errors.
		{"unterminated quote", `echo "abc`, nil, parseErr, nil},
		{"parse error after rm", "rm -rf x\necho \"abc", nil, destr | parseErr, []string{"rm -rf x"}},
		{"parse error hides rm", "rm -rf x (", nil, destr | parseErr, nil},
	}
	names := map[string]bool{}
	for _, tt := range tests {
		if names[tt.name] {
			t.Fatalf("duplicate case name %q", tt.name)
		}
		names[tt.name] = true
		t.Run(tt.name, func(t *testing.T) {
			got := Analyze(tt.cmd, Options{Exists: tt.exists})
			if f := summarize(got); f != tt.want {
				t.Errorf("Analyze(%q) = %v, want %v\nreasons: %q", tt.cmd, f, tt.want, got.Reasons)
			}
			if tt.texts != nil {
				var texts []string
				for _, c := range got.Commands {
					texts = append(texts, c.Text)
				}
				if !slices.Equal(texts, tt.texts) {
					t.Errorf("Analyze(%q) texts = %q, want %q", tt.cmd, texts, tt.texts)
				}
			}
			if !got.ReadOnly && len(got.Reasons) == 0 {
				t.Errorf("Analyze(%q): not read-only but no reason given", tt.cmd)
			}
			if got.ReadOnly && len(got.Reasons) != 0 {
				t.Errorf("Analyze(%q): read-only with reasons %q", tt.cmd, got.Reasons)
			}
		})
	}
}

// The files a line's redirections open are listed, those of the lines its
// wrappers run too, so that path rules see `cat < .env`.
func TestAnalyzeListsRedirectionTargets(t *testing.T) {
	an := Analyze(`cat < .env; echo x >> out.txt 2>&1 >/dev/null; bash -c 'sort <> rw > "$f"' <<'EOF'
body
EOF`, Options{})
	want := []Redirect{
		{Path: ".env", Reads: true},
		{Path: "out.txt", Writes: true},
		{Path: "rw", Reads: true, Writes: true},
	}
	if !slices.Equal(an.Redirects, want) {
		t.Errorf("Redirects = %+v, want %+v", an.Redirects, want)
	}
}
