// Pure text geometry for inline diffs: LSP TextEdits (ranges in the OLD
// text, UTF-16 columns) mapped into the NEW text, applied, and inverted.
// No vscode import: unit-tested under plain node.

export interface Position { line: number; character: number }
export interface Range { start: Position; end: Position }
export interface TextEdit { range: Range; newText: string }

/** A changed region of the new text, as editor decorations need it. */
export interface ChangeRegion {
  /** Range of the inserted text in the NEW document (empty for a pure deletion). */
  range: Range;
  /** First and last whole line (0-based, inclusive) to highlight as inserted/changed; -1/-1 when nothing was inserted. */
  firstLine: number;
  lastLine: number;
  /** The text the edit removed (from the old document), "" when unknown or nothing. */
  removed: string;
  /** The whole old lines the edit touched (what a diff shows as "-" lines); [] for a pure insertion or without oldText. */
  removedLines: string[];
  /** The edit's range in the OLD document. */
  oldRange: Range;
}

const LINE_BREAK = /\r\n|\r|\n/;

/** Splits text into lines the way LSP and VS Code count them ("\r\n", "\n", lone "\r"). */
export function splitLines(text: string): string[] {
  return text.split(LINE_BREAK);
}

/** The position reached after writing `text` starting at `start` (UTF-16 columns). */
export function endOf(start: Position, text: string): Position {
  const lines = splitLines(text);
  if (lines.length === 1) return { line: start.line, character: start.character + lines[0].length };
  return { line: start.line + lines.length - 1, character: lines[lines.length - 1].length };
}

function cmp(a: Position, b: Position): number {
  return a.line - b.line || a.character - b.character;
}

/** Offset of an LSP position in text; lines break at "\r\n", "\n" or "\r". */
export function offsetAt(text: string, pos: Position): number {
  let line = 0;
  let i = 0;
  while (line < pos.line && i < text.length) {
    const c = text.charCodeAt(i++);
    if (c === 13) { if (text.charCodeAt(i) === 10) i++; line++; }
    else if (c === 10) line++;
  }
  if (line < pos.line) return text.length;
  let end = i;
  while (end < text.length && text[end] !== "\n" && text[end] !== "\r") end++;
  return Math.min(i + pos.character, end);
}

/** Applies non-overlapping TextEdits (ranges in `text`) and returns the result. */
export function applyTextEdits(text: string, edits: readonly TextEdit[]): string {
  const sorted = [...edits].sort((a, b) => cmp(a.range.start, b.range.start));
  let out = "";
  let last = 0;
  for (const e of sorted) {
    const s = offsetAt(text, e.range.start);
    const t = offsetAt(text, e.range.end);
    if (s < last) throw new Error("overlapping edits");
    out += text.slice(last, s) + e.newText;
    last = t;
  }
  return out + text.slice(last);
}

/**
 * Maps edits (ranges in the old text) to regions of the new text. `oldText`
 * is optional: with it each region carries the removed text.
 */
