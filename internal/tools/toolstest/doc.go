// Package toolstest holds the tools that exist only for tests (test_block,
// test_panic, test_gc). The shipped binary does not contain them: cmd/agentls
// registers them only when built with -tags agentlstest and run with
// AGENTLS_TEST_TOOLS=1; unit tests pass them to session.Options.TestTools.
package toolstest
