//go:build agentlstest

package main

import (
	"os"

	"github.com/agentls/agentls/internal/tools"
	"github.com/agentls/agentls/internal/tools/toolstest"
)

// testTools are the test-only tools when AGENTLS_TEST_TOOLS=1, in a binary
// built with -tags agentlstest (as the test harness and scripts/test-all.sh
// build it).
func testTools() []*tools.Tool {
	if os.Getenv("AGENTLS_TEST_TOOLS") == "1" {
		return toolstest.Tools()
	}
	return nil
}
