// Contract tests of `agentls mcp` against issue #9 and docs/protocol.md
// ("agentls mcp"): the statements the other files here do not check, through
// the real binary with the official TypeScript SDK client (and raw stdio
// where the SDK cannot send what is tested, e.g. malformed lines).
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { writeFileSync, readFileSync, mkdirSync, existsSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { randomUUID } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ElicitRequestSchema, ListRootsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import Ajv from 'ajv';
import Ajv2020 from 'ajv/dist/2020.js';
import { agentlsBin, connect, tempDir, text, alive, sleep, waitFor, here, filesystemServer } from './helpers.mjs';

// A 1×1 PNG.
const pngB64 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
const secret = 'ghp_Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J3i2';

const clients = [];
after(async () => {
  for (const c of clients) await c.close().catch(() => {});
});

async function open(opts) {
  const c = await connect(opts);
  clients.push(c);
  return c;
}

// record keeps every message the client receives (the SDK consumes
// notifications such as progress itself).
function record(client) {
  const seen = [];
  const tr = client.transport;
  const orig = tr.onmessage;
  tr.onmessage = (m, extra) => {
    seen.push({ at: Date.now(), m });
    orig?.(m, extra);
  };
  return seen;
}

function settings(dir, s) {
  mkdirSync(join(dir, '.agentls'), { recursive: true });
  writeFileSync(join(dir, '.agentls', 'settings.json'), JSON.stringify(s));
}

// pidsWithMarker lists live processes whose environment holds marker.
function pidsWithMarker(marker) {
  const out = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      if (readFileSync(`/proc/${d}/environ`, 'latin1').includes(marker)) out.push(Number(d));
    } catch {}
  }
  return out;
}

