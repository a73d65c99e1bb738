// Package rpc connects the executor to JSON-RPC over stdio with LSP framing:
// transport (codec, EOF-aware stream), lifecycle (initialize … exit), method
// dispatch, and the server→client notifications of a call.
//
// Every call runs asynchronously (released with jsonrpc2.Async under
// jsonrpc2.CancelHandler; notifications run inline, in wire order): a slow
// tool never blocks the read loop, and $/cancelRequest reaches the call it
// names, whatever integer or string id JSON-RPC allows. Tool work runs on contexts
// derived from the server's base context, never from the pooled request
// context, so it may outlive the handler's early -32800 reply safely.
// Invariant: nothing but protocol frames is written to stdout.
package rpc
