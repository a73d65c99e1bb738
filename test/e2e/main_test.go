package e2e

import (
	"flag"
	"os"
	"runtime"
	"strconv"
	"testing"

	"github.com/agentls/agentls/internal/sandbox/launcher"
)

// defaultParallel is how many parallel tests run at once when -parallel is
// not given: the tests wait on processes (kill graces, timeouts, watchers
// settling) more than they use the CPU, so on 2 cores Go's default of
// GOMAXPROCS leaves the machine half idle. It is what scripts/test-all.sh
// passes; more stretched the latency bounds of the tests beside them on a
// loaded 2-core machine (ARCHITECTURE.md, "Testing").
const defaultParallel = 4

func TestMain(m *testing.M) {
	// A server in the test process runs sandboxed commands through this
	// binary, as agentls runs them through itself.
	if len(os.Args) > 1 && os.Args[1] == launcher.Command {
		os.Exit(launcher.Run(os.Args[2:]))
	}
	flag.Parse()
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given && runtime.GOMAXPROCS(0) < defaultParallel {
		flag.Set("test.parallel", strconv.Itoa(defaultParallel))
	}
	os.Exit(m.Run())
}