// raw starts `agentls mcp` with plain pipes, for what the SDK cannot send.
function raw(args) {
  const p = spawn(agentlsBin(), ['mcp', ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
  const msgs = [];
  let buf = '';
  p.stdout.on('data', (d) => {
    buf += d;
    let i;
    while ((i = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, i);
      buf = buf.slice(i + 1);
      if (!line.trim()) continue;
      try {
        msgs.push(JSON.parse(line));
      } catch {
        msgs.push({ unparsable: line });
      }
    }
  });
  p.stderr.resume();
  p.stdin.on('error', () => {});
  return {
    p,
    msgs,
    send: (x) => p.stdin.write((typeof x === 'string' ? x : JSON.stringify(x)) + '\n'),
    async reply(id, ms = 5_000) {
      let found;
      await waitFor(() => (found = msgs.find((m) => m.id === id && ('result' in m || 'error' in m))) !== undefined, ms, `reply to id ${id}`);
      return found;
    },
    close() {
      p.stdin.end();
      if (alive(p.pid)) p.kill('SIGTERM');
    },
  };
}

const init = (id, capabilities = {}) => ({
  jsonrpc: '2.0', id, method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities, clientInfo: { name: 'raw-audit', version: '1' } },
});

describe('initialize and tools/list', () => {
  let ws, client;
  before(async () => {
    ws = tempDir('agentls-audit-init-');
    client = await open({ args: ['--root', ws] });
  });

  test('serverInfo version, tools.listChanged, instructions name the rules for the model', async () => {
    assert.equal(typeof client.getServerVersion().version, 'string');
    assert.ok(client.getServerVersion().version.length > 0, 'a version');
    assert.equal(client.getServerCapabilities().tools?.listChanged, true);
    const ins = client.getInstructions() ?? '';
    assert.match(ins, /read a file before editing/i);
    assert.match(ins, /never guess file contents/i);
    assert.match(ins, /cat/);
    assert.match(ins, /oldText small but unique/i);
    await client.ping();
  });

  test('connect+initialize (spawn included): median of 5 under 100 ms (benchmark target 20 ms)', async (t) => {
    const took = [];
    for (let i = 0; i < 5; i++) {
      const c = new Client({ name: 'audit-timing', version: '1' });
      const t0 = performance.now();
      await c.connect(new StdioClientTransport({ command: agentlsBin(), args: ['mcp', '--root', ws], env: { ...process.env }, stderr: 'ignore' }));
      took.push(performance.now() - t0);
      await c.close();
    }
    took.sort((a, b) => a - b);
    t.diagnostic(`connect+initialize ms: ${took.map((x) => x.toFixed(1)).join(' ')}`);
    assert.ok(took[2] < 100, `median ${took[2].toFixed(1)} ms`);
  });

  test('raw initialize: protocol version echoed, answered before the session', async () => {
    const r = raw(['--root', ws]);
    try {
      const t0 = Date.now();
      r.send(init(1));
      const m = await r.reply(1);
      assert.equal(m.result.protocolVersion, '2025-06-18');
      assert.equal(m.result.serverInfo.name, 'agentls');
      assert.ok(Date.now() - t0 < 1_000, `initialize took ${Date.now() - t0} ms`);
    } finally {
      r.close();
    }
  });

  test('annotations: per-tool values and _meta.source', async () => {
    const { tools } = await client.listTools();
    const by = Object.fromEntries(tools.map((t) => [t.name, t]));
    const want = {
      read: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
      ls: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
      grep: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
      find: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
      edit: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
      write: { readOnlyHint: false, destructiveHint: true, openWorldHint: false },
      bash: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
      tool_search: { readOnlyHint: true, destructiveHint: false, openWorldHint: false },
    };
    for (const [name, hints] of Object.entries(want)) {
      assert.ok(by[name], `${name} listed`);
      for (const [k, v] of Object.entries(hints)) assert.equal(by[name].annotations?.[k], v, `${name}.${k}`);
      assert.equal(by[name]._meta?.source, 'core', `${name} _meta.source`);
      assert.ok((by[name].description ?? '').length > 40, `${name} has a description`);
    }
  });

  test('inputSchema: valid JSON Schema (draft-07 and 2020-12 meta-schemas), accepts a typical call', async () => {
    const { tools } = await client.listTools();
    const d7 = new Ajv({ strict: false });
    const d2020 = new Ajv2020({ strict: false });
    for (const t of tools) {
      assert.equal(d7.validateSchema(t.inputSchema), true, `${t.name} draft-07: ${JSON.stringify(d7.errors)}`);
      assert.equal(d2020.validateSchema(t.inputSchema), true, `${t.name} 2020-12: ${JSON.stringify(d2020.errors)}`);
    }
    const by = Object.fromEntries(tools.map((t) => [t.name, t]));
    const samples = {
      read: { path: 'a.txt', offset: 1, limit: 10 },
      grep: { pattern: 'x' },
      edit: { path: 'a.txt', edits: [{ oldText: 'a', newText: 'b' }] },
      write: { path: 'a.txt', content: 'x' },
      bash: { command: 'true', timeout: 5 },
      tool_search: { query: 'x' },
    };
    for (const [name, args] of Object.entries(samples)) {
      const v = d2020.compile(by[name].inputSchema);
      assert.ok(v(args), `${name} schema accepts ${JSON.stringify(args)}: ${JSON.stringify(v.errors)}`);
    }
    assert.equal(d2020.compile(by.read.inputSchema)({}), false, 'read schema requires path');
  });
});

describe('tools through the SDK client', () => {
  let ws, client, seen, outside;
  before(async () => {
    ws = tempDir('agentls-audit-tools-');
    outside = tempDir('agentls-audit-out-');
    writeFileSync(join(ws, 'a.txt'), 'alpha\nbeta\ngamma\n');
    writeFileSync(join(ws, 'g.txt'), 'one\ntwo needle\nthree\n');
    writeFileSync(join(ws, 'pic.png'), Buffer.from(pngB64, 'base64'));
    writeFileSync(join(outside, 'o.txt'), 'outside\n');
    settings(ws, { mode: 'acceptEdits', permissions: { allow: ['bash'] } });
    client = await open({ args: ['--root', ws] });
    seen = record(client);
  });

  test('read: numbered lines of the file', async () => {
    const r = await client.callTool({ name: 'read', arguments: { path: 'a.txt' } });
    assert.equal(r.isError ?? false, false, text(r));
    assert.match(text(r), /2→beta/);
  });

  test('grep: the matching line with its line number', async () => {
    const r = await client.callTool({ name: 'grep', arguments: { pattern: 'needle' } });
    assert.equal(r.isError ?? false, false, text(r));
    assert.match(text(r), /g\.txt/);
    assert.match(text(r), /2\D{0,3}two needle/);
    assert.doesNotMatch(text(r), /three/);
  });

  test('edit without read: refused, message names read and the file; nothing written', async () => {
    writeFileSync(join(ws, 'u.txt'), 'x = 1\n');
    const r = await client.callTool({ name: 'edit', arguments: { path: 'u.txt', edits: [{ oldText: 'x = 1', newText: 'x = 2' }] } });
    assert.equal(r.isError, true);
    assert.match(text(r), /\bread\b/i);
    assert.match(text(r), /u\.txt/);
    assert.equal(readFileSync(join(ws, 'u.txt'), 'utf8'), 'x = 1\n');
  });

  test('edit after an external change: refused until read again', async () => {
    writeFileSync(join(ws, 'c.txt'), 'v1\n');
    await client.callTool({ name: 'read', arguments: { path: 'c.txt' } });
    writeFileSync(join(ws, 'c.txt'), 'v1 changed outside\n');
    const r = await client.callTool({ name: 'edit', arguments: { path: 'c.txt', edits: [{ oldText: 'v1', newText: 'v2' }] } });
    assert.equal(r.isError, true, text(r));
    assert.match(text(r), /chang|modif|re-?read|since/i);
    assert.equal(readFileSync(join(ws, 'c.txt'), 'utf8'), 'v1 changed outside\n');
  });

  test('write: a new file is created, an unread existing file is not replaced', async () => {
    const n = await client.callTool({ name: 'write', arguments: { path: 'new/made.txt', content: 'made\n' } });
    assert.equal(n.isError ?? false, false, text(n));
    assert.equal(readFileSync(join(ws, 'new', 'made.txt'), 'utf8'), 'made\n');
    writeFileSync(join(ws, 'keep.txt'), 'keep\n');
    const o = await client.callTool({ name: 'write', arguments: { path: 'keep.txt', content: 'clobber\n' } });
    assert.equal(o.isError, true);
    assert.equal(readFileSync(join(ws, 'keep.txt'), 'utf8'), 'keep\n');
  });

  test('a path outside --root is refused, .. escapes too', async () => {
    for (const path of [join(outside, 'o.txt'), `../${outside.split('/').pop()}/o.txt`]) {
      const r = await client.callTool({ name: 'read', arguments: { path } });
      assert.equal(r.isError, true, path);
      assert.doesNotMatch(text(r), /^outside$/m);
    }
  });

  test('images: read of a PNG is MCP image content', async () => {
    const r = await client.callTool({ name: 'read', arguments: { path: 'pic.png' } });
    assert.equal(r.isError ?? false, false, text(r));
    const img = r.content.find((c) => c.type === 'image');
    assert.ok(img, `image part in ${JSON.stringify(r.content.map((c) => c.type))}`);
    assert.equal(img.mimeType, 'image/png');
    assert.equal(img.data, pngB64);
  });

  test('details ride in _meta for bash and for errors', async () => {
    const ok = await client.callTool({ name: 'bash', arguments: { command: 'echo hi' } });
    assert.equal(ok.isError ?? false, false, text(ok));
    assert.equal(typeof ok._meta?.callId, 'string');
    assert.equal(typeof ok._meta?.details, 'object');
    const bad = await client.callTool({ name: 'bash', arguments: { command: 'exit 3' } });
    assert.equal(bad.isError, true);
    assert.match(text(bad), /3/);
    assert.equal(typeof bad._meta?.callId, 'string');
    assert.notEqual(bad._meta.callId, ok._meta.callId);
  });

  test('bash without a progress token: no notifications/progress', async () => {
    const from = seen.length;
    const r = await client.callTool({ name: 'bash', arguments: { command: 'for i in 1 2 3 4; do echo p$i; sleep 0.1; done' } });
    assert.equal(r.isError ?? false, false, text(r));
    const prog = seen.slice(from).filter((x) => x.m.method === 'notifications/progress');
    assert.equal(prog.length, 0, JSON.stringify(prog.map((x) => x.m)));
  });

  test('bash progress: first promptly, at most one per 50 ms, output in messages', async () => {
    const from = seen.length;
    const progress = [];
    const t0 = Date.now();
    const r = await client.callTool(
      { name: 'bash', arguments: { command: 'echo first; sleep 0.5; for i in $(seq 1 40); do echo l$i; sleep 0.01; done' } },
      undefined,
      { onprogress: (p) => progress.push({ at: Date.now(), p }) },
    );
    const took = Date.now() - t0;
    assert.equal(r.isError ?? false, false, text(r));
    assert.ok(progress.length >= 1, 'some progress');
    assert.ok(progress[0].at - t0 < 450, `first progress after ${progress[0].at - t0} ms`);
    assert.match(progress[0].p.message ?? '', /first/);
    const raw = seen.slice(from).filter((x) => x.m.method === 'notifications/progress');
    assert.ok(raw.length <= Math.ceil(took / 50) + 1, `${raw.length} notifications in ${took} ms`);
  });

  test('cancelling `sleep 100` (not exec\'d) kills it', async () => {
    const mark = `AUDIT_MARK_${randomUUID().replace(/-/g, "")}`;
    const ac = new AbortController();
    const call = client.callTool({ name: 'bash', arguments: { command: `export ${mark}=1; sleep 100; echo after` } }, undefined, { signal: ac.signal, timeout: 60_000 });
    call.catch(() => {});
    await waitFor(() => pidsWithMarker(mark).length >= 1, 5_000, 'sleep to start (the exported marker is in its environment)');
    const t0 = Date.now();
    ac.abort('audit');
    await assert.rejects(call);
    try {
      await waitFor(() => pidsWithMarker(mark).length === 0, 4_000, 'the marked processes to die');
    } finally {
      for (const pid of pidsWithMarker(mark)) process.kill(pid, 'SIGKILL');
    }
    assert.ok(Date.now() - t0 < 4_000);
  });

  test('cancelling: a TERM-ignoring child and a setsid escapee die too (2 s grace, then KILL)', async () => {
    const mark = `AUDIT_MARK_${randomUUID().replace(/-/g, "")}`;
    const ac = new AbortController();
    const cmd = `export ${mark}=1; setsid sleep 100 & (trap '' TERM; sleep 100) & sleep 100`;
    const call = client.callTool({ name: 'bash', arguments: { command: cmd } }, undefined, { signal: ac.signal, timeout: 60_000 });
    call.catch(() => {});
    await waitFor(() => pidsWithMarker(mark).length >= 3, 5_000, 'the three sleeps to start');
    await sleep(100);
    ac.abort('audit');
    await assert.rejects(call);
    let left = [];
    try {
      await waitFor(() => (left = pidsWithMarker(mark)).length === 0, 5_000, 'the marked processes to die');
    } catch (e) {
      const desc = left.map((p) => { try { return `${p}: ${readFileSync(`/proc/${p}/cmdline`, 'latin1').replace(/\0/g, ' ')}`; } catch { return String(p); } });
      for (const pid of left) process.kill(pid, 'SIGKILL');
      throw new Error(`${e.message}; left: ${desc.join('; ')}`);
    }
  });
});

describe('roots', () => {
  test('roots/list_changed replaces the workspace before the next call (multi-root)', async () => {
    const ws1 = tempDir('agentls-audit-r1-');
    const ws2 = tempDir('agentls-audit-r2-');
    const ws3 = tempDir('agentls-audit-r3-');
    writeFileSync(join(ws1, 'one.txt'), 'in one\n');
    writeFileSync(join(ws2, 'two.txt'), 'in two\n');
    writeFileSync(join(ws3, 'three.txt'), 'in three\n');
    const roots = [ws1];
    const client = await open({ roots });
    const a = await client.callTool({ name: 'read', arguments: { path: 'one.txt' } });
    assert.equal(a.isError ?? false, false, text(a));
    roots.splice(0, roots.length, ws2, ws3);
    await client.sendRootsListChanged();
    const b = await client.callTool({ name: 'read', arguments: { path: 'two.txt' } });
    assert.equal(b.isError ?? false, false, 'relative path in the new first root: ' + text(b));
    const c = await client.callTool({ name: 'read', arguments: { path: join(ws3, 'three.txt') } });
    assert.equal(c.isError ?? false, false, 'absolute path in the second root: ' + text(c));
    const d = await client.callTool({ name: 'read', arguments: { path: join(ws1, 'one.txt') } });
    assert.equal(d.isError, true, 'the old root is gone');
    assert.doesNotMatch(text(d), /in one/);
  });

  test('the first call waits for a slow roots/list answer', async () => {
    const ws = tempDir('agentls-audit-slowroots-');
    const decoy = tempDir('agentls-audit-slowdecoy-');
    writeFileSync(join(ws, 'slow.txt'), 'slow root\n');
    const client = new Client({ name: 'audit-slow-roots', version: '1' }, { capabilities: { roots: { listChanged: true } } });
    client.setRequestHandler(ListRootsRequestSchema, async () => {
      await sleep(800);
      return { roots: [{ uri: pathToFileURL(ws).href, name: 'ws' }] };
    });
    await client.connect(new StdioClientTransport({ command: agentlsBin(), args: ['mcp', '--root', decoy], env: { ...process.env }, stderr: 'ignore' }));
    clients.push(client);
    const r = await client.callTool({ name: 'read', arguments: { path: 'slow.txt' } });
    assert.equal(r.isError ?? false, false, text(r));
    assert.match(text(r), /slow root/);
  });

  test('without roots: --root is the workspace; without --root: the working directory', async () => {
    const wsA = tempDir('agentls-audit-ra-');
    const wsB = tempDir('agentls-audit-rb-');
    writeFileSync(join(wsA, 'fa.txt'), 'A\n');
    writeFileSync(join(wsB, 'fb.txt'), 'B\n');
    const c1 = await open({ args: ['--root', wsA], cwd: wsB });
    const r1 = await c1.callTool({ name: 'read', arguments: { path: 'fa.txt' } });
    assert.equal(r1.isError ?? false, false, text(r1));
    assert.equal((await c1.callTool({ name: 'read', arguments: { path: 'fb.txt' } })).isError, true, '--root wins over cwd');
    const c2 = await open({ cwd: wsB });
    const r2 = await c2.callTool({ name: 'read', arguments: { path: 'fb.txt' } });
    assert.equal(r2.isError ?? false, false, text(r2));
  });

  test('a client without the roots capability is never sent roots/list', async () => {
    const ws = tempDir('agentls-audit-noroots-');
    writeFileSync(join(ws, 'x.txt'), 'x\n');
    const r = raw(['--root', ws]);
    try {
      r.send(init(1));
      await r.reply(1);
      r.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
      r.send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'read', arguments: { path: 'x.txt' } } });
      const m = await r.reply(2);
      assert.ok(!m.result.isError, JSON.stringify(m));
      await sleep(100);
      assert.ok(!r.msgs.some((x) => x.method === 'roots/list'), 'no roots/list request');
    } finally {
      r.close();
    }
  });

  test('--root that is not a directory: usage error, exit 2', () => {
    const res = spawnSync(agentlsBin(), ['mcp', '--root', '/nonexistent/agentls-audit'], { input: '', encoding: 'utf8', timeout: 5_000 });
    assert.equal(res.status, 2);
    assert.match(res.stderr, /not a directory/);
  });
});

