// `agentls mcp` against the official TypeScript MCP client.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync, readFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import Ajv from 'ajv';
import { connect, tempDir, text, alive, waitFor } from './helpers.mjs';

let ws, outside, decoy, client, toolNames;

before(async () => {
  ws = tempDir('agentls-mcp-ws-');
  outside = tempDir('agentls-mcp-outside-');
  decoy = tempDir('agentls-mcp-decoy-');
  writeFileSync(join(ws, 'a.txt'), 'alpha\nbeta\ngamma\n');
  mkdirSync(join(ws, 'src'));
  writeFileSync(join(ws, 'src', 'main.go'), 'package main\n\nfunc main() { println("needle") }\n');
  writeFileSync(join(outside, 'secret.txt'), 'outside the roots\n');
  writeFileSync(join(decoy, 'only-in-decoy.txt'), 'decoy\n');
  // Settings load from the workspace the roots name: edits and bash run
  // without asking. The decoy's settings would refuse everything.
  mkdirSync(join(ws, '.agentls'));
  writeFileSync(join(ws, '.agentls', 'settings.json'), JSON.stringify({ mode: 'acceptEdits', permissions: { allow: ['bash'] } }));
  mkdirSync(join(decoy, '.agentls'));
  writeFileSync(join(decoy, '.agentls', 'settings.json'), JSON.stringify({ mode: 'readOnly' }));
  // --root names the decoy; the client's roots must win.
  client = await connect({ roots: [ws], args: ['--root', decoy] });
  toolNames = (await client.listTools()).tools.map((t) => t.name);
});

after(async () => {
  await client?.close();
});

test('initialize: server info and tools capability', () => {
  assert.equal(client.getServerVersion().name, 'agentls');
  assert.ok(client.getServerCapabilities().tools, 'tools capability');
  assert.match(client.getInstructions() ?? '', /Read a file before editing/);
});

test('tools/list: annotations present and schemas compile', async () => {
  const { tools } = await client.listTools();
  for (const name of ['read', 'ls', 'grep', 'find', 'edit', 'write']) assert.ok(toolNames.includes(name), `${name} listed`);
  const ajv = new Ajv({ strict: false });
  for (const t of tools) {
    assert.equal(t.inputSchema.type, 'object', `${t.name} schema type`);
    assert.doesNotThrow(() => ajv.compile(t.inputSchema), `${t.name} schema compiles`);
    for (const k of ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint']) {
      assert.equal(typeof t.annotations?.[k], 'boolean', `${t.name} annotations.${k}`);
    }
  }
  const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
  assert.equal(byName.read.annotations.readOnlyHint, true);
  assert.equal(byName.grep.annotations.readOnlyHint, true);
  assert.equal(byName.edit.annotations.readOnlyHint, false);
  assert.equal(byName.write.annotations.readOnlyHint, false);
});

test('roots: the client roots define the workspace, not --root', async () => {
  const r = await client.callTool({ name: 'read', arguments: { path: 'a.txt' } });
  assert.equal(r.isError ?? false, false, text(r));
  assert.match(text(r), /beta/);
  const d = await client.callTool({ name: 'read', arguments: { path: 'only-in-decoy.txt' } });
  assert.equal(d.isError, true, 'the --root folder is not the workspace when roots are given');
  const o = await client.callTool({ name: 'read', arguments: { path: join(outside, 'secret.txt') } });
  assert.equal(o.isError, true, 'a path outside the roots is refused');
  assert.doesNotMatch(text(o), /outside the roots/);
});

test('read returns details in _meta', async () => {
  const r = await client.callTool({ name: 'read', arguments: { path: 'a.txt' } });
  assert.ok(r._meta?.callId, 'callId in _meta');
  assert.equal(r._meta?.details?.totalLines, 3);
});

test('grep finds content', async () => {
  const r = await client.callTool({ name: 'grep', arguments: { pattern: 'needle' } });
  assert.equal(r.isError ?? false, false, text(r));
  assert.match(text(r), /main\.go/);
});

