// Package e2e holds end-to-end tests: the real agentls binary over stdio,
// driven by test/harness. They read as the protocol's spec.
package e2e