describe('deferred tools and tools/list_changed', () => {
  let ws, client, seen;
  const ext = (name, description, extra = {}) => JSON.stringify({
    name, description, inputSchema: { type: 'object', properties: { who: { type: 'string', description: 'whom' } } },
    command: 'echo hello {{who}}', readOnly: true, ...extra,
  });
  before(async () => {
    ws = tempDir('agentls-audit-defer-');
    mkdirSync(join(ws, '.agentls', 'tools'), { recursive: true });
    writeFileSync(join(ws, '.agentls', 'tools', 'greet.json'), ext('greet_person', 'Greet a person warmly by name.', { deferred: true }));
    writeFileSync(join(ws, '.agentls', 'tools', 'wave.json'), ext('wave_hand', 'Wave a hand at someone.', { deferred: true }));
    client = await open({ args: ['--root', ws] });
    seen = record(client);
  });
  const changed = (from) => seen.slice(from).filter((x) => x.m.method === 'notifications/tools/list_changed').length;
  const names = async () => (await client.listTools()).tools.map((t) => t.name);

  test('tool_search activates an extension tool and sends list_changed', async () => {
    const before = await names();
    assert.ok(!before.includes('greet_person'), 'deferred tool not listed first');
    const from = seen.length;
    const r = await client.callTool({ name: 'tool_search', arguments: { query: 'greet person' } });
    assert.match(text(r), /greet_person/);
    await waitFor(() => changed(from) > 0, 3_000, 'notifications/tools/list_changed');
    assert.ok((await names()).includes('greet_person'));
    const g = await client.callTool({ name: 'greet_person', arguments: { who: 'ann' } });
    assert.match(text(g), /hello ann/);
  });

  test('calling a deferred tool by name activates it', async () => {
    const r = await client.callTool({ name: 'wave_hand', arguments: { who: 'bob' } });
    assert.equal(r.isError ?? false, false, text(r));
    assert.match(text(r), /hello bob/);
    assert.ok((await names()).includes('wave_hand'));
  });

  test('a new .agentls/tools/*.json file: list_changed and listed', async () => {
    await names();
    const from = seen.length;
    writeFileSync(join(ws, '.agentls', 'tools', 'late.json'), ext('late_tool', 'Arrives late.', { deferred: false }));
    await waitFor(() => changed(from) > 0, 3_000, 'notifications/tools/list_changed');
    assert.ok((await names()).includes('late_tool'));
  });
});

