//go:build !agentlstest

package main

import "github.com/agentls/agentls/internal/tools"

// testTools is nil in the shipped binary: the test-only tools are compiled
// in only with -tags agentlstest (testtools_agentlstest.go).
func testTools() []*tools.Tool { return nil }
