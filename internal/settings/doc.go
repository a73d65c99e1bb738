// Package settings owns where agentls's configuration comes from and what
// its documents look like: the user configuration directory (one
// definition for settings.json, mcp.json and extension tools), each
// folder's .agentls files and their precedence, reading a settings file
// (JSON errors with their line and column, rule lists under a wrong name
// refused), the editor's initializationOptions, and "a settings file
// changed": the fingerprints the permission step compares before every
// call and the watcher of the user's directory. What rules mean is
// internal/policy's; what limits mean is internal/tools's.
package settings