describe('elicitation details', () => {
  async function asking(answers) {
    const ws = tempDir('agentls-audit-elicit-');
    const asked = [];
    const client = new Client({ name: 'audit-elicit', version: '1' }, { capabilities: { elicitation: {} } });
    client.setRequestHandler(ElicitRequestSchema, async (req) => {
      asked.push(req.params);
      return answers[Math.min(asked.length - 1, answers.length - 1)];
    });
    // acceptEdits: a mode the user chose asks for commands (the default
    // mode's asks are left to the MCP host), and allowAlways lifts it.
    await client.connect(new StdioClientTransport({ command: agentlsBin(), args: ['mcp', '--root', ws, '--mode', 'acceptEdits'], env: { ...process.env }, stderr: 'ignore' }));
    clients.push(client);
    return { ws, client, asked };
  }

  test('the form offers the four decisions with titles, and nothing optional', async () => {
    const { client, asked } = await asking([{ action: 'accept', content: { decision: 'rejectOnce' } }]);
    await client.callTool({ name: 'bash', arguments: { command: 'touch x' } });
    assert.equal(asked.length, 1);
    const s = asked[0].requestedSchema;
    assert.deepEqual(s.properties.decision.oneOf.map((o) => o.const).sort(), ['allowAlways', 'allowOnce', 'rejectAlways', 'rejectOnce']);
    assert.ok(s.properties.decision.oneOf.every((o) => o.title), 'every choice has a title');
    assert.deepEqual(Object.keys(s.properties), ['decision']);
  });

  test('allowAlways is remembered (for that exact command); a cancelled form refuses and is asked again', async () => {
    const a = await asking([{ action: 'accept', content: { decision: 'allowAlways' } }]);
    for (let i = 0; i < 2; i++) {
      rmSync(join(a.ws, 'made'), { force: true });
      const r = await a.client.callTool({ name: 'bash', arguments: { command: 'touch made' } });
      assert.ok(!r.isError, text(r));
      assert.ok(existsSync(join(a.ws, 'made')));
    }
    assert.equal(a.asked.length, 1, 'asked once');
    const c = await asking([{ action: 'cancel' }]);
    for (let i = 0; i < 2; i++) {
      const r = await c.client.callTool({ name: 'bash', arguments: { command: 'touch nope' } });
      assert.equal(r.isError, true);
    }
    assert.equal(c.asked.length, 2, 'a cancelled form is asked again');
    assert.ok(!existsSync(join(c.ws, 'nope')));
  });
});

