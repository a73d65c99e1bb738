//go:build !linux

package proc

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
)

// Watchdog does nothing here: finding a dead agentls's descendants needs
// Linux's /proc.
type Watchdog struct{}

// NewWatchdog reports that there is no watchdog on this system.
func NewWatchdog(*slog.Logger) (*Watchdog, error) { return nil, errors.New("watchdog: only on Linux") }

// Arm does nothing.
func (wd *Watchdog) Arm() {}

// Close does nothing.
func (wd *Watchdog) Close() {}

// RunWatchdog refuses to run.
func RunWatchdog(args []string, in io.Reader) int {
	fmt.Fprintln(os.Stderr, "agentls: no watchdog on this system")
	return 2
}
