// Contract tests of issue 9 (`agentls mcp` and upstream MCP
// servers) through the official TypeScript SDK client. Written from
// docs/tools.md, docs/protocol.md, docs/protocol.md "agentls mcp", docs/tools.md
// "Upstream MCP servers" and the acceptance list only.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import Ajv2020 from 'ajv/dist/2020.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { agentlsBin, alive, connect, filesystemServer, sleep, tempDir, text, waitFor } from './helpers.mjs';

const UP_CORE = ['read', 'ls', 'grep', 'find', 'edit', 'write', 'bash', 'tool_search'];
const UP_HINTS = ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'];
// A 1x1 PNG.
const UP_PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==',
  'base64',
);

// upTemp makes a temp folder that is removed when the file's tests end.
const upDirs = [];
function upTemp(prefix) {
  const d = tempDir(prefix);
  upDirs.push(d);
  return d;
}
after(() => {
  for (const d of upDirs) rmSync(d, { recursive: true, force: true });
});

// upWorkspace makes a temp folder holding files ({relative path: text|Buffer}).
function upWorkspace(files = {}) {
  const ws = upTemp('upstream-ws-');
  for (const [rel, body] of Object.entries(files)) {
    const p = join(ws, rel);
    mkdirSync(dirname(p), { recursive: true });
    writeFileSync(p, body);
  }
  return ws;
}

// upConnect isolates the user config dir and the audit log from the
// machine's (so ~/.config/agentls/mcp.json cannot add servers).
async function upConnect(opts = {}) {
  const env = {
    XDG_CONFIG_HOME: opts.configHome ?? upTemp('upstream-cfg-'),
    AGENTLS_AUDIT_DIR: opts.auditDir ?? upTemp('upstream-audit-'),
    ...(opts.env ?? {}),
  };
  return connect({ ...opts, env });
}

// upToken builds a GitHub token at runtime so no secret sits in the source.
function upToken() {
  const alnum = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  let s = 'ghp_';
  for (let i = 0; i < 36; i++) s += alnum[(i * 7 + 3) % alnum.length];
  return s;
}

function upMcpJson(ws, shape = 'mcpServers', name = 'filesystem') {
  return JSON.stringify({ [shape]: { [name]: { command: process.execPath, args: [filesystemServer, ws] } } });
}

function upWriteMcp(ws, json) {
  mkdirSync(join(ws, '.agentls'), { recursive: true });
  writeFileSync(join(ws, '.agentls', 'mcp.json'), json);
}

// upProcs lists the pids whose command line contains every needle.
function upProcs(...needles) {
  const out = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d) || Number(d) === process.pid) continue;
    let cl;
    try {
      cl = readFileSync(`/proc/${d}/cmdline`, 'utf8');
    } catch {
      continue;
    }
    if (needles.every((n) => cl.includes(n))) out.push(Number(d));
  }
  return out;
}

function upWatchListChanged(client) {
  const seen = { count: 0 };
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
    seen.count++;
  });
  return seen;
}

async function upClose(client) {
  await client?.close().catch(() => {});
}

// ---------------------------------------------------------------- initialize

test('initialize: serverInfo, tools capability with listChanged, instructions', async () => {
  const ws = upWorkspace({ 'a.txt': 'x\n' });
  const c = await upConnect({ args: ['--root', ws] });
  try {
    const info = c.getServerVersion();
    assert.equal(info.name, 'agentls');
    assert.match(info.version, /\S/);
    const caps = c.getServerCapabilities();
    assert.ok(caps.tools, `no tools capability: ${JSON.stringify(caps)}`);
    assert.equal(caps.tools.listChanged, true, 'tools.listChanged must be declared: tool_search sends list_changed');
    const ins = c.getInstructions() ?? '';
    // docs/tools.md "Instructions for the model", item by item.
    assert.match(ins, /read (a|the) file before edit/i, ins);
    assert.match(ins, /search when a path is unknown/i, ins);
    assert.match(ins, /never guess file contents/i, ins);
    assert.match(ins, /prefer these tools over shell equivalents/i, ins);
    for (const cmd of ['cat', 'grep', 'find']) assert.match(ins, new RegExp(`\\b${cmd}\\b`), `instructions name ${cmd}`);
    assert.match(ins, /oldText small but unique/i, ins);
  } finally {
    await upClose(c);
  }
});

// ---------------------------------------------------------------- tools/list