describe('malformed input (raw stdio)', () => {
  let r;
  before(async () => {
    r = raw(['--root', tempDir('agentls-audit-raw-')]);
    r.send(init(1));
    await r.reply(1);
    r.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  });
  after(() => r.close());

  const lastError = () => r.msgs.filter((m) => m.error).at(-1);
  async function errorAfter(line, then) {
    const n = r.msgs.filter((m) => m.error).length;
    r.send(line);
    await waitFor(() => r.msgs.filter((m) => m.error).length > n, 5_000, `an error reply to ${String(line).slice(0, 40)}`);
    const e = lastError();
    r.send({ jsonrpc: '2.0', id: then, method: 'ping' });
    const p = await r.reply(then);
    assert.deepEqual(p.result, {}, 'the session goes on');
    return e;
  }

  test('not JSON: -32700 and the session goes on', async () => {
    const e = await errorAfter('{not json', 10);
    assert.equal(e.error.code, -32700);
    assert.equal(e.id, null);
  });

  test('not JSON-RPC 2.0: -32600 with its id', async () => {
    const e = await errorAfter('{"jsonrpc":"1.0","id":77,"method":"ping"}', 11);
    assert.equal(e.error.code, -32600);
    assert.equal(e.id, 77);
    const e2 = await errorAfter('{"hello":1}', 12);
    assert.equal(e2.error.code, -32600);
  });

  test('empty batch: an error reply (JSON-RPC 2.0 says -32600)', async () => {
    const e = await errorAfter('[]', 13);
    assert.equal(e.error.code, -32600);
  });

  test('empty batch: some error reply, and the session goes on', async () => {
    const e = await errorAfter('[]', 14);
    assert.ok(e.error.code < 0);
  });

  test('a batch is handled message by message', async () => {
    r.send('[{"jsonrpc":"2.0","id":20,"method":"ping"},{"jsonrpc":"2.0","id":21,"method":"tools/list"}]');
    assert.deepEqual((await r.reply(20)).result, {});
    assert.ok(Array.isArray((await r.reply(21)).result.tools));
  });

  test('a request for an unknown method: -32601', async () => {
    r.send({ jsonrpc: '2.0', id: 30, method: 'no/such' });
    assert.equal((await r.reply(30)).error.code, -32601);
  });

  test('a line over 16 MiB: an error reply and the session goes on', async () => {
    const big = `{"jsonrpc":"2.0","id":40,"method":"ping","params":{"pad":"${'a'.repeat(17 << 20)}"}}`;
    const e = await errorAfter(big, 41);
    assert.ok(e.error.code < 0);
    assert.ok(!r.msgs.some((m) => m.id === 40 && m.result), 'the oversized ping is not answered as a success');
  });
});

