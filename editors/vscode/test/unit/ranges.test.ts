import assert from "node:assert/strict";
import { test } from "node:test";
import { applyTextEdits, changedLines, changeRegions, reverseUnifiedDiff, type TextEdit } from "../../src/pure/ranges";
import { textHash } from "../../src/pure/hash";

const pos = (line: number, character: number) => ({ line, character });
const edit = (sl: number, sc: number, el: number, ec: number, newText: string): TextEdit => ({ range: { start: pos(sl, sc), end: pos(el, ec) }, newText });

test("changeRegions maps old ranges to whole new lines", async (t) => {
  const cases: Array<{ name: string; old: string; edits: TextEdit[]; lines: number[]; removed: string[]; removedLines?: string[][] }> = [
    { name: "one word on one line", old: "a\nbXc\nd\n", edits: [edit(1, 1, 1, 2, "YY")], lines: [1], removed: ["X"], removedLines: [["bXc"]] },
    { name: "insert two lines shifts later edits", old: "a\nb\nc\n", edits: [edit(1, 0, 1, 0, "n1\nn2\n"), edit(2, 0, 2, 1, "C")], lines: [1, 2, 4], removed: ["", "c"], removedLines: [[], ["c"]] },
    { name: "pure deletion highlights nothing", old: "a\nb\nc\n", edits: [edit(1, 0, 2, 0, "")], lines: [], removed: ["b\n"], removedLines: [["b"]] },
    { name: "multi-line replacement", old: "a\nb\nc\nd\n", edits: [edit(1, 0, 2, 1, "x\ny\nz")], lines: [1, 2, 3], removed: ["b\nc"], removedLines: [["b", "c"]] },
    { name: "CRLF text counts one break", old: "a\r\nb\r\nc\r\n", edits: [edit(1, 0, 1, 1, "B\r\nB2")], lines: [1, 2], removed: ["b"] },
    { name: "two edits on one old line", old: "abcdef\nz\n", edits: [edit(0, 1, 0, 2, "XX\nXX"), edit(0, 4, 0, 5, "Q")], lines: [0, 1], removed: ["b", "e"] },
    { name: "UTF-16 columns: astral chars count 2", old: "😀a😀b\n", edits: [edit(0, 5, 0, 6, "B")], lines: [0], removed: ["b"] },
    { name: "newText starting with a break marks the next line", old: "a\nb\n", edits: [edit(0, 1, 0, 1, "\nnew")], lines: [1], removed: [""] },
  ];
  for (const c of cases) {
    await t.test(c.name, () => {
      const regions = changeRegions(c.edits, c.old);
      assert.deepEqual(changedLines(c.edits), c.lines);
      assert.deepEqual(regions.map((r) => r.removed), c.removed);
      if (c.removedLines) assert.deepEqual(regions.map((r) => r.removedLines), c.removedLines);
      // The region's range must cover exactly the inserted text in the new document.
      const next = applyTextEdits(c.old, c.edits);
      const nextLines = next.split(/\r\n|\r|\n/);
      regions.forEach((r, i) => {
        const s = r.range.start, e = r.range.end;
        const got = s.line === e.line ? nextLines[s.line].slice(s.character, e.character) : [nextLines[s.line].slice(s.character), ...nextLines.slice(s.line + 1, e.line), nextLines[e.line].slice(0, e.character)].join("\n");
        assert.equal(got, c.edits[i].newText.replace(/\r\n/g, "\n"));
      });
    });
  }
});

test("applyTextEdits handles CRLF and unsorted edits", () => {
  assert.equal(applyTextEdits("a\r\nb\r\nc", [edit(2, 0, 2, 1, "C"), edit(0, 0, 0, 1, "A")]), "A\r\nb\r\nC");
  assert.throws(() => applyTextEdits("abc", [edit(0, 0, 0, 2, "x"), edit(0, 1, 0, 3, "y")]), /overlapping/);
});

test("reverseUnifiedDiff reconstructs the old text", async (t) => {
  const cases = [
    { name: "changed middle line", old: "a\nb\nc\n", neu: "a\nB\nc\n", diff: "--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n" },
    { name: "no newline at end, old", old: "a\nb", neu: "a\nb\nc\n", diff: "--- a/f\n+++ b/f\n@@ -1,2 +1,3 @@\n a\n-b\n\\ No newline at end of file\n+b\n+c\n" },
    { name: "created from empty", old: "", neu: "x\n", diff: "--- a/f\n+++ b/f\n@@ -0,0 +1 @@\n+x\n" },
    { name: "CRLF lines", old: "a\r\nb\r\n", neu: "a\r\nB\r\n", diff: "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\r\n-b\r\n+B\r\n" },
    { name: "empty diff", old: "same\n", neu: "same\n", diff: "" },
  ];
  for (const c of cases) await t.test(c.name, () => assert.equal(reverseUnifiedDiff(c.neu, c.diff), c.old));
  await t.test("diff that does not fit is refused", () => assert.equal(reverseUnifiedDiff("x\ny\n", "@@ -1,1 +1,1 @@\n-a\n+b\n"), undefined));
});

test("textHash is the server's sha256 notation (internal/textedit TestHash has the same vectors)", () => {
  assert.equal(textHash(""), "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  assert.equal(textHash("abc"), "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  // UTF-8, not UTF-16: "é" is two bytes.
  assert.equal(textHash("é"), "sha256:4a99557e4033c3539de2eb65472017cad5f9557f7a0625a09f1c3f6e2ba69c4c");
});