test('tools/list: every tool has four boolean hints matching docs/tools.md labels', async () => {
  const ws = upWorkspace();
  const c = await upConnect({ args: ['--root', ws] });
  try {
    const { tools } = await c.listTools();
    const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
    for (const n of UP_CORE) assert.ok(byName[n], `core tool ${n} missing from tools/list: ${Object.keys(byName)}`);
    for (const t of tools) {
      for (const h of UP_HINTS) {
        assert.equal(typeof t.annotations?.[h], 'boolean', `${t.name}.annotations.${h}: ${JSON.stringify(t.annotations)}`);
      }
      assert.equal(typeof t._meta?.source, 'string', `${t.name} _meta.source (docs/protocol.md)`);
      assert.match(t.description ?? '', /\S/, `${t.name} has a description`);
    }
    for (const n of ['read', 'ls', 'grep', 'find']) {
      assert.equal(byName[n].annotations.readOnlyHint, true, `${n} readOnlyHint`);
      assert.equal(byName[n].annotations.destructiveHint, false, `${n} destructiveHint`);
    }
    for (const n of ['edit', 'write']) assert.equal(byName[n].annotations.readOnlyHint, false, `${n} readOnlyHint`);
    // bash's labels depend on the command: the static hints must be the safe side.
    assert.equal(byName.bash.annotations.readOnlyHint, false, 'bash readOnlyHint');
    assert.equal(byName.bash.annotations.destructiveHint, true, 'bash destructiveHint');
    assert.equal(byName.tool_search.annotations.readOnlyHint, true, 'tool_search readOnlyHint');
  } finally {
    await upClose(c);
  }
});