// A scriptable upstream MCP server (the TS SDK's low-level Server).
const probeSource = `
import { writeFileSync } from 'node:fs';
const sdk = process.argv[2];
const { Server } = await import(sdk + '/server/index.js');
const { StdioServerTransport } = await import(sdk + '/server/stdio.js');
const { ListToolsRequestSchema, CallToolRequestSchema } = await import(sdk + '/types.js');
const obj = (properties = {}) => ({ type: 'object', properties });
const server = new Server({ name: 'probe', version: '1.0.0' }, { capabilities: { tools: {} } });
server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: [
  { name: 'echo_env', description: 'Echo the PROBE_VAR environment variable.', inputSchema: obj(), annotations: { readOnlyHint: true } },
  { name: 'tick', description: 'Report progress ticks.', inputSchema: obj({ count: { type: 'number' } }) },
  { name: 'hang', description: 'Block until cancelled.', inputSchema: obj({ marker: { type: 'string' }, started: { type: 'string' } }) },
  { name: 'big', description: 'Return a large text.', inputSchema: obj() },
  { name: 'leak', description: 'Return a token in text and structured content.', inputSchema: obj({ token: { type: 'string' } }) },
  { name: 'picture', description: 'Return an image.', inputSchema: obj() },
  { name: 'shout', description: 'Write a line to stderr.', inputSchema: obj({ line: { type: 'string' } }) },
] }));
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
server.setRequestHandler(CallToolRequestSchema, async (req, extra) => {
  const a = req.params.arguments ?? {};
  const t = (text) => ({ content: [{ type: 'text', text }] });
  switch (req.params.name) {
    case 'echo_env': return t('PROBE_VAR=' + process.env.PROBE_VAR);
    case 'tick': {
      const tok = req.params._meta?.progressToken, n = a.count ?? 3;
      for (let i = 1; i <= n; i++) {
        if (tok !== undefined) await extra.sendNotification({ method: 'notifications/progress', params: { progressToken: tok, progress: i, total: n, message: 'tick ' + i } });
        await sleep(120);
      }
      return t('ticked ' + n + ' token=' + (tok !== undefined));
    }
    case 'hang': if (a.started) writeFileSync(a.started, 'started\\n'); return await new Promise((res) => {
      const timer = setTimeout(() => res(t('not cancelled')), 30000);
      extra.signal.addEventListener('abort', () => { clearTimeout(timer); if (a.marker) writeFileSync(a.marker, 'cancelled\\n'); res(t('cancelled')); });
    });
    case 'big': return t(Array.from({ length: 4000 }, (_, i) => 'line ' + (i + 1) + ' ' + 'x'.repeat(50)).join('\\n'));
    case 'leak': return { content: [{ type: 'text', text: 'token: ' + a.token }], structuredContent: { token: a.token } };
    case 'picture': return { content: [{ type: 'image', data: '${pngB64}', mimeType: 'image/png' }] };
    case 'shout': process.stderr.write(a.line + '\\n'); return t('shouted');
  }
  throw new Error('unknown tool ' + req.params.name);
});
await server.connect(new StdioServerTransport());
`;
const sdkDist = pathToFileURL(join(here, 'node_modules', '@modelcontextprotocol', 'sdk', 'dist', 'esm')).href;

function probeConfig(dir, env) {
  const path = join(dir, 'probe-server.mjs');
  writeFileSync(path, probeSource);
  return { command: process.execPath, args: [path, sdkDist], env };
}

