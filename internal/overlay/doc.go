// Package overlay holds the documents an editor has open (LSP text document
// sync: didOpen, didChange, didClose). While a document is open its text,
// unsaved edits included, is what read shows and what edits apply to. The
// package only keeps and updates texts; it does no I/O.
package overlay