test('edit: refused before a read, applied after it', async () => {
  writeFileSync(join(ws, 'e.txt'), 'one\ntwo\nthree\n');
  const args = { path: 'e.txt', edits: [{ oldText: 'two', newText: 'TWO' }] };
  const before = await client.callTool({ name: 'edit', arguments: args });
  assert.equal(before.isError, true, 'edit without read fails');
  assert.match(text(before), /read/i);
  assert.equal(readFileSync(join(ws, 'e.txt'), 'utf8'), 'one\ntwo\nthree\n');
  await client.callTool({ name: 'read', arguments: { path: 'e.txt' } });
  const ok = await client.callTool({ name: 'edit', arguments: args });
  assert.equal(ok.isError ?? false, false, text(ok));
  assert.equal(readFileSync(join(ws, 'e.txt'), 'utf8'), 'one\nTWO\nthree\n');
  assert.ok(ok._meta?.details?.unifiedDiff, 'diff in _meta.details');
});

test('a tool the server does not list is an isError result naming the tools', async () => {
  // Errors are results (docs/tools.md), where the SDK would send -32602.
  const r = await client.callTool({ name: 'reed', arguments: {} });
  assert.equal(r.isError, true);
  assert.match(text(r), /unknown tool "reed"\. Did you mean "read"\? Available tools: .*grep/);
});

test('bash streams notifications/progress', async (t) => {
  if (!toolNames.includes('bash')) return t.skip('this agentls has no bash tool');
  const progress = [];
  const r = await client.callTool(
    { name: 'bash', arguments: { command: 'for i in 1 2 3 4 5; do echo line$i; sleep 0.2; done' } },
    undefined,
    { onprogress: (p) => progress.push(p) },
  );
  assert.equal(r.isError ?? false, false, text(r));
  assert.match(text(r), /line5/);
  assert.ok(progress.length >= 2, `got ${progress.length} progress notifications`);
  for (let i = 1; i < progress.length; i++) assert.ok(progress[i].progress > progress[i - 1].progress, 'progress increases');
  assert.ok(progress.some((p) => /line\d/.test(p.message ?? '')), 'output in progress messages');
});

test('cancellation kills `sleep 100`', async (t) => {
  if (!toolNames.includes('bash')) return t.skip('this agentls has no bash tool');
  const pidFile = join(ws, 'sleep.pid');
  const ac = new AbortController();
  const call = client.callTool(
    { name: 'bash', arguments: { command: `echo $$ > ${pidFile}; exec sleep 100` } },
    undefined,
    { signal: ac.signal, timeout: 60_000 },
  );
  let pid = 0;
  await waitFor(() => {
    try {
      pid = Number(readFileSync(pidFile, 'utf8').trim());
    } catch {}
    return pid > 0 && alive(pid);
  }, 10_000, 'sleep to start');
  const t0 = Date.now();
  ac.abort('test cancels');
  await assert.rejects(call);
  await waitFor(() => !alive(pid), 5_000, `sleep (pid ${pid}) to die`);
  assert.ok(Date.now() - t0 < 5_000);
});

test('cancellation reaches the tool (test_block)', async (t) => {
  if (!toolNames.includes('test_block')) return t.skip('test-only tools absent (build agentls with -tags agentlstest, run with AGENTLS_TEST_TOOLS=1)');
  const marker = 'cancelled.marker';
  const ac = new AbortController();
  const call = client.callTool({ name: 'test_block', arguments: { marker } }, undefined, { signal: ac.signal });
  setTimeout(() => ac.abort('stop'), 200);
  await assert.rejects(call);
  await waitFor(() => {
    try {
      return readFileSync(join(ws, marker), 'utf8') === 'cancelled\n';
    } catch {
      return false;
    }
  }, 5_000, 'the cancelled tool to write its marker');
});
