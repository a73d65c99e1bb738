package toolstest

import (
	"context"
	"runtime/debug"
	"time"

	"github.com/agentls/agentls/internal/tools"
)

type blockInput struct {
	Seconds float64 `json:"seconds,omitzero" jsonschema:"give up after this many seconds (default 60)"`
	Marker  string  `json:"marker,omitzero" jsonschema:"a workspace file to create when the call is cancelled"`
	// WindDown is how long the call takes, once cancelled, before it
	// creates the marker and returns: a slow clean-up.
	WindDown float64 `json:"windDown,omitzero" jsonschema:"seconds to spend winding down once cancelled"`
}

type panicInput struct{}

type gcInput struct{}

// Tools are the test-only tools: test_block blocks until cancelled (for
// cancellation tests), test_panic panics (for the executor's recovery),
// test_gc collects garbage and returns the freed memory to the system (so
// a leak test's RSS reading shows what is live, not when the GC last ran).
func Tools() []*tools.Tool {
	return []*tools.Tool{
		tools.Define(tools.Spec[blockInput]{
			Name:        "test_block",
			Description: "Test only: blocks until the call is cancelled.",
			Static:      tools.Labels{ReadOnly: true, ConcurrencySafe: true},
			Run: func(ctx context.Context, c *tools.Call, in blockInput) (tools.Result, error) {
				d := 60 * time.Second
				if in.Seconds > 0 {
					d = time.Duration(in.Seconds * float64(time.Second))
				}
				c.Reporter.Progress(tools.Progress{Message: "blocking"})
				select {
				case <-ctx.Done():
					time.Sleep(time.Duration(in.WindDown * float64(time.Second)))
					if in.Marker != "" {
						if p, err := c.Env.FS.Resolve(in.Marker); err == nil {
							c.Env.FS.CreateFile(p, []byte("cancelled\n"), 0o644, nil)
						}
					}
					return tools.Errorf("cancelled"), nil
				case <-time.After(d):
					return tools.Text("unblocked"), nil
				}
			},
		}),
		tools.Define(tools.Spec[panicInput]{
			Name:        "test_panic",
			Description: "Test only: panics.",
			Static:      tools.Labels{ReadOnly: true, ConcurrencySafe: true},
			Run: func(ctx context.Context, c *tools.Call, in panicInput) (tools.Result, error) {
				panic("test panic")
			},
		}),
		tools.Define(tools.Spec[gcInput]{
			Name:        "test_gc",
			Description: "Test only: collects garbage and returns freed memory to the system.",
			Static:      tools.Labels{ReadOnly: true, ConcurrencySafe: true},
			Run: func(ctx context.Context, c *tools.Call, in gcInput) (tools.Result, error) {
				debug.FreeOSMemory()
				return tools.Text("collected"), nil
			},
		}),
	}
}