export function changeRegions(edits: readonly TextEdit[], oldText?: string): ChangeRegion[] {
  const sorted = [...edits].sort((a, b) => cmp(a.range.start, b.range.start));
  const out: ChangeRegion[] = [];
  // Shift of positions on the current old line (columns) and of lines.
  let lineDelta = 0;
  let colLine = -1; // old line whose columns are shifted by colDelta
  let colDelta = 0;
  for (const e of sorted) {
    const os = e.range.start;
    const oe = e.range.end;
    const startChar = os.line === colLine ? os.character + colDelta : os.character;
    const ns: Position = { line: os.line + lineDelta, character: startChar };
    const ne = endOf(ns, e.newText);
    const removed = oldText === undefined ? "" : oldText.slice(offsetAt(oldText, os), offsetAt(oldText, oe));
    let firstLine = ns.line;
    let lastLine = ne.line;
    if (e.newText === "") {
      firstLine = -1; lastLine = -1;
    } else {
      // Text that starts with a line break belongs to the following line;
      // text that ends with one does not reach the line after it.
      if (/^(\r\n|\r|\n)/.test(e.newText) && ne.line > ns.line) firstLine = ns.line + 1;
      if (/(\r\n|\r|\n)$/.test(e.newText) && ne.line > firstLine) lastLine = ne.line - 1;
    }
    let removedLines: string[] = [];
    if (oldText !== undefined && removed !== "") {
      const oldLines = splitLines(oldText);
      const last = oe.character === 0 && oe.line > os.line ? oe.line - 1 : oe.line;
      removedLines = oldLines.slice(os.line, last + 1);
    }
    out.push({ range: { start: ns, end: ne }, firstLine, lastLine, removed, removedLines, oldRange: e.range });
    // Everything after oe in the old text moves: lines by the line delta,
    // columns on oe's line so they follow ne.
    lineDelta += (ne.line - ns.line) - (oe.line - os.line);
    colLine = oe.line;
    colDelta = ne.character - oe.character;
  }
  return out;
}

/** The set of whole lines (0-based) of the new text marked as inserted/changed. */
export function changedLines(edits: readonly TextEdit[]): number[] {
  const set = new Set<number>();
  for (const r of changeRegions(edits)) {
    for (let l = r.firstLine; l >= 0 && l <= r.lastLine; l++) set.add(l);
  }
  return [...set].sort((a, b) => a - b);
}

/**
 * Inverts the text edits given the new text and the old text's pieces:
 * reconstructs the old text from the new one and a unified diff (the
 * tools/details `unifiedDiff`). Returns undefined when the diff does not
 * fit the new text.
 */
export function reverseUnifiedDiff(newText: string, diff: string): string | undefined {
  if (diff.trim() === "") return newText;
  const newLines = splitKeep(newText);
  const lines = diff.split("\n");
  if (lines.length > 0 && lines[lines.length - 1] === "") lines.pop();
  const out: string[] = [];
  let cursor = 0; // index into newLines
  let i = 0;
  while (i < lines.length && !lines[i].startsWith("@@")) i++;
  while (i < lines.length) {
    const m = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/.exec(lines[i]);
    if (!m) return undefined;
    const newStart = Number(m[3]) - (m[4] === "0" ? 0 : 1);
    if (newStart < cursor) return undefined;
    out.push(...newLines.slice(cursor, newStart));
    cursor = newStart;
    i++;
    let prevKind = "";
    while (i < lines.length && !lines[i].startsWith("@@")) {
      const l = lines[i++];
      if (l.startsWith("\\")) {
        // "\ No newline at end of file": the previous line had no "\n".
        if (prevKind === "-" || prevKind === " ") {
          const last = out.length - 1;
          if (last >= 0) out[last] = out[last].replace(/\n$/, "");
        }
        continue;
      }
      const kind = l[0] ?? " ";
      const body = l.slice(1) + "\n";
      if (kind === " ") {
        const have = newLines[cursor];
        if (have === undefined || have.replace(/\n$/, "") !== body.replace(/\n$/, "")) return undefined;
        out.push(have.endsWith("\n") ? have : have + "\n");
        cursor++;
      } else if (kind === "-") {
        out.push(body);
      } else if (kind === "+") {
        const have = newLines[cursor];
        if (have === undefined || have.replace(/\n$/, "") !== body.replace(/\n$/, "")) return undefined;
        cursor++;
      } else {
        return undefined;
      }
      prevKind = kind;
    }
  }
  out.push(...newLines.slice(cursor));
  return out.join("");
}

/** Splits after each "\n", keeping it ("a\nb" → ["a\n", "b"]). */
function splitKeep(text: string): string[] {
  const out: string[] = [];
  let s = 0;
  for (let i = 0; i < text.length; i++) {
    if (text.charCodeAt(i) === 10) { out.push(text.slice(s, i + 1)); s = i + 1; }
  }
  if (s < text.length) out.push(text.slice(s));
  return out;
}
