import assert from "node:assert/strict";
import { test } from "node:test";
import { APPROVAL_TTL_MS, Approvals, canonicalJSON, preparedView } from "../../src/pure/approvals";

test("preparedView: what VS Code shows and what the invocation does, per tools/prepare decision", async (t) => {
  await t.test("allow: no confirmation, the call runs as it is", () => {
    assert.deepEqual(preparedView("read", { decision: "allow" }), {});
  });
  await t.test("ask: agentls's title and Markdown message, and the token for the invocation", () => {
    const message = "**main.go**\n\n```diff\n-old\n+new\n```";
    const v = preparedView("edit", { decision: "ask", title: "Edit main.go", message, reason: "mode:default asks", token: "tok1" });
    assert.deepEqual(v.confirmation, { title: "Edit main.go", message });
    assert.deepEqual(v.verdict, { kind: "approved", token: "tok1" });
  });
  await t.test("ask without a message: the reason is the message", () => {
    assert.equal(preparedView("bash", { decision: "ask", reason: "rm -r is destructive", token: "t" }).confirmation?.message, "rm -r is destructive");
  });
  await t.test("ask without a token: nothing shown, agentls asks itself (no double question)", () => {
    assert.deepEqual(preparedView("edit", { decision: "ask", title: "Edit a", message: "m" }), {});
  });
  await t.test("deny: no confirmation; the model gets the reason, nothing runs", () => {
    const v = preparedView("edit", { decision: "deny", reason: "denied by the rule Edit(main.go) (.agentls/settings.json)." });
    assert.equal(v.confirmation, undefined);
    assert.deepEqual(v.verdict, { kind: "refused", text: "denied by the rule Edit(main.go) (.agentls/settings.json)." });
  });
  await t.test("fail: no question; the model gets the failure text", () => {
    const v = preparedView("edit", { decision: "fail", error: "a.txt has not been read in this session; read it first." });
    assert.equal(v.confirmation, undefined);
    assert.deepEqual(v.verdict, { kind: "refused", text: "a.txt has not been read in this session; read it first." });
  });
  await t.test("no answer (older agentls) or an unknown decision: the call goes as before", () => {
    assert.deepEqual(preparedView("edit", undefined), {});
    assert.deepEqual(preparedView("edit", { decision: "maybe" } as never), {});
  });
  await t.test("deny and fail without a text still tell the model nothing ran", () => {
    assert.match((preparedView("bash", { decision: "deny" }).verdict as { text: string }).text, /refused/);
    assert.match((preparedView("bash", { decision: "fail" }).verdict as { text: string }).text, /nothing was run/);
  });
});

test("canonicalJSON: key order does not matter, values do", () => {
  assert.equal(canonicalJSON({ b: 1, a: { d: [1, { y: 2, x: 1 }], c: "s" } }), canonicalJSON({ a: { c: "s", d: [1, { x: 1, y: 2 }] }, b: 1 }));
  assert.notEqual(canonicalJSON({ a: 1 }), canonicalJSON({ a: "1" }));
  assert.equal(canonicalJSON({ a: undefined, b: null }), '{"b":null}');
});

test("Approvals: an approval reaches the invocation of the same tool and input, once", async (t) => {
  let now = 1_000;
  const a = new Approvals(() => now);
  await t.test("taken once", () => {
    a.put("edit", { path: "a", edits: [{ oldText: "x", newText: "y" }] }, { kind: "approved", token: "t1" });
    assert.deepEqual(a.take("edit", { edits: [{ newText: "y", oldText: "x" }], path: "a" }), { kind: "approved", token: "t1" });
    assert.equal(a.take("edit", { path: "a", edits: [{ oldText: "x", newText: "y" }] }), undefined);
  });
  await t.test("other input or another tool gets nothing", () => {
    a.put("edit", { path: "a" }, { kind: "approved", token: "t2" });
    assert.equal(a.take("edit", { path: "b" }), undefined);
    assert.equal(a.take("write", { path: "a" }), undefined);
    assert.deepEqual(a.take("edit", { path: "a" }), { kind: "approved", token: "t2" });
  });
  await t.test("two identical calls prepared in a row get one each, first in first out", () => {
    a.put("bash", { command: "make" }, { kind: "approved", token: "first" });
    a.put("bash", { command: "make" }, { kind: "refused", text: "second" });
    assert.deepEqual(a.take("bash", { command: "make" }), { kind: "approved", token: "first" });
    assert.deepEqual(a.take("bash", { command: "make" }), { kind: "refused", text: "second" });
    assert.equal(a.size, 0);
  });
  await t.test(`an approval older than ${APPROVAL_TTL_MS} ms (its confirmation was cancelled) is dropped`, () => {
    a.put("edit", { path: "old" }, { kind: "approved", token: "stale" });
    now += APPROVAL_TTL_MS;
    assert.equal(a.take("edit", { path: "old" }), undefined);
    assert.equal(a.size, 0);
  });
});
