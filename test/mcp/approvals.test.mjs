// Approvals in `agentls mcp` (docs/tools.md "Permissions in MCP hosts"):
// the host confirms each call itself, so a call that only agentls's
// default mode would ask about runs; the user's ask rules and destructive
// commands are asked through elicitation with the change or the command in
// the question; deny rules hold without a question. When nobody can be
// asked, the model is told so truthfully, with the setting that would
// allow this very call.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir, text, connect } from './helpers.mjs';

const clients = [];
after(async () => {
  for (const c of clients) await c.close();
});

function workspace(files) {
  const ws = tempDir('agentls-approvals-');
  for (const [name, content] of Object.entries(files)) {
    mkdirSync(join(ws, name, '..'), { recursive: true });
    writeFileSync(join(ws, name), content);
  }
  return ws;
}

async function start(ws, opts = {}) {
  const c = await connect({ args: ['--root', ws, ...(opts.args ?? [])], answer: opts.answer });
  clients.push(c);
  return c;
}

const MAIN = 'package main\n\nfunc main() {}\n';
const ASK_EDIT = JSON.stringify({ permissions: { ask: ['Edit(main.go)'] } });
const editMain = { name: 'edit', arguments: { path: 'main.go', edits: [{ oldText: 'func main() {}', newText: 'func main() { run() }' }] } };

async function readThenEdit(c) {
  const r = await c.callTool({ name: 'read', arguments: { path: 'main.go' } });
  assert.ok(!r.isError, text(r));
  return c.callTool(editMain);
}

test('without elicitation: a default-mode edit runs, the host approved it', async () => {
  const ws = workspace({ 'main.go': MAIN });
  const c = await start(ws);
  const r = await readThenEdit(c);
  assert.ok(!r.isError, text(r));
  assert.match(readFileSync(join(ws, 'main.go'), 'utf8'), /run\(\)/);
});

test('without elicitation: the user\'s ask rule refuses, saying the host could not ask and how to allow it', async () => {
  const ws = workspace({ 'main.go': MAIN, '.agentls/settings.json': ASK_EDIT });
  const c = await start(ws);
  const r = await readThenEdit(c);
  assert.equal(r.isError, true, text(r));
  assert.match(text(r), /the MCP host could not ask the user/);
  assert.match(text(r), /Edit\(main\.go\) \(\.agentls\/settings\.json\)/, 'names the rule that asked');
  assert.match(text(r), /remove it/);
  assert.doesNotMatch(text(r), /denied by the user/, 'nobody was asked');
  assert.equal(readFileSync(join(ws, 'main.go'), 'utf8'), MAIN);
  assert.equal(r._meta?.details, undefined, 'no internal details in an error result');
});

test('without elicitation: a chosen mode\'s ask gives the settings snippet that allows this very call', async () => {
  const ws = workspace({});
  const c = await start(ws, { args: ['--mode', 'acceptEdits'] });
  const r = await c.callTool({ name: 'bash', arguments: { command: 'touch made' } });
  assert.equal(r.isError, true, text(r));
  assert.ok(text(r).includes('.agentls/settings.local.json in the workspace: {"permissions":{"allow":["Bash(touch made)"]}}'), text(r));
  assert.match(text(r), /--mode default/);
  assert.ok(!existsSync(join(ws, 'made')));
});

test('a deny rule refuses without a question', async () => {
  const ws = workspace({ 'main.go': MAIN, '.agentls/settings.json': JSON.stringify({ permissions: { deny: ['Edit(main.go)'] } }) });
  const c = await start(ws, { answer: () => ({ action: 'accept', content: { decision: 'allowOnce' } }) });
  const r = await readThenEdit(c);
  assert.equal(r.isError, true, text(r));
  assert.match(text(r), /denied by the rule Edit\(main\.go\)/);
  assert.equal(c.asked.length, 0);
  assert.equal(readFileSync(join(ws, 'main.go'), 'utf8'), MAIN);
});