test('tools/list: every inputSchema compiles as JSON Schema, no $ref or type unions', async () => {
  const ws = upWorkspace();
  const c = await upConnect({ args: ['--root', ws] });
  try {
    const { tools } = await c.listTools();
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    for (const t of tools) {
      const s = t.inputSchema;
      assert.equal(s.type, 'object', `${t.name} inputSchema.type`);
      if (UP_CORE.includes(t.name)) assert.equal(typeof s.properties, 'object', `${t.name} has properties`);
      for (const r of s.required ?? []) assert.ok(r in (s.properties ?? {}), `${t.name}: required ${r} is not a property`);
      assert.ok(ajv.validateSchema(s), `${t.name} schema invalid: ${ajv.errorsText(ajv.errors)}`);
      ajv.compile(s);
      const raw = JSON.stringify(s);
      assert.ok(!raw.includes('"$ref"'), `${t.name} schema has $ref`);
      assert.ok(!/"type":\[/.test(raw), `${t.name} schema has a type union`);
    }
    const read = ajv.compile(tools.find((t) => t.name === 'read').inputSchema);
    assert.equal(read({ path: 'a.txt', offset: 2, limit: 10 }), true, 'read accepts {path, offset, limit}');
    assert.equal(read({ offset: 2 }), false, 'read requires path');
    const edit = ajv.compile(tools.find((t) => t.name === 'edit').inputSchema);
    assert.equal(edit({ path: 'a', edits: [{ oldText: 'x', newText: 'y' }] }), true, 'edit accepts {path, edits:[{oldText,newText}]}');
  } finally {
    await upClose(c);
  }
});

test('unknown tool name is an isError result naming the closest tool, not a protocol error', async () => {
  const ws = upWorkspace({ 'a.txt': 'x\n' });
  const c = await upConnect({ args: ['--root', ws] });
  try {
    const r = await c.callTool({ name: 'reed', arguments: { path: 'a.txt' } });
    assert.equal(r.isError, true);
    assert.match(text(r), /Did you mean "read"\?/, text(r));
    for (const n of UP_CORE) assert.match(text(r), new RegExp(`\\b${n}\\b`), `lists ${n}`);
  } finally {
    await upClose(c);
  }
});

// ---------------------------------------------------------------- read, grep, edit

test('read and grep through MCP: exact text, _meta.callId and _meta.details', async () => {
  const ws = upWorkspace({ 'a.txt': 'hello\nworld\n', 'sub/b.txt': 'no match\nworld peace\n' });
  const c = await upConnect({ args: ['--root', ws] });
  try {
    const r = await c.callTool({ name: 'read', arguments: { path: 'a.txt' } });
    assert.ok(!r.isError, text(r));
    assert.equal(text(r), 'a.txt, lines 1-2 of 2\n     1→hello\n     2→world');
    assert.equal(typeof r._meta?.callId, 'string', `_meta.callId: ${JSON.stringify(r._meta)}`);
    assert.equal(typeof r._meta?.details?.durationMs, 'number', `_meta.details.durationMs: ${JSON.stringify(r._meta)}`);
    const g = await c.callTool({ name: 'grep', arguments: { pattern: 'world' } });
    assert.ok(!g.isError, text(g));
    assert.equal(text(g).trimEnd(), 'a.txt:2: world\nsub/b.txt:2: world peace');
    assert.notEqual(g._meta.callId, r._meta.callId, 'each call has its own callId');
    const bad = await c.callTool({ name: 'grep', arguments: { pattern: '(' } });
    assert.equal(bad.isError, true, 'invalid regex is isError');
  } finally {
    await upClose(c);
  }
});

test('edit without a prior read fails telling the model to read first; file unchanged', async () => {
  const ws = upWorkspace({ 'a.txt': 'hello\nworld\n', '.agentls/settings.json': '{"mode": "acceptEdits"}' });
  const c = await upConnect({ args: ['--root', ws] });
  try {
    const r = await c.callTool({ name: 'edit', arguments: { path: 'a.txt', edits: [{ oldText: 'hello', newText: 'bye' }] } });
    assert.equal(r.isError, true, text(r));
    assert.match(text(r), /read a\.txt first/, text(r));
    assert.equal(readFileSync(join(ws, 'a.txt'), 'utf8'), 'hello\nworld\n');
  } finally {
    await upClose(c);
  }
});

test('read then edit changes the file; one-line result; diff details in _meta.details', async () => {
  const ws = upWorkspace({ 'a.txt': 'hello\nworld\n', '.agentls/settings.json': '{"mode": "acceptEdits"}' });
  const c = await upConnect({ args: ['--root', ws] });
  try {
    assert.ok(!(await c.callTool({ name: 'read', arguments: { path: 'a.txt', limit: 1 } })).isError);
    const r = await c.callTool({ name: 'edit', arguments: { path: 'a.txt', edits: [{ oldText: 'hello', newText: 'bye' }] } });
    assert.ok(!r.isError, text(r));
    assert.match(text(r), /^Edited a\.txt: 1 replacement, line 1\.?$/, text(r));
    assert.equal(readFileSync(join(ws, 'a.txt'), 'utf8'), 'bye\nworld\n');
    const d = r._meta?.details ?? {};
    assert.match(d.unifiedDiff ?? '', /^-hello\n\+bye$/m, `unifiedDiff: ${JSON.stringify(d)}`);
    assert.equal(d.firstChangedLine, 1);
    assert.equal(d.matchLevel, 'exact');
    assert.ok(Array.isArray(d.edits) && d.edits.length === 1, `edits: ${JSON.stringify(d.edits)}`);
    assert.deepEqual(d.edits[0].range, { start: { line: 0, character: 0 }, end: { line: 0, character: 5 } });
    assert.ok(d.oldHash && d.newHash && d.oldHash !== d.newHash, 'old and new hashes');
  } finally {
    await upClose(c);
  }
});

// ---------------------------------------------------------------- bash progress and cancel

test('bash with a progress token streams output as notifications/progress while running', async () => {
  const ws = upWorkspace();
  const c = await upConnect({ args: ['--root', ws] });
  try {
    const got = [];
    const r = await c.callTool(
      { name: 'bash', arguments: { command: 'echo tick1; sleep 0.6; echo tick2; sleep 0.6; echo tick3' } },
      undefined,
      { onprogress: (p) => got.push({ ...p, at: Date.now() }) },
    );
    const doneAt = Date.now();
    assert.ok(!r.isError, text(r));
    assert.equal(text(r), 'tick1\ntick2\ntick3');
    assert.ok(got.length >= 2, `progress notifications: ${JSON.stringify(got)}`);
    const early = got.find((p) => /tick1/.test(p.message ?? '') && !/tick3/.test(p.message ?? ''));
    assert.ok(early, `a progress message carried tick1 before tick3 was printed: ${JSON.stringify(got)}`);
    assert.ok(doneAt - early.at >= 500, `tick1 progress arrived ${doneAt - early.at} ms before the result (while running)`);
    for (let i = 1; i < got.length; i++) assert.ok(got[i].progress > got[i - 1].progress, 'progress increases (MCP)');
  } finally {
    await upClose(c);
  }
});

test('bash progress: at most one notification per 50 ms', async () => {
  const ws = upWorkspace();
  const c = await upConnect({ args: ['--root', ws] });
  try {
    const got = [];
    const t0 = Date.now();
    const r = await c.callTool(
      { name: 'bash', arguments: { command: 'for i in $(seq 1 60); do echo line$i; sleep 0.01; done' } },
      undefined,
      { onprogress: (p) => got.push(p) },
    );
    const elapsed = Date.now() - t0;
    assert.ok(!r.isError, text(r));
    assert.ok(got.length >= 1, 'some progress');
    assert.ok(got.length <= Math.floor(elapsed / 50) + 2, `${got.length} notifications in ${elapsed} ms`);
  } finally {
    await upClose(c);
  }
});

test('cancelling bash `sleep 100` kills it, sends no response, and the session goes on', async () => {
  const ws = upWorkspace({ 'a.txt': 'x\n' });
  const c = await upConnect({ args: ['--root', ws] });
  const errors = [];
  c.onerror = (e) => errors.push(String(e?.message ?? e));
  const nonce = `100.${String(process.pid).padStart(6, '0')}${Date.now() % 1000}`;
  try {
    const ac = new AbortController();
    const call = c.callTool({ name: 'bash', arguments: { command: `sleep ${nonce}; echo up-after` } }, undefined, {
      signal: ac.signal,
    });
    call.catch(() => {});
    await waitFor(() => upProcs('sleep', nonce).length > 0, 5000, 'sleep to start');
    const t0 = Date.now();
    ac.abort();
    await assert.rejects(call);
    await waitFor(() => upProcs(nonce).length === 0, 5000, 'no process with the marker left');
    assert.ok(Date.now() - t0 < 5000);
    await c.ping();
    const r = await c.callTool({ name: 'read', arguments: { path: 'a.txt' } });
    assert.ok(!r.isError, text(r));
    await sleep(200);
    assert.deepEqual(errors.filter((e) => /unknown message ID/.test(e)), [], 'no response for a cancelled request (MCP)');
  } finally {
    await upClose(c);
  }
});

// ---------------------------------------------------------------- roots

test('roots define the workspace over --root; a path outside is refused', async () => {
  const A = upWorkspace({ 'ina.txt': 'in a\n' });
  const B = upWorkspace({ 'inb.txt': 'in b\n' });
  const c = await upConnect({ roots: [A], args: ['--root', B] });
  try {
    for (const p of [join(A, 'ina.txt'), 'ina.txt']) {
      const r = await c.callTool({ name: 'read', arguments: { path: p } });
      assert.ok(!r.isError, `${p}: ${text(r)}`);
      assert.match(text(r), /1→in a/);
    }
    for (const p of [join(B, 'inb.txt'), '/etc/hostname', '../x']) {
      const r = await c.callTool({ name: 'read', arguments: { path: p } });
      assert.equal(r.isError, true, `${p} must be refused: ${text(r)}`);
      assert.match(text(r), /(outside|out of) the workspace/, text(r));
    }
  } finally {
    await upClose(c);
  }
});

test('roots/list_changed moves the workspace and its settings', async () => {
  const A = upWorkspace({ 'ina.txt': 'in a\n', 'denied.txt': 'a side\n' });
  const B = upWorkspace({
    'inb.txt': 'in b\n',
    'denied.txt': 'b side\n',
    '.agentls/settings.json': '{"permissions": {"deny": ["Read(denied.txt)"]}}',
  });
  const roots = [A];
  const c = await upConnect({ roots });
  try {
    assert.ok(!(await c.callTool({ name: 'read', arguments: { path: 'denied.txt' } })).isError, 'A has no deny rule');
    roots.splice(0, roots.length, B);
    await c.sendRootsListChanged();
    let r;
    await waitFor(
      async () => !(r = await c.callTool({ name: 'read', arguments: { path: join(B, 'inb.txt') } })).isError,
      5000,
      'the new root to be readable',
    );
    assert.match(text(r), /1→in b/);
    r = await c.callTool({ name: 'read', arguments: { path: 'inb.txt' } });
    assert.ok(!r.isError, `relative paths resolve in the new root: ${text(r)}`);
    r = await c.callTool({ name: 'read', arguments: { path: join(A, 'ina.txt') } });
    assert.equal(r.isError, true, `old root refused: ${text(r)}`);
    assert.match(text(r), /outside the workspace/);
    r = await c.callTool({ name: 'read', arguments: { path: 'denied.txt' } });
    assert.equal(r.isError, true, `the new folder's settings apply: ${text(r)}`);
    assert.match(text(r), /Read\(denied\.txt\)/, text(r));
  } finally {
    await upClose(c);
  }
});

test('without roots or --root the working directory is the workspace', async () => {
  const ws = upWorkspace({ 'here.txt': 'cwd file\n' });
  const c = await upConnect({ cwd: ws });
  try {
    const r = await c.callTool({ name: 'read', arguments: { path: 'here.txt' } });
    assert.ok(!r.isError, text(r));
    assert.match(text(r), /1→cwd file/);
  } finally {
    await upClose(c);
  }
});

// ---------------------------------------------------------------- images

test('a PNG read is MCP image content with image/png and base64 data', async () => {
  const ws = upWorkspace({ 'p.png': UP_PNG });
  const c = await upConnect({ args: ['--root', ws] });
  try {
    const r = await c.callTool({ name: 'read', arguments: { path: 'p.png' } });
    assert.ok(!r.isError, text(r));
    const img = r.content.filter((p) => p.type === 'image');
    assert.equal(img.length, 1, JSON.stringify(r.content));
    assert.equal(img[0].mimeType, 'image/png');
    assert.equal(img[0].data, UP_PNG.toString('base64'));
  } finally {
    await upClose(c);
  }
});

// ---------------------------------------------------------------- ask decisions

const UP_ASK = '{"permissions": {"ask": ["Bash(touch:*)"]}}';

test('ask with elicitation: the form, and accept allowOnce runs the call', async () => {
  const ws = upWorkspace({ '.agentls/settings.json': UP_ASK });
  const c = await upConnect({ args: ['--root', ws], answer: () => ({ action: 'accept', content: { decision: 'allowOnce' } }) });
  try {
    const r = await c.callTool({ name: 'bash', arguments: { command: 'touch made1' } });
    assert.ok(!r.isError, text(r));
    assert.ok(existsSync(join(ws, 'made1')), 'the approved command ran');
    assert.equal(c.asked.length, 1, JSON.stringify(c.asked));
    const q = c.asked[0];
    assert.match(q.message, /Bash\(touch:\*\)/, `the question names the rule: ${q.message}`);
    const s = q.requestedSchema;
    assert.deepEqual(s.required, ['decision']);
    assert.deepEqual(s.properties.decision.oneOf.map((o) => o.const).sort(), ['allowAlways', 'allowOnce', 'rejectAlways', 'rejectOnce']);
    assert.equal(s.properties.message, undefined, 'no optional field stands before submitting');
    // allowOnce does not carry over.
    const r2 = await c.callTool({ name: 'bash', arguments: { command: 'touch made1' } });
    assert.ok(!r2.isError, text(r2));
    assert.equal(c.asked.length, 2, 'allowOnce asks again next time');
  } finally {
    await upClose(c);
  }
});

test('ask with elicitation: decline, cancel and rejectOnce refuse, each saying what happened', async () => {
  const ws = upWorkspace({ '.agentls/settings.json': UP_ASK });
  let answer;
  const c = await upConnect({ args: ['--root', ws], answer: () => answer });
  try {
    const cases = [
      { name: 'decline', answer: { action: 'decline' }, want: /the MCP host declined the question/ },
      { name: 'cancel', answer: { action: 'cancel' }, want: /the MCP host could not ask the user/ },
      { name: 'rejectOnce', answer: { action: 'accept', content: { decision: 'rejectOnce' } }, want: /^denied by the user$/ },
    ];
    for (const tc of cases) {
      answer = tc.answer;
      const f = `no-${tc.name}`;
      const r = await c.callTool({ name: 'bash', arguments: { command: `touch ${f}` } });
      assert.equal(r.isError, true, `${tc.name}: ${text(r)}`);
      assert.match(text(r), tc.want, `${tc.name}: ${text(r)}`);
      assert.ok(!existsSync(join(ws, f)), `${tc.name}: nothing ran`);
    }
  } finally {
    await upClose(c);
  }
});

// An explicit ask rule ranks above session allow rules (docs/tools.md
// evaluation order), so allowAlways is tried on a chosen mode's ask (the
// default mode's is left to the MCP host).
test('ask with elicitation: allowAlways covers the same command only', async () => {
  const ws = upWorkspace();
  const c = await upConnect({ args: ['--root', ws, '--mode', 'acceptEdits'], answer: () => ({ action: 'accept', content: { decision: 'allowAlways' } }) });
  try {
    assert.ok(!(await c.callTool({ name: 'bash', arguments: { command: 'touch k1' } })).isError);
    assert.ok(!(await c.callTool({ name: 'bash', arguments: { command: 'touch k1' } })).isError);
    assert.equal(c.asked.length, 1, 'the same command is not asked again');
    assert.ok(!(await c.callTool({ name: 'bash', arguments: { command: 'touch k2' } })).isError);
    assert.equal(c.asked.length, 2, 'another command is asked');
  } finally {
    await upClose(c);
  }
});

test('ask without elicitation: isError saying the host could not ask, not "denied by the user"', async () => {
  const ws = upWorkspace({ '.agentls/settings.json': UP_ASK });
  const c = await upConnect({ args: ['--root', ws] });
  try {
    const r = await c.callTool({ name: 'bash', arguments: { command: 'touch nope' } });
    assert.equal(r.isError, true, text(r));
    assert.match(text(r), /the MCP host could not ask the user/, text(r));
    assert.doesNotMatch(text(r), /denied by the user/, text(r));
    assert.match(text(r), /Bash\(touch:\*\)/, 'names the rule that asked');
    assert.ok(!existsSync(join(ws, 'nope')), 'nothing ran');
  } finally {
    await upClose(c);
  }
});

// ---------------------------------------------------------------- aggregation

test('aggregation: tool_search finds filesystem__read_text_file, activates it, list_changed is sent', async () => {
  const ws = upWorkspace({ 'a.txt': 'x\n' });
  upWriteMcp(ws, upMcpJson(ws));
  const c = await upConnect({ args: ['--root', ws] });
  try {
    const before = (await c.listTools()).tools.map((t) => t.name);
    assert.ok(!before.includes('filesystem__read_text_file'), `deferred before tool_search: ${before}`);
    const seen = upWatchListChanged(c);
    const r = await c.callTool({ name: 'tool_search', arguments: { query: 'read text file' } });
    assert.ok(!r.isError, text(r));
    assert.match(text(r), /## filesystem__read_text_file\n/, text(r).slice(0, 500));
    await waitFor(() => seen.count > 0, 5000, 'notifications/tools/list_changed');
    const after = (await c.listTools()).tools;
    const t = after.find((x) => x.name === 'filesystem__read_text_file');
    assert.ok(t, `in tools/list after tool_search: ${after.map((x) => x.name)}`);
    assert.equal(t.annotations?.readOnlyHint, true, `upstream readOnlyHint kept: ${JSON.stringify(t.annotations)}`);
    for (const h of UP_HINTS) assert.equal(typeof t.annotations?.[h], 'boolean', `${h}`);
    assert.equal(t._meta?.source, 'mcp:filesystem');
  } finally {
    await upClose(c);
  }
});

test('aggregation: calling a deferred upstream tool by name activates it', async () => {
  const ws = upWorkspace({ 'a.txt': 'x\n' });
  upWriteMcp(ws, upMcpJson(ws, 'servers'));
  const c = await upConnect({ args: ['--root', ws] });
  try {
    await c.listTools();
    const seen = upWatchListChanged(c);
    const r = await c.callTool({ name: 'filesystem__list_directory', arguments: { path: ws } });
    assert.ok(!r.isError, text(r));
    assert.match(text(r), /a\.txt/);
    await waitFor(() => seen.count > 0, 5000, 'notifications/tools/list_changed');
    assert.ok((await c.listTools()).tools.some((t) => t.name === 'filesystem__list_directory'));
  } finally {
    await upClose(c);
  }
});

test('aggregation: read_text_file through agentls masks a planted secret everywhere', async () => {
  const tok = upToken();
  const ws = upWorkspace({ 'secret.txt': `token=${tok}\nplain line\n` });
  upWriteMcp(ws, upMcpJson(ws));
  const c = await upConnect({ args: ['--root', ws] });
  try {
    await c.callTool({ name: 'tool_search', arguments: { query: 'read text file' } });
    const r = await c.callTool({ name: 'filesystem__read_text_file', arguments: { path: join(ws, 'secret.txt') } });
    assert.ok(!r.isError, text(r));
    assert.match(text(r), /^token=\[REDACTED:github-token\]\nplain line\n?$/, text(r));
    assert.ok(!JSON.stringify(r).includes(tok), `the token leaks somewhere in the result: ${JSON.stringify(r)}`);
    assert.ok(!JSON.stringify(r).includes(tok.slice(4, 20)), 'no part of the token leaks');
  } finally {
    await upClose(c);
  }
});

test('aggregation: deny mcp__filesystem__write_file blocks writes (nothing written, audited masked)', async () => {
  const tok = upToken();
  const ws = upWorkspace({ '.agentls/settings.json': '{"mode": "acceptEdits", "permissions": {"deny": ["mcp__filesystem__write_file"]}}' });
  upWriteMcp(ws, upMcpJson(ws));
  const auditDir = upTemp('upstream-audit-');
  const c = await upConnect({ args: ['--root', ws], auditDir, answer: () => ({ action: 'accept', content: { decision: 'allowOnce' } }) });
  try {
    const r = await c.callTool({ name: 'filesystem__write_file', arguments: { path: join(ws, 'w.txt'), content: `k=${tok}\n` } });
    assert.equal(r.isError, true, text(r));
    assert.match(text(r), /denied by the rule mcp__filesystem__write_file/, text(r));
    assert.equal(c.asked.length, 0, 'a deny rule is not asked');
    assert.ok(!existsSync(join(ws, 'w.txt')), 'nothing written');
    // Other tools of the server are not affected by the tool rule.
    const ok = await c.callTool({ name: 'filesystem__list_allowed_directories', arguments: {} });
    assert.ok(!ok.isError, text(ok));
    await upClose(c);
    const lines = readdirSync(auditDir, { recursive: true })
      .filter((f) => f.endsWith('.jsonl'))
      .flatMap((f) => readFileSync(join(auditDir, f), 'utf8').trim().split('\n'))
      .map((l) => JSON.parse(l));
    const e = lines.find((l) => l.tool === 'filesystem__write_file');
    assert.ok(e, `audit entry for the denied upstream call: ${JSON.stringify(lines)}`);
    assert.equal(e.decision, 'deny');
    assert.ok(!JSON.stringify(e).includes(tok), 'audit arguments are masked');
  } finally {
    await upClose(c);
  }
});

test('aggregation: a server-wide deny mcp__filesystem blocks its read tools too', async () => {
  const ws = upWorkspace({ 'a.txt': 'x\n', '.agentls/settings.json': '{"permissions": {"deny": ["mcp__filesystem"]}}' });
  upWriteMcp(ws, upMcpJson(ws));
  const c = await upConnect({ args: ['--root', ws] });
  try {
    const r = await c.callTool({ name: 'filesystem__read_text_file', arguments: { path: join(ws, 'a.txt') } });
    assert.equal(r.isError, true, text(r));
    assert.match(text(r), /denied by the rule mcp__filesystem\b/, text(r));
  } finally {
    await upClose(c);
  }
});

test('aggregation: an upstream result over the budget is cut with a spill file read can open', async () => {
  let big = '';
  for (let i = 1; i <= 3000; i++) big += `line ${i} ${'x'.repeat(40)}\n`;
  const ws = upWorkspace({ 'big.txt': big });
  upWriteMcp(ws, upMcpJson(ws));
  const c = await upConnect({ args: ['--root', ws] });
  try {
    const r = await c.callTool({ name: 'filesystem__read_text_file', arguments: { path: join(ws, 'big.txt') } });
    assert.ok(!r.isError, text(r).slice(-300));
    const t = text(r);
    assert.ok(Buffer.byteLength(t) < big.length, 'cut');
    const m = /showing lines 1-(\d+) of (\d+)\b.*read \{"path": "([^"]+)", "offset": (\d+)\}/s.exec(t);
    assert.ok(m, `notice: ${t.slice(-500)}`);
    assert.equal(Number(m[4]), Number(m[1]) + 1, 'continue right after the shown lines');
    const s = await c.callTool({ name: 'read', arguments: { path: m[3], offset: Number(m[4]), limit: 1 } });
    assert.ok(!s.isError, text(s));
    assert.match(text(s), new RegExp(`→line ${m[4]} x`), text(s));
    // The spill holds exactly the upstream text: its last line is line 3000.
    const end = await c.callTool({ name: 'read', arguments: { path: m[3], offset: 2999 } });
    assert.match(text(end), /, lines 2999-3000 of 3000\n/, `spill file: ${text(end).slice(0, 300)}`);
    const bytes = /\((\d+) of (\d+) bytes\)/.exec(t);
    assert.deepEqual(
      [Number(m[2]), Number(bytes?.[2])],
      [3000, Buffer.byteLength(big)],
      `the upstream text has 3000 lines and ${Buffer.byteLength(big)} bytes: ${t.slice(-420)}`,
    );
  } finally {
    await upClose(c);
  }
});

test('aggregation: the user config dir mcp.json declares servers too; upstream stderr goes to the log', async () => {
  const ws = upWorkspace({ 'a.txt': 'from user server\n' });
  const configHome = upTemp('upstream-cfg-');
  mkdirSync(join(configHome, 'agentls'));
  writeFileSync(join(configHome, 'agentls', 'mcp.json'), upMcpJson(ws, 'mcpServers', 'userfs'));
  const c = await upConnect({ args: ['--root', ws], configHome });
  try {
    const s = await c.callTool({ name: 'tool_search', arguments: { query: 'read text file' } });
    assert.match(text(s), /## userfs__read_text_file\n/, text(s).slice(0, 300));
    const r = await c.callTool({ name: 'userfs__read_text_file', arguments: { path: join(ws, 'a.txt') } });
    assert.equal(text(r), 'from user server\n');
    await waitFor(() => /Secure MCP Filesystem Server running on stdio/.test(c.stderrText()), 5000, 'upstream stderr in the log');
  } finally {
    await upClose(c);
  }
});

test('aggregation: killing the upstream mid-call gives a clear error; a later call works after restart', async () => {
  const ws = upWorkspace({ 'a.txt': 'hello upstream\n' });
  upWriteMcp(ws, upMcpJson(ws, 'servers'));
  execFileSync('mkfifo', [join(ws, 'fifo')]);
  const c = await upConnect({ args: ['--root', ws] });
  try {
    const first = await c.callTool({ name: 'filesystem__read_text_file', arguments: { path: join(ws, 'a.txt') } });
    assert.equal(text(first), 'hello upstream\n');
    const [pid] = upProcs(filesystemServer, ws);
    assert.ok(pid, 'upstream process found by its command line');
    // A read of a FIFO blocks in the upstream: the call is in flight when it dies.
    const inflight = c.callTool({ name: 'filesystem__read_text_file', arguments: { path: join(ws, 'fifo') } });
    await sleep(300);
    process.kill(pid, 'SIGKILL');
    const r = await inflight;
    assert.equal(r.isError, true, text(r));
    assert.match(
      text(r),
      /^filesystem__read_text_file failed: the MCP server "filesystem" did not answer \(.*\)\. It is restarted automatically; call again shortly\.$/,
      text(r),
    );
    const deadline = Date.now() + 15000;
    let last;
    for (;;) {
      last = await c.callTool({ name: 'filesystem__read_text_file', arguments: { path: join(ws, 'a.txt') } });
      if (!last.isError) break;
      assert.match(text(last), /filesystem__read_text_file is unavailable: MCP server "filesystem" .*restarting in/, text(last));
      assert.ok(Date.now() < deadline, `not back after 15 s: ${text(last)}`);
      await sleep(100);
    }
    assert.equal(text(last), 'hello upstream\n');
    const now = upProcs(filesystemServer, ws);
    assert.ok(now.length === 1 && now[0] !== pid && !alive(pid), `restarted: old ${pid}, now ${now}`);
  } finally {
    await upClose(c);
  }
});

test('aggregation: killing an idle upstream: clear error or success on the next calls, then it works', async () => {
  const ws = upWorkspace({ 'a.txt': 'idle kill\n' });
  upWriteMcp(ws, upMcpJson(ws));
  const c = await upConnect({ args: ['--root', ws] });
  try {
    assert.equal(text(await c.callTool({ name: 'filesystem__read_text_file', arguments: { path: join(ws, 'a.txt') } })), 'idle kill\n');
    const [pid] = upProcs(filesystemServer, ws);
    assert.ok(pid);
    process.kill(pid, 'SIGKILL');
    await waitFor(() => !alive(pid), 3000, 'upstream gone');
    const deadline = Date.now() + 15000;
    let r;
    for (;;) {
      r = await c.callTool({ name: 'filesystem__read_text_file', arguments: { path: join(ws, 'a.txt') } });
      if (!r.isError) break;
      assert.match(text(r), /MCP server "filesystem" .*(did not answer|restarting in)/, text(r));
      assert.ok(Date.now() < deadline, `not back after 15 s: ${text(r)}`);
      await sleep(100);
    }
    assert.equal(text(r), 'idle kill\n');
  } finally {
    await upClose(c);
  }
});

// ---------------------------------------------------------------- ending, editor protocol

test('closing the client ends agentls, its running command and its upstream servers', async () => {
  const ws = upWorkspace({ 'a.txt': 'x\n' });
  upWriteMcp(ws, upMcpJson(ws));
  const c = await upConnect({ args: ['--root', ws] });
  const nonce = `100.${String(process.pid).padStart(6, '0')}${(Date.now() % 1000) + 1000}`;
  const agentlsPid = c.transport?.pid;
  try {
    assert.ok(agentlsPid, 'agentls pid');
    assert.ok(!(await c.callTool({ name: 'filesystem__list_allowed_directories', arguments: {} })).isError);
    const [up] = upProcs(filesystemServer, ws);
    assert.ok(up, 'upstream running');
    const call = c.callTool({ name: 'bash', arguments: { command: `sleep ${nonce}; echo up-after` } });
    call.catch(() => {});
    await waitFor(() => upProcs('sleep', nonce).length > 0, 5000, 'sleep to start');
    await c.close();
    await waitFor(() => !alive(agentlsPid), 5000, 'agentls to exit');
    await waitFor(() => upProcs(nonce).length === 0, 5000, 'the command to be killed');
    await waitFor(() => !alive(up), 5000, 'the upstream server to stop');
  } finally {
    await upClose(c);
  }
});

// upLsp speaks the editor protocol (LSP framing) to a plain `agentls`.
function upLsp(ws, env) {
  const p = spawn(agentlsBin(), [], { env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
  p.stderr.on('data', () => {});
  let buf = Buffer.alloc(0);
  let next = 0;
  const pending = new Map();
  const notes = [];
  const send = (m) => {
    const b = Buffer.from(JSON.stringify({ jsonrpc: '2.0', ...m }));
    p.stdin.write(`Content-Length: ${b.length}\r\n\r\n`);
    p.stdin.write(b);
  };
  p.stdout.on('data', (d) => {
    buf = Buffer.concat([buf, d]);
    for (;;) {
      const h = buf.indexOf('\r\n\r\n');
      if (h < 0) return;
      const len = Number(/Content-Length: *(\d+)/i.exec(buf.subarray(0, h).toString())?.[1]);
      if (buf.length < h + 4 + len) return;
      const msg = JSON.parse(buf.subarray(h + 4, h + 4 + len).toString());
      buf = buf.subarray(h + 4 + len);
      if (msg.method && msg.id !== undefined) send({ id: msg.id, error: { code: -32601, message: 'not supported' } });
      else if (msg.method) notes.push(msg);
      else pending.get(msg.id)?.(msg);
    }
  });
  return {
    proc: p,
    notes,
    call(method, params) {
      const id = ++next;
      return new Promise((res) => {
        pending.set(id, res);
        send({ id, method, params });
      });
    },
    notify(method, params) {
      send({ method, params });
    },
  };
}

test('editor protocol: upstream tools appear in tools/list after tool_search, masked', async () => {
  const tok = upToken();
  const ws = upWorkspace({ 'secret.txt': `key ${tok}\n` });
  upWriteMcp(ws, upMcpJson(ws));
  const lsp = upLsp(ws, { XDG_CONFIG_HOME: upTemp('upstream-cfg-'), AGENTLS_AUDIT_DIR: upTemp('upstream-audit-') });
  try {
    const init = await lsp.call('initialize', { processId: null, rootUri: pathToFileURL(ws).href, capabilities: {} });
    assert.ok(init.result, JSON.stringify(init));
    lsp.notify('initialized', {});
    const before = (await lsp.call('tools/list', {})).result.tools.map((t) => t.name);
    assert.ok(!before.includes('filesystem__read_text_file'), `deferred: ${before}`);
    const s = await lsp.call('tools/call', { name: 'tool_search', arguments: { query: 'read text file' } });
    assert.match(text(s.result), /## filesystem__read_text_file\n/, JSON.stringify(s).slice(0, 400));
    await waitFor(() => lsp.notes.some((n) => n.method === 'tools/listChanged'), 5000, 'tools/listChanged');
    const after = (await lsp.call('tools/list', {})).result.tools.map((t) => t.name);
    assert.ok(after.includes('filesystem__read_text_file'), `after tool_search: ${after}`);
    const r = await lsp.call('tools/call', { name: 'filesystem__read_text_file', arguments: { path: join(ws, 'secret.txt') } });
    assert.ok(!r.result.isError, JSON.stringify(r));
    assert.equal(text(r.result), 'key [REDACTED:github-token]\n');
    await lsp.call('shutdown', null);
    lsp.notify('exit', null);
  } finally {
    if (alive(lsp.proc.pid)) lsp.proc.kill('SIGKILL');
  }
});
