import assert from "node:assert/strict";
import { test } from "node:test";
import { confirmView, TITLE_COMMAND_CHARS, withAllowRule, workspaceAllowRule } from "../../src/pure/confirm";

test("confirmView: the question names what would run and offers a diff only for a change", async (t) => {
  const edit = { kind: "edit", uri: "file:///w/a.txt", edits: [{ range: { start: { line: 0, character: 0 }, end: { line: 0, character: 1 } }, newText: "x" }] };
  const cases = [
    { name: "an edit can be shown", in: { tool: "edit", reason: "mode:default asks", preview: edit }, title: "agentls: allow edit?", show: true },
    { name: "a new file can be shown", in: { tool: "write", reason: "r", preview: { ...edit, kind: "create" } }, title: "agentls: allow write?", show: true },
    { name: "a command names its line and has no diff", in: { tool: "bash", reason: "r", preview: { kind: "command", command: "npm test", readOnly: false } }, title: "agentls: allow bash `npm test`?", show: false },
    { name: "a multi-line command is one line", in: { tool: "bash", reason: "r", preview: { kind: "command", command: "cd x\n  && make\n" } }, title: "agentls: allow bash `cd x ⏎ && make`?", show: false },
    { name: "no preview", in: { tool: "mcp__fs__write", reason: "r" }, title: "agentls: allow mcp__fs__write?", show: false },
    { name: "a change without edits", in: { tool: "edit", reason: "r", preview: { kind: "edit", uri: "file:///w/a", edits: [] } }, title: "agentls: allow edit?", show: false },
  ];
  for (const c of cases) {
    await t.test(c.name, () => {
      const v = confirmView(c.in);
      assert.equal(v.title, c.title);
      assert.equal(v.placeholder, `${c.in.tool}: ${c.in.reason}`);
      assert.equal(v.canShowChange, c.show);
    });
  }
  await t.test(`a long command shows its first ${TITLE_COMMAND_CHARS} characters`, () => {
    const v = confirmView({ tool: "bash", reason: "r", preview: { kind: "command", command: "é".repeat(TITLE_COMMAND_CHARS + 50) } });
    assert.equal(v.title, `agentls: allow bash \`${"é".repeat(TITLE_COMMAND_CHARS)}…\`?`);
  });
});

test("workspaceAllowRule: the narrowest rule that allows this very call, or none", async (t) => {
  const cases: Array<[string, Parameters<typeof workspaceAllowRule>[0], string | undefined]> = [
    ["a command line, exactly", { tool: "bash", arguments: { command: "npm test" }, preview: { kind: "command", command: " npm test " } }, "Bash(npm test)"],
    ["a command from the arguments when there is no preview", { tool: "bash", arguments: { command: "make lint" } }, "Bash(make lint)"],
    ["a file edit", { tool: "edit", arguments: { path: "./x" }, preview: { kind: "edit", path: "src/a.ts" } }, "Edit(src/a.ts)"],
    ["a write is an Edit rule", { tool: "write", arguments: { path: "new.txt" } }, "Edit(new.txt)"],
    ["a multi-line command: none", { tool: "bash", arguments: { command: "a\nb" } }, undefined],
    ["a command with * would be a pattern: none", { tool: "bash", arguments: { command: "rm *.o" } }, undefined],
    ["a command with parentheses: none", { tool: "bash", arguments: { command: "(cd x && make)" } }, undefined],
    ["a path with glob characters: none", { tool: "edit", arguments: { path: "src/[id].ts" } }, undefined],
    ["another tool: none", { tool: "mcp__fs__write", arguments: { path: "a" } }, undefined],
    ["no command: none", { tool: "bash", arguments: {} }, undefined],
  ];
  for (const [name, input, want] of cases) await t.test(name, () => assert.equal(workspaceAllowRule(input), want));
});

test("withAllowRule adds the rule once and keeps the other lists", () => {
  assert.deepEqual(withAllowRule(undefined, "Edit(a)"), { allow: ["Edit(a)"] });
  assert.deepEqual(withAllowRule({ allow: ["Read"], deny: ["Edit(.env)"] }, "Edit(a)"), { allow: ["Read", "Edit(a)"], deny: ["Edit(.env)"] });
  assert.deepEqual(withAllowRule({ allow: ["Edit(a)"] }, "Edit(a)"), { allow: ["Edit(a)"] });
  assert.deepEqual(withAllowRule([], "Bash(ls)"), { allow: ["Bash(ls)"] });
});