describe('upstream aggregation (probe server, mcpServers shape, user config dir)', () => {
  let ws, cfg, audit, client;
  before(async () => {
    ws = tempDir('agentls-audit-up-');
    cfg = tempDir('agentls-audit-cfg-');
    audit = tempDir('agentls-audit-log-');
    const tools = tempDir('agentls-audit-probe-');
    mkdirSync(join(ws, '.agentls'), { recursive: true });
    writeFileSync(join(ws, '.agentls', 'mcp.json'), JSON.stringify({ mcpServers: { probe: probeConfig(tools, { PROBE_VAR: 'from-config' }) } }));
    mkdirSync(join(cfg, 'agentls'), { recursive: true });
    writeFileSync(join(cfg, 'agentls', 'mcp.json'), JSON.stringify({ servers: { userprobe: probeConfig(tools, { PROBE_VAR: 'from-user-config' }) } }));
    // Workspace allow rules cannot lift the built-in ask for a destructive
    // (unannotated) MCP tool (internal/policy/doc.go step 7/8); the
    // user's settings can.
    writeFileSync(join(cfg, 'agentls', 'settings.json'), JSON.stringify({ permissions: { allow: ['mcp__probe'] } }));
    settings(ws, { permissions: { allow: ['mcp__userprobe'] } });
    client = await open({ args: ['--root', ws], env: { XDG_CONFIG_HOME: cfg, AGENTLS_AUDIT_DIR: audit } });
  });

  test('mcpServers shape: tools found, env from the config reaches the server', async () => {
    const s = await client.callTool({ name: 'tool_search', arguments: { query: 'echo environment variable' } });
    assert.match(text(s), /probe__echo_env/);
    const r = await client.callTool({ name: 'probe__echo_env', arguments: {} });
    assert.equal(r.isError ?? false, false, text(r));
    assert.match(text(r), /PROBE_VAR=from-config/);
    const listed = (await client.listTools()).tools.find((t) => t.name === 'probe__echo_env');
    assert.equal(listed?.annotations?.readOnlyHint, true);
    assert.equal(listed?.annotations?.openWorldHint, true, 'unannotated openWorld defaults to true');
  });

  test('the user config dir ($XDG_CONFIG_HOME/agentls/mcp.json) adds its servers', async () => {
    const r = await client.callTool({ name: 'userprobe__echo_env', arguments: {} });
    assert.equal(r.isError ?? false, false, text(r));
    assert.match(text(r), /PROBE_VAR=from-user-config/);
  });

  test('an unannotated upstream tool is destructive: a workspace allow rule does not lift the ask', async () => {
    const r = await client.callTool({ name: 'userprobe__tick', arguments: { count: 1 } });
    assert.equal(r.isError, true, text(r));
    assert.match(text(r), /approval/);
    assert.match(text(r), /destructive/);
    const listed = (await client.listTools()).tools.find((t) => t.name === 'userprobe__tick');
    assert.equal(listed?.annotations?.destructiveHint, true);
    assert.equal(listed?.annotations?.readOnlyHint, false);
  });

  test('upstream progress is forwarded to the client', async () => {
    const progress = [];
    const r = await client.callTool({ name: 'probe__tick', arguments: { count: 4 } }, undefined, { onprogress: (p) => progress.push(p) });
    assert.equal(r.isError ?? false, false, text(r));
    assert.match(text(r), /token=true/);
    assert.ok(progress.length >= 2, `${progress.length} progress notifications`);
    assert.ok(progress.some((p) => /tick \d/.test(p.message ?? '')), JSON.stringify(progress));
  });

  test('cancellation is forwarded to the upstream', async () => {
    const marker = join(ws, 'hang.cancelled');
    const started = join(ws, 'hang.started');
    const ac = new AbortController();
    const call = client.callTool({ name: 'probe__hang', arguments: { marker, started } }, undefined, { signal: ac.signal });
    call.catch(() => {});
    await waitFor(() => existsSync(started), 5_000, 'the upstream to receive the call');
    ac.abort('audit');
    await assert.rejects(call);
    await waitFor(() => existsSync(marker), 3_000, 'the upstream to see notifications/cancelled');
  });

  test('result budget: a large upstream result is cut with a notice', async () => {
    const r = await client.callTool({ name: 'probe__big', arguments: {} });
    const t = text(r);
    // An MCP client not in the host table: 39,000 bytes, the notice inside them.
    assert.ok(Buffer.byteLength(t) <= 39_000, `${Buffer.byteLength(t)} bytes`);
    assert.match(t, /line 1 x/);
    assert.doesNotMatch(t, /line 4000 x/);
    assert.match(t, /39000-byte result budget/);
    assert.match(t, /lines 1-\d+ of 4000/);
    const spill = r._meta?.details?.spillPath;
    assert.ok(spill && t.includes(spill), 'the notice names the spill file');
    const rest = await client.callTool({ name: 'read', arguments: { path: spill, offset: 4000, limit: 1 } });
    assert.equal(rest.isError ?? false, false, 'read opens the spill file: ' + text(rest));
    assert.match(text(rest), /line 4000 x/);
  });

  test('masking covers upstream text, structuredContent and the audit log', async () => {
    const r = await client.callTool({ name: 'probe__leak', arguments: { token: secret } });
    assert.ok(!JSON.stringify(r).includes(secret), JSON.stringify(r));
    assert.match(text(r), /token:/);
    let lines = [];
    await waitFor(() => {
      lines = readdirSync(audit).flatMap((f) => readFileSync(join(audit, f), 'utf8').split('\n').filter(Boolean));
      return lines.some((l) => l.includes('probe__leak'));
    }, 3_000, 'an audit line for probe__leak');
    assert.ok(!lines.join('\n').includes(secret), 'the audit log masks the argument');
    const e = JSON.parse(lines.find((l) => l.includes('probe__leak')));
    assert.equal(e.decision, 'allow');
  });

  test('an upstream image is MCP image content', async () => {
    const r = await client.callTool({ name: 'probe__picture', arguments: {} });
    const img = r.content.find((c) => c.type === 'image');
    assert.ok(img, JSON.stringify(r.content));
    assert.equal(img.data, pngB64);
    assert.equal(img.mimeType, 'image/png');
  });

  test("the upstream's stderr goes to the log", async () => {
    const line = `probe-stderr-${randomUUID()}`;
    await client.callTool({ name: 'probe__shout', arguments: { line } });
    await waitFor(() => client.stderrText().includes(line), 3_000, 'the stderr line in agentls log');
  });

  test('killing the upstream during a call: a clear error, then calls work after the restart', async () => {
    const first = await client.callTool({ name: 'probe__echo_env', arguments: {} });
    const pid = first._meta?.details?.upstream?.pid;
    assert.ok(pid > 0);
    const started = join(ws, 'hang2.started');
    const call = client.callTool({ name: 'probe__hang', arguments: { started } });
    await waitFor(() => existsSync(started), 5_000, 'the upstream to receive the call');
    process.kill(pid, 'SIGKILL');
    const r = await call;
    assert.equal(r.isError, true, text(r));
    assert.match(text(r), /probe/);
    assert.match(text(r), /restart/i);
    let again;
    await waitFor(async () => {
      again = await client.callTool({ name: 'probe__echo_env', arguments: {} });
      return !again.isError;
    }, 5_000, 'the restarted upstream to answer');
    assert.notEqual(again._meta.details.upstream.pid, pid);

    // A second crash soon after: the restart backs off (1 s) and says so.
    const pid2 = again._meta.details.upstream.pid;
    process.kill(pid2, 'SIGKILL');
    await waitFor(() => !alive(pid2), 3_000, 'the upstream to die again');
    let waiting;
    await waitFor(async () => {
      waiting = await client.callTool({ name: 'probe__echo_env', arguments: {} });
      return waiting.isError;
    }, 2_000, 'a call to notice the second crash');
    const t0 = Date.now();
    assert.match(text(waiting), /unavailable|did not answer/i);
    let back;
    await waitFor(async () => {
      back = await client.callTool({ name: 'probe__echo_env', arguments: {} });
      return !back.isError;
    }, 5_000, 'the second restart');
    assert.ok(Date.now() - t0 >= 500, `restarted after ${Date.now() - t0} ms: backoff`);
  });
});

