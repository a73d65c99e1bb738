import assert from "node:assert/strict";
import { test } from "node:test";
import { editTargets, type LspWorkspaceEdit, staleReason, toSave } from "../../src/pure/workspaceEdit";

const A = "file:///ws/a.txt";
const B = "file:///ws/b.txt";
const edits = [{ range: { start: { line: 0, character: 0 }, end: { line: 0, character: 1 } }, newText: "x" }];

test("editTargets: documentChanges win over changes", async (t) => {
  const cases: Array<{ name: string; in: LspWorkspaceEdit | undefined; out: ReturnType<typeof editTargets> }> = [
    { name: "agentls's edit (both forms)", in: { documentChanges: [{ textDocument: { uri: A, version: 7 }, edits }], changes: { [A]: edits } }, out: [{ uri: A, version: 7 }] },
    { name: "changes only", in: { changes: { [A]: edits, [B]: edits } }, out: [{ uri: A, version: undefined }, { uri: B, version: undefined }] },
    { name: "null version is any version", in: { documentChanges: [{ textDocument: { uri: A, version: null }, edits }] }, out: [{ uri: A, version: undefined }] },
    { name: "file operations are skipped", in: { documentChanges: [{ kind: "create" }, { textDocument: { uri: B, version: 1 }, edits }] }, out: [{ uri: B, version: 1 }] },
    { name: "no edit", in: undefined, out: [] },
  ];
  for (const c of cases) await t.test(c.name, () => assert.deepEqual(editTargets(c.in), c.out));
});

test("staleReason: an open document at another version refuses the edit", async (t) => {
  const open = new Map([[A, 7]]);
  const cases = [
    { name: "same version", targets: [{ uri: A, version: 7 }], stale: false },
    { name: "the user typed since", targets: [{ uri: A, version: 6 }], stale: true },
    { name: "unversioned", targets: [{ uri: A, version: undefined }], stale: false },
    { name: "not open", targets: [{ uri: B, version: 3 }], stale: false },
  ];
  for (const c of cases) {
    await t.test(c.name, () => {
      const r = staleReason(c.targets, (u) => open.get(u));
      assert.equal(r !== undefined, c.stale, r);
      if (r) assert.match(r, /version 7.*version 6/);
    });
  }
});

test("toSave: only documents without unsaved changes before the edit", async (t) => {
  const dirty = new Set([B]);
  const cases = [
    { name: "clean is saved", targets: [{ uri: A, version: 1 }], out: [A] },
    { name: "dirty stays unsaved", targets: [{ uri: B, version: 1 }], out: [] },
    { name: "mixed, deduplicated", targets: [{ uri: A, version: 1 }, { uri: B, version: 2 }, { uri: A, version: 1 }], out: [A] },
  ];
  for (const c of cases) await t.test(c.name, () => assert.deepEqual(toSave(c.targets, (u) => dirty.has(u)), c.out));
});
