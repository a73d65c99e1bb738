package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentls/agentls/internal/sandbox/launcher"
)

// installed lays out an agentls install in a new directory: agentls (this
// test binary, which acts as the launcher too) and, when small is not
// "", agentls-sandbox as that shell script (@SELF@: this test binary;
// @LOG@: a file it may append to). It returns the agentls path and the log.
func installed(t *testing.T, small string) (string, string) {
	t.Helper()
	self, err := os.Executable()
	must(t, err)
	dir := t.TempDir()
	log := filepath.Join(dir, "launches.log")
	exe := filepath.Join(dir, "agentls")
	must(t, os.Symlink(self, exe))
	if small != "" {
		small = strings.NewReplacer("@SELF@", self, "@LOG@", log).Replace(small)
		must(t, os.WriteFile(exe+LauncherSuffix, []byte(small), 0o755))
	}
	return exe, log
}

// sandboxFor is the fixture's sandbox with its launcher looked up from exe.
func sandboxFor(t *testing.T, f *fixture, exe string) *Sandbox {
	t.Helper()
	o := f.sb.opts
	o.Exe, o.TempDir = exe, t.TempDir()
	sb, err := New(Settings{Enabled: true}, o)
	must(t, err)
	t.Cleanup(func() { sb.Close() })
	return sb
}

// assertConfined runs a command through sb that must run and must not
// write outside the workspace.
func assertConfined(t *testing.T, f *fixture, sb *Sandbox) {
	t.Helper()
	f.sb = sb
	res, _ := f.run(t, `echo inside > "$WS/made"; echo escaped > "$OUT/made"; echo done`)
	if !strings.Contains(res.Output, "done") || content(filepath.Join(f.ws, "made")) != "inside\n" {
		t.Fatalf("the command did not run: %+v", res)
	}
	if exists(filepath.Join(f.out, "made")) {
		t.Fatalf("the command wrote outside the workspace: %q", res.Output)
	}
}

// TestSmallLauncherNextToAgentlsLaunchesTheCommands: agentls-sandbox
// installed beside agentls is what starts every sandboxed command, and
// they are confined as ever.
func TestSmallLauncherNextToAgentlsLaunchesTheCommands(t *testing.T) {
	f := newFixture(t, Settings{})
	requireActive(t, f)
	exe, log := installed(t, "#!/bin/sh\necho launched >> '@LOG@'\nexec '@SELF@' \"$@\"\n")
	sb := sandboxFor(t, f, exe)
	if st := sb.Status(); !st.Active {
		t.Fatalf("not active with a working small launcher: %+v", st)
	}
	before := strings.Count(content(log), "launched") // the probe's trial
	assertConfined(t, f, sb)
	if after := strings.Count(content(log), "launched"); before == 0 || after != before+1 {
		t.Fatalf("agentls-sandbox launched %d commands before and %d after one command, want ≥1 and one more", before, after)
	}
}

// TestBrokenSmallLauncherIsPassedOver: an agentls-sandbox that cannot run
// the trial (of another build, say) leaves agentls launching the
// commands itself, still confined; when agentls cannot either, the
// sandbox is off and says why.
func TestBrokenSmallLauncherIsPassedOver(t *testing.T) {
	f := newFixture(t, Settings{})
	requireActive(t, f)
	exe, _ := installed(t, "#!/bin/sh\necho 'agentls sandbox: stale launcher; the command did not run' >&2\nexit 126\n")
	sb := sandboxFor(t, f, exe)
	if st := sb.Status(); !st.Active {
		t.Fatalf("a broken small launcher turned the sandbox off: %+v", st)
	}
	assertConfined(t, f, sb)

	dir := t.TempDir()
	bad := filepath.Join(dir, "agentls")
	must(t, os.WriteFile(bad, []byte("#!/bin/sh\necho 'no launcher here' >&2\nexit 1\n"), 0o755))
	must(t, os.WriteFile(bad+LauncherSuffix, []byte("#!/bin/sh\nexit 126\n"), 0o755))
	st := sandboxFor(t, f, bad).Status()
	if st.Active || !strings.Contains(st.Reason, "no launcher here") {
		t.Fatalf("with no working launcher the status is %+v, want inactive naming agentls's own failure", st)
	}
}

// TestLauncherRefusesAPolicyOfAnotherBuild: the launcher does not run the
// command under a policy it cannot read as written.
func TestLauncherRefusesAPolicyOfAnotherBuild(t *testing.T) {
	self, err := os.Executable()
	must(t, err)
	dir := t.TempDir()
	marker := filepath.Join(dir, "ran")
	pol := `{"format":1,"write":[],"dir":"` + dir + `","denyNetwork":true}`
	cmd := exec.Command(self, launcher.Command, pol, "/bin/sh", "-c", "touch "+marker)
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 126 {
		t.Fatalf("exit %v, want 126; output %s", err, out)
	}
	if !strings.Contains(string(out), "the command did not run") || !strings.Contains(string(out), "denyNetwork") {
		t.Fatalf("the refusal does not say why: %s", out)
	}
	if exists(marker) {
		t.Fatal("the command ran under a policy the launcher refused")
	}
}
