// Package mcp serves a session's tools as an MCP server (Model Context
// Protocol, newline-delimited JSON over stdio) with the official Go SDK.
//
// It owns only the MCP mapping: the tool list (active registry tools with
// their schemas and annotations, re-synced when tool_search activates more),
// call forwarding to the session's Executor (so every call takes the same
// governed path as the editor protocol), progress and cancellation, the
// client's roots as workspace folders, and approval questions asked through
// MCP elicitation. It has no tool logic of its own.
package mcp
