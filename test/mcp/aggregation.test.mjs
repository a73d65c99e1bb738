// Upstream aggregation: @modelcontextprotocol/server-filesystem configured in
// .agentls/mcp.json, reached through agentls with its governance.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync, mkdirSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { connect, tempDir, text, alive, sleep, waitFor, filesystemServer } from './helpers.mjs';

const secret = 'ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8';
let ws, client, listChanged = 0;

function writeConfig(dir) {
  mkdirSync(join(dir, '.agentls'), { recursive: true });
  // The {"servers": …} shape of .vscode/mcp.json; ${workspaceFolder} is expanded.
  writeFileSync(join(dir, '.agentls', 'mcp.json'), JSON.stringify({
    servers: { filesystem: { command: process.execPath, args: [filesystemServer, '${workspaceFolder}'] } },
  }));
}

before(async () => {
  ws = tempDir('agentls-mcp-agg-');
  writeConfig(ws);
  writeFileSync(join(ws, 'config.env'), `USER=me\nGITHUB_TOKEN=${secret}\nEND=yes\n`);
  client = await connect({ args: ['--root', ws] });
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => { listChanged++; });
});

after(async () => {
  await client?.close();
});

async function readThrough(path) {
  return client.callTool({ name: 'filesystem__read_text_file', arguments: { path } });
}

test('upstream tools are deferred until tool_search finds them', async (t) => {
  const names = (await client.listTools()).tools.map((x) => x.name);
  if (!names.includes('tool_search')) return t.skip('this agentls has no tool_search tool');
  assert.ok(!names.includes('filesystem__read_text_file'), 'deferred tools are not listed before a search');
  const r = await client.callTool({ name: 'tool_search', arguments: { query: 'read text file' } });
  assert.equal(r.isError ?? false, false, text(r));
  assert.match(text(r), /filesystem__read_text_file/);
  await waitFor(() => listChanged > 0, 3_000, 'notifications/tools/list_changed');
  const after = (await client.listTools()).tools;
  const rt = after.find((x) => x.name === 'filesystem__read_text_file');
  assert.ok(rt, 'filesystem__read_text_file listed after the search');
  assert.equal(rt._meta?.source, 'mcp:filesystem');
  assert.equal(rt.annotations?.readOnlyHint, true, 'upstream annotations kept');
});

test('an upstream call returns the file with the secret masked', async () => {
  const r = await readThrough(join(ws, 'config.env'));
  assert.equal(r.isError ?? false, false, text(r));
  assert.match(text(r), /USER=me/);
  assert.match(text(r), /END=yes/);
  assert.ok(!text(r).includes(secret), 'the planted token is masked');
  assert.equal(r._meta?.details?.upstream?.server, 'filesystem');
});

test('killing the upstream gives a clear error; the next call works after the restart', async () => {
  const first = await readThrough(join(ws, 'config.env'));
  const pid = first._meta?.details?.upstream?.pid;
  assert.ok(pid > 0, 'upstream pid in details');
  process.kill(pid, 'SIGKILL');
  await waitFor(() => !alive(pid), 3_000, 'the upstream to die');
  const failed = await readThrough(join(ws, 'config.env'));
  assert.equal(failed.isError, true, 'a call right after the crash fails');
  assert.match(text(failed), /filesystem/);
  assert.match(text(failed), /restart/i);
  await sleep(2_000); // first restart after 100 ms, plus node start-up
  const again = await readThrough(join(ws, 'config.env'));
  assert.equal(again.isError ?? false, false, text(again));
  assert.match(text(again), /USER=me/);
  assert.notEqual(again._meta.details.upstream.pid, pid, 'a new process');
});

test('a deny rule mcp__filesystem__write_file blocks writes', async () => {
  const dir = tempDir('agentls-mcp-deny-');
  writeConfig(dir);
  writeFileSync(join(dir, '.agentls', 'settings.json'), JSON.stringify({ permissions: { deny: ['mcp__filesystem__write_file'] } }));
  const c = await connect({ args: ['--root', dir] });
  try {
    const target = join(dir, 'blocked.txt');
    const r = await c.callTool({ name: 'filesystem__write_file', arguments: { path: target, content: 'x' } });
    assert.equal(r.isError, true, text(r));
    assert.match(text(r), /deny|denied|not allowed|permission/i);
    assert.equal(existsSync(target), false, 'nothing written');
    const ok = await c.callTool({ name: 'filesystem__read_text_file', arguments: { path: join(dir, '.agentls', 'mcp.json') } });
    assert.equal(ok.isError ?? false, false, 'other upstream tools still work: ' + text(ok));
  } finally {
    await c.close();
  }
});