describe('upstream server-filesystem: mcpServers shape and server-wide rules', () => {
  function fsWorkspace(perms) {
    const ws = tempDir('agentls-audit-fs-');
    mkdirSync(join(ws, '.agentls'), { recursive: true });
    writeFileSync(join(ws, '.agentls', 'mcp.json'), JSON.stringify({
      mcpServers: { filesystem: { command: process.execPath, args: [filesystemServer, '${workspaceFolder}'] } },
    }));
    settings(ws, { permissions: perms });
    writeFileSync(join(ws, 'notes.txt'), `TOKEN=${secret}\nhello\n`);
    return ws;
  }

  test('mcpServers: tool_search finds read_text_file; deny mcp__<server>__<tool> blocks only that tool', async () => {
    const ws = fsWorkspace({ allow: ['mcp__filesystem'], deny: ['mcp__filesystem__write_file'] });
    const c = await open({ args: ['--root', ws] });
    const s = await c.callTool({ name: 'tool_search', arguments: { query: 'read text file' } });
    assert.match(text(s), /filesystem__read_text_file/);
    const rd = await c.callTool({ name: 'filesystem__read_text_file', arguments: { path: join(ws, 'notes.txt') } });
    assert.equal(rd.isError ?? false, false, text(rd));
    assert.match(text(rd), /hello/);
    assert.ok(!text(rd).includes(secret));
    const w = await c.callTool({ name: 'filesystem__write_file', arguments: { path: join(ws, 'w.txt'), content: 'x' } });
    assert.equal(w.isError, true);
    assert.match(text(w), /mcp__filesystem__write_file/, 'the denial names the rule');
    assert.ok(!existsSync(join(ws, 'w.txt')));
    const mk = await c.callTool({ name: 'filesystem__create_directory', arguments: { path: join(ws, 'made') } });
    assert.equal(mk.isError ?? false, false, 'the server-wide allow lets other writes through: ' + text(mk));
    assert.ok(existsSync(join(ws, 'made')));
  });

  test('deny mcp__<server> blocks every tool of that server', async () => {
    const ws = fsWorkspace({ deny: ['mcp__filesystem'] });
    const c = await open({ args: ['--root', ws] });
    for (const [name, args] of [['filesystem__read_text_file', { path: join(ws, 'notes.txt') }], ['filesystem__list_directory', { path: ws }]]) {
      const r = await c.callTool({ name, arguments: args });
      assert.equal(r.isError, true, name);
      assert.match(text(r), /mcp__filesystem\b/, `${name}: the denial names the rule: ${text(r)}`);
      assert.doesNotMatch(text(r), /hello/);
    }
  });
});