test('a destructive command asks even in default mode, showing the command', async () => {
  const ws = workspace({ 'keep/x.txt': 'x\n' });
  const c = await start(ws, { answer: () => ({ action: 'accept', content: { decision: 'rejectOnce' } }) });
  const r = await c.callTool({ name: 'bash', arguments: { command: 'rm -rf keep' } });
  assert.equal(r.isError, true, text(r));
  assert.equal(c.asked.length, 1);
  assert.match(c.asked[0].message, /rm -rf keep/);
  assert.match(c.asked[0].message, /Not read-only: rm deletes files/);
  assert.ok(existsSync(join(ws, 'keep/x.txt')));
});

test('the question is one required choice with human titles, and shows the diff', async () => {
  const ws = workspace({ 'main.go': MAIN, '.agentls/settings.json': ASK_EDIT });
  const c = await start(ws, { answer: () => ({ action: 'accept', content: { decision: 'allowOnce' } }) });
  const r = await readThenEdit(c);
  assert.ok(!r.isError, text(r));
  assert.equal(c.asked.length, 1);
  const q = c.asked[0];
  assert.match(q.message, /Edit main\.go/);
  assert.match(q.message, /```diff/);
  assert.match(q.message, /\+func main\(\) \{ run\(\) \}/);
  assert.deepEqual(Object.keys(q.requestedSchema.properties), ['decision'], 'nothing optional in the form');
  assert.deepEqual(q.requestedSchema.required, ['decision']);
  const choices = q.requestedSchema.properties.decision.oneOf;
  assert.deepEqual(choices.map((o) => o.const), ['allowOnce', 'allowAlways', 'rejectOnce', 'rejectAlways']);
  for (const o of choices) assert.ok(o.title && o.title !== o.const && /\s/.test(o.title), `human title: ${JSON.stringify(o)}`);
  assert.match(readFileSync(join(ws, 'main.go'), 'utf8'), /run\(\)/);
});

for (const tc of [
  { name: 'accept allowOnce runs', answer: { action: 'accept', content: { decision: 'allowOnce' } }, runs: true },
  { name: 'accept rejectOnce is the user\'s refusal', answer: { action: 'accept', content: { decision: 'rejectOnce' } }, runs: false, want: /^denied by the user/ },
  { name: 'decline says the host declined, and how to allow it', answer: { action: 'decline' }, runs: false, want: /the MCP host declined the question.*Edit\(main\.go\)/s },
  { name: 'cancel says the host could not ask, and how to allow it', answer: { action: 'cancel' }, runs: false, want: /the MCP host could not ask the user: it cancelled the question.*Edit\(main\.go\)/s },
]) {
  test(`elicitation: ${tc.name}`, async () => {
    const ws = workspace({ 'main.go': MAIN, '.agentls/settings.json': ASK_EDIT });
    const c = await start(ws, { answer: () => tc.answer });
    const r = await readThenEdit(c);
    assert.equal(c.asked.length, 1, 'asked once');
    assert.equal(Boolean(r.isError), !tc.runs, text(r));
    if (tc.want) assert.match(text(r), tc.want);
    if (tc.answer.action !== 'accept') assert.doesNotMatch(text(r), /^denied by the user/, 'the host, not the user, is named');
    assert.equal(/run\(\)/.test(readFileSync(join(ws, 'main.go'), 'utf8')), tc.runs);
  });
}

test('an edit that cannot match is refused without a question', async () => {
  const ws = workspace({ 'main.go': MAIN, '.agentls/settings.json': ASK_EDIT });
  const c = await start(ws, { answer: () => ({ action: 'accept', content: { decision: 'allowOnce' } }) });
  await c.callTool({ name: 'read', arguments: { path: 'main.go' } });
  const r = await c.callTool({ name: 'edit', arguments: { path: 'main.go', edits: [{ oldText: 'func nothere() {}', newText: 'x' }] } });
  assert.equal(r.isError, true, text(r));
  assert.equal(c.asked.length, 0, 'nobody asked about a call that fails');
});

test('--mode readOnly refuses writes without a question', async () => {
  const ws = workspace({ 'main.go': MAIN });
  const c = await start(ws, { args: ['--mode', 'readOnly'], answer: () => ({ action: 'accept', content: { decision: 'allowOnce' } }) });
  const r = await readThenEdit(c);
  assert.equal(r.isError, true, text(r));
  assert.match(text(r), /readOnly/);
  assert.equal(c.asked.length, 0);
});
