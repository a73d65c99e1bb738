package main

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// The tools' model-facing behaviour is specified by the txtar scripts under
// testdata/script/<concern>/: each lays out a workspace, runs `agentls call`
// (this test binary re-executed as agentls, so no build step) and compares
// the text the model would read with golden files. `go test -run
// TestScripts ./cmd/agentls -update` rewrites the goldens a script compares
// against; review the diff as a change of the contract.
var update = flag.Bool("update", false, "rewrite the golden files of failing cmp commands in testdata/script")

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"agentls": func() { os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) },
	})
}

// scriptCmds are the commands scripts have beyond testscript's own: those
// that make workspaces a txtar file cannot hold (script_cmds_read_test.go),
// those that check edit results (script_cmds_edit_test.go), those that
// read the numbers a tool list states (script_cmds_governance_test.go) and
// those that read a call's permission decision from the audit log
// (script_cmds_permissions_test.go).
func scriptCmds(t *testing.T) map[string]func(*testscript.TestScript, bool, []string) {
	cmds := readScriptCmds()
	for _, more := range []map[string]func(*testscript.TestScript, bool, []string){editScriptCmds(), governanceScriptCmds(), permissionScriptCmds()} {
		for name, f := range more {
			if _, dup := cmds[name]; dup {
				t.Fatalf("script command %q is defined twice", name)
			}
			cmds[name] = f
		}
	}
	return cmds
}

func TestScripts(t *testing.T) {
	dirs, err := filepath.Glob(filepath.Join("testdata", "script", "*"))
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no script folders under testdata/script: %v", err)
	}
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			t.Parallel()
			testscript.Run(t, testscript.Params{
				Dir:                 dir,
				UpdateScripts:       *update,
				RequireExplicitExec: true,
				RequireUniqueNames:  true,
				Cmds:                scriptCmds(t),
				Setup: func(env *testscript.Env) error {
					// No user settings leak in from the machine running the
					// tests: HOME and XDG_CONFIG_HOME are the script's own.
					// Beside $WORK, not in it, so ls and find see only the
					// script's workspace.
					home := env.WorkDir + ".home"
					env.Setenv("HOME", home)
					env.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
					return os.MkdirAll(home, 0o755)
				},
			})
		})
	}
}
