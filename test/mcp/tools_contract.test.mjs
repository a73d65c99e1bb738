// Contract tests of `agentls mcp` (issue 9) with the official
// TypeScript MCP SDK client as the peer. Written from the contract
// (docs/tools.md, docs/protocol.md, the issue text), not from the implementation.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { writeFileSync, mkdirSync, existsSync, readFileSync, readdirSync, mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { CallToolResultSchema, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import Ajv2020 from 'ajv/dist/2020.js';
import { connect, text, tempDir, filesystemServer, alive, waitFor, agentlsBin, here } from './helpers.mjs';

const CORE = ['bash', 'edit', 'find', 'grep', 'ls', 'read', 'tool_search', 'write'];
const HINTS = ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'];
// A GitHub token shape no masker allowlists (unlike AWS's documented example key).
const GH_TOKEN = 'ghp_' + 'Zq3x9Lk2Vb7Nm4Pw8Rt6Ys1Uc5Hd0Jf2Ge4A';
// A 1x1 transparent PNG.
const PNG_1x1 = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=',
  'base64',
);

before(() => {
  if (process.env.AGENTLS_BIN) return;
  const out = mkdtempSync(join(tmpdir(), 'contract-bin-'));
  execFileSync('go', ['build', '-o', join(out, 'agentls'), './cmd/agentls'], {
    cwd: join(here, '..', '..'),
    env: { ...process.env, CGO_ENABLED: '0' },
    stdio: 'inherit',
  });
  process.env.AGENTLS_BIN = join(out, 'agentls');
});

// contractWorkspace makes a temp folder with the given files (path → string|Buffer).
function contractWorkspace(files = {}, prefix = 'contract-') {
  const dir = tempDir(prefix);
  for (const [p, body] of Object.entries(files)) {
    const full = join(dir, p);
    mkdirSync(join(full, '..'), { recursive: true });
    writeFileSync(full, body);
  }
  return dir;
}

// contractConnect is the shared connect() (elicitation through opts.answer).
const contractConnect = (opts = {}) => connect({ name: 'contract', ...opts });

// contractSettings writes .agentls/settings.json into dir.
function contractSettings(dir, settings) {
  mkdirSync(join(dir, '.agentls'), { recursive: true });
  writeFileSync(join(dir, '.agentls', 'settings.json'), JSON.stringify(settings));
}

async function contractWith(client, fn) {
  try {
    return await fn(client);
  } finally {
    await client.close();
  }
}

// ---------------------------------------------------------------- server

test('initialize: serverInfo, tools capability with listChanged, instructions', async () => {
  const ws = contractWorkspace({ 'a.txt': 'x\n' });
  await contractWith(await connect({ args: ['--root', ws] }), async (c) => {
    assert.equal(c.getServerVersion()?.name, 'agentls');
    assert.equal(c.getServerCapabilities()?.tools?.listChanged, true);
    const ins = c.getInstructions() ?? '';
    // docs/tools.md: read before editing; search when a path is unknown; never guess;
    // prefer these tools over cat/grep/find; keep oldText small but unique.
    assert.match(ins, /read a file before edit/i);
    assert.match(ins, /never guess/i);
    assert.match(ins, /\bcat\b/);
    assert.match(ins, /oldText small but unique/i);
  });
});

test('tools/list: core tools, all four annotations, valid object schemas without $ref or unions', async () => {
  const ws = contractWorkspace({ 'a.txt': 'x\n' });
  await contractWith(await connect({ args: ['--root', ws] }), async (c) => {
    const { tools } = await c.listTools();
    const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
    for (const n of CORE) assert.ok(byName[n], `tool ${n} listed`);
    const ajv = new Ajv2020({ strict: false });
    for (const t of tools) {
      for (const h of HINTS) assert.equal(typeof t.annotations?.[h], 'boolean', `${t.name}.annotations.${h}`);
      assert.equal(t.inputSchema.type, 'object', `${t.name} schema type`);
      assert.doesNotThrow(() => ajv.compile(t.inputSchema), `${t.name} schema compiles`);
      const s = JSON.stringify(t.inputSchema);
      assert.ok(!s.includes('"$ref"'), `${t.name} schema has $ref`);
      assert.ok(!/"type":\[/.test(s), `${t.name} schema has a type union`);
      if (!t.name.startsWith('test_')) assert.ok(t.description && t.description.length > 40, `${t.name} has a description`);
    }
    for (const n of ['read', 'grep', 'find', 'ls']) {
      assert.equal(byName[n].annotations.readOnlyHint, true, `${n} readOnly`);
      assert.equal(byName[n].annotations.destructiveHint, false, `${n} not destructive`);
    }
    for (const n of ['edit', 'write']) assert.equal(byName[n].annotations.readOnlyHint, false, `${n} not readOnly`);
    assert.equal(byName.bash.annotations.readOnlyHint, false);
    // The schemas state the contract's limits.
    assert.equal(byName.grep.inputSchema.properties.context !== undefined, true);
    assert.deepEqual([...(byName.edit.inputSchema.required ?? [])].sort(), ['edits', 'path']);
  });
});

test('read: header, numbered lines, details in _meta', async () => {
  const ws = contractWorkspace({ 'src/config.ts': 'alpha\nbeta\ngamma\n' });
  await contractWith(await connect({ roots: [ws] }), async (c) => {
    const r = await c.callTool({ name: 'read', arguments: { path: 'src/config.ts' } });
    assert.ok(!r.isError, text(r));
    const t = text(r);
    assert.match(t, /^src\/config\.ts, lines 1-3 of 3\n/);
    assert.match(t, /\s+1\D{1,3}alpha\n\s+2\D{1,3}beta\n\s+3\D{1,3}gamma/);
    assert.ok(r._meta?.details, 'details ride in _meta');
    assert.ok(typeof r._meta.details.durationMs === 'number');
    assert.ok(r._meta.callId, '_meta.callId');
  });
});

test('read: truncation announced with the exact continuation', async () => {
  const lines = Array.from({ length: 2500 }, (_, i) => `line ${i + 1}`).join('\n') + '\n';
  const ws = contractWorkspace({ 'big.txt': lines });
  await contractWith(await connect({ roots: [ws] }), async (c) => {
    const r = await c.callTool({ name: 'read', arguments: { path: 'big.txt' } });
    const t = text(r);
    assert.match(t, /lines 1-1998 of 2500/);
    assert.match(t, /offset=1999/);
    assert.ok(!t.includes('line 1999'));
    assert.ok(t.split('\n').length <= 2000, 'header and notice within the 2000 lines');
  });
});

test('read: a PNG comes back as MCP image content', async () => {
  const ws = contractWorkspace({ 'dot.png': PNG_1x1 });
  await contractWith(await connect({ roots: [ws] }), async (c) => {
    const r = await c.callTool({ name: 'read', arguments: { path: 'dot.png' } });
    assert.ok(!r.isError, text(r));
    const img = r.content.find((p) => p.type === 'image');
    assert.ok(img, `image part in ${JSON.stringify(r.content).slice(0, 300)}`);
    assert.equal(img.mimeType, 'image/png');
    assert.deepEqual(Buffer.from(img.data, 'base64'), PNG_1x1);
  });
});

test('read: secrets are masked in content', async () => {
  const ws = contractWorkspace({ 'notes.txt': `token: ${GH_TOKEN}\n` });
  await contractWith(await connect({ roots: [ws] }), async (c) => {
    const r = await c.callTool({ name: 'read', arguments: { path: 'notes.txt' } });
    assert.ok(!JSON.stringify(r).includes(GH_TOKEN), 'token leaked');
    assert.match(text(r), /REDACTED/);
  });
});

test('grep: path:line: text, relative paths, sorted', async () => {
  const ws = contractWorkspace({ 'b.txt': 'needle two\n', 'a.txt': 'hay\nneedle one\n', 'ignored.txt': 'needle\n', '.gitignore': 'ignored.txt\n' });
  await contractWith(await connect({ roots: [ws] }), async (c) => {
    const r = await c.callTool({ name: 'grep', arguments: { pattern: 'needle' } });
    assert.ok(!r.isError, text(r));
    assert.equal(text(r).trim(), 'a.txt:2: needle one\nb.txt:1: needle two');
    const bad = await c.callTool({ name: 'grep', arguments: { pattern: '(' } });
    assert.equal(bad.isError, true, 'invalid regex is an isError result');
  });
});

test('edit: without a read it fails; after a read it applies (acceptEdits from --root settings)', async () => {
  const ws = contractWorkspace({ 'a.txt': 'one\ntwo\nthree\n' });
  contractSettings(ws, { mode: 'acceptEdits' });
  await contractWith(await connect({ args: ['--root', ws] }), async (c) => {
    const edit = { name: 'edit', arguments: { path: 'a.txt', edits: [{ oldText: 'two', newText: 'TWO' }] } };
    const r1 = await c.callTool(edit);
    assert.equal(r1.isError, true, 'edit without read must fail');
    assert.match(text(r1), /read/i);
    assert.doesNotMatch(text(r1), /approval/i, 'the refusal is the read guard, not a permission ask');
    assert.equal(readFileSync(join(ws, 'a.txt'), 'utf8'), 'one\ntwo\nthree\n');
    await c.callTool({ name: 'read', arguments: { path: 'a.txt' } });
    const r2 = await c.callTool(edit);
    assert.ok(!r2.isError, text(r2));
    assert.equal(text(r2).split('\n')[0], 'Edited a.txt: 1 replacement, line 2.');
    assert.equal(readFileSync(join(ws, 'a.txt'), 'utf8'), 'one\nTWO\nthree\n');
    assert.match(r2._meta?.details?.unifiedDiff ?? '', /-two\n\+TWO/);
  });
});

test('edit: the workspace settings of the client roots apply (acceptEdits)', async () => {
  // The workspace comes from roots; its .agentls/settings.json must govern it.
  const ws = contractWorkspace({ 'a.txt': 'one\ntwo\n' });
  contractSettings(ws, { mode: 'acceptEdits' });
  const elsewhere = contractWorkspace({}, 'contract-cwd-');
  await contractWith(await connect({ roots: [ws], cwd: elsewhere }), async (c) => {
    await c.callTool({ name: 'read', arguments: { path: 'a.txt' } });
    const r = await c.callTool({ name: 'edit', arguments: { path: 'a.txt', edits: [{ oldText: 'two', newText: 'TWO' }] } });
    assert.ok(!r.isError, `acceptEdits from ${ws}/.agentls/settings.json not applied: ${text(r)}`);
    assert.equal(readFileSync(join(ws, 'a.txt'), 'utf8'), 'one\nTWO\n');
  });
});

test('edit: read-before-edit also holds with roots and elicitation', async () => {
  const ws = contractWorkspace({ 'a.txt': 'one\ntwo\n' });
  const c = await contractConnect({ roots: [ws], answer: () => ({ action: 'accept', content: { decision: 'allowOnce' } }) });
  await contractWith(c, async () => {
    const edit = { name: 'edit', arguments: { path: 'a.txt', edits: [{ oldText: 'two', newText: 'TWO' }] } };
    const r1 = await c.callTool(edit);
    assert.equal(r1.isError, true);
    assert.equal(readFileSync(join(ws, 'a.txt'), 'utf8'), 'one\ntwo\n');
    await c.callTool({ name: 'read', arguments: { path: 'a.txt' } });
    const r2 = await c.callTool(edit);
    assert.ok(!r2.isError, text(r2));
    assert.equal(readFileSync(join(ws, 'a.txt'), 'utf8'), 'one\nTWO\n');
  });
});

// ---------------------------------------------------------------- permissions

const CONTRACT_ASK = JSON.stringify({ permissions: { ask: ['Bash(touch:*)'] } });

test('ask without elicitation: isError saying approval is needed, nothing written', async () => {
  const ws = contractWorkspace({ 'a.txt': 'one\n', '.agentls/settings.json': CONTRACT_ASK });
  await contractWith(await connect({ roots: [ws] }), async (c) => {
    const r = await c.callTool({ name: 'bash', arguments: { command: 'touch made.txt' } });
    assert.equal(r.isError, true);
    assert.match(text(r), /approval/i);
    assert.equal(existsSync(join(ws, 'made.txt')), false);
  });
});

test('ask with elicitation: a form with a required decision; accept runs, decline denies', async () => {
  for (const [name, answer, runs] of [
    ['allowOnce', { action: 'accept', content: { decision: 'allowOnce' } }, true],
    ['rejectOnce', { action: 'accept', content: { decision: 'rejectOnce' } }, false],
    ['decline', { action: 'decline' }, false],
  ]) {
    const ws = contractWorkspace({ '.agentls/settings.json': CONTRACT_ASK });
    const c = await contractConnect({ roots: [ws], answer: () => answer });
    await contractWith(c, async () => {
      const r = await c.callTool({ name: 'bash', arguments: { command: 'touch made.txt' } });
      assert.equal(c.asked.length, 1, `${name}: one elicitation`);
      const schema = c.asked[0].requestedSchema;
      assert.ok(schema?.properties?.decision, `${name}: decision field`);
      assert.ok(schema.required?.includes('decision'), `${name}: decision required`);
      assert.deepEqual(schema.properties.decision.oneOf.map((o) => o.const).sort(), ['allowAlways', 'allowOnce', 'rejectAlways', 'rejectOnce']);
      assert.equal(existsSync(join(ws, 'made.txt')), runs, `${name}: ran=${runs}: ${text(r)}`);
      assert.equal(Boolean(r.isError), !runs, `${name}: ${text(r)}`);
      if (name === 'rejectOnce') assert.match(text(r), /denied by the user/);
      if (name === 'decline') assert.match(text(r), /the MCP host declined the question/);
    });
  }
});

// ---------------------------------------------------------------- bash

test('bash: progress notifications carry output while it runs', async () => {
  const ws = contractWorkspace({});
  await contractWith(await connect({ roots: [ws] }), async (c) => {
    const progress = [];
    const r = await c.callTool(
      { name: 'bash', arguments: { command: 'for i in 1 2 3 4; do echo tick$i; sleep 0.3; done' } },
      CallToolResultSchema,
      { onprogress: (p) => progress.push(p) },
    );
    assert.ok(!r.isError, text(r));
    assert.equal(text(r), 'tick1\ntick2\ntick3\ntick4');
    assert.ok(progress.length >= 2, `progress: ${JSON.stringify(progress)}`);
    assert.ok(progress.some((p) => /tick1/.test(p.message ?? '')), 'progress carries output');
    for (let i = 1; i < progress.length; i++) assert.ok(progress[i].progress > progress[i - 1].progress, 'progress increases');
  });
});

test('bash: notifications/cancelled kills sleep 100 and its process group', async () => {
  const ws = contractWorkspace({});
  // Writing the pid files is not read-only: the client approves it.
  const c = await contractConnect({ roots: [ws], answer: () => ({ action: 'accept', content: { decision: 'allowOnce' } }) });
  await contractWith(c, async () => {
    const ac = new AbortController();
    const started = Date.now();
    const call = c.callTool(
      { name: 'bash', arguments: { command: 'sleep 100 & echo $! > child.pid; echo $$ > shell.pid; wait' } },
      CallToolResultSchema,
      { signal: ac.signal, timeout: 20000 },
    ).then(() => 'resolved', (e) => e);
    await waitFor(() => existsSync(join(ws, 'child.pid')) && existsSync(join(ws, 'shell.pid')) &&
      readFileSync(join(ws, 'shell.pid'), 'utf8').trim() !== '', 5000, 'pid files');
    const child = Number(readFileSync(join(ws, 'child.pid'), 'utf8'));
    const shell = Number(readFileSync(join(ws, 'shell.pid'), 'utf8'));
    assert.ok(alive(child) && alive(shell));
    ac.abort('test cancels');
    const outcome = await call;
    assert.notEqual(outcome, 'resolved');
    await waitFor(() => !alive(child) && !alive(shell), 4000, 'sleep 100 and its shell killed');
    assert.ok(Date.now() - started < 10000);
    // The session goes on.
    const r = await c.callTool({ name: 'bash', arguments: { command: 'echo after' } });
    assert.equal(text(r), 'after');
  });
});

test('bash: non-zero exit is isError with the exit code', async () => {
  const ws = contractWorkspace({});
  await contractWith(await connect({ roots: [ws] }), async (c) => {
    const r = await c.callTool({ name: 'bash', arguments: { command: 'echo out; exit 3' } });
    assert.equal(r.isError, true);
    assert.match(text(r), /\b3\b/);
    assert.match(text(r), /out/);
  });
});

// ---------------------------------------------------------------- workspace

test('roots define the workspace; --root and paths outside are refused', async () => {
  const ws = contractWorkspace({ 'in.txt': 'inside\n' });
  const other = contractWorkspace({ 'out.txt': 'outside\n' }, 'contract-other-');
  await contractWith(await connect({ roots: [ws], args: ['--root', other] }), async (c) => {
    const ok = await c.callTool({ name: 'read', arguments: { path: 'in.txt' } });
    assert.ok(!ok.isError, text(ok));
    const abs = await c.callTool({ name: 'read', arguments: { path: join(ws, 'in.txt') } });
    assert.ok(!abs.isError, `absolute path inside a root: ${text(abs)}`);
    for (const p of [join(other, 'out.txt'), `../${other.split('/').pop()}/out.txt`, '/etc/passwd']) {
      const r = await c.callTool({ name: 'read', arguments: { path: p } });
      assert.equal(r.isError, true, `${p} must be refused`);
      assert.match(text(r), /outside|climbs out|refused/i, p);
      assert.doesNotMatch(text(r), /outside\n|root:x:0/);
    }
    const b = await c.callTool({ name: 'bash', arguments: { command: 'pwd' } });
    assert.equal(text(b), ws);
  });
});

test('roots/list_changed switches the workspace', async () => {
  const a = contractWorkspace({ 'a.txt': 'A\n' });
  const b = contractWorkspace({ 'b.txt': 'B\n' });
  const roots = [a];
  await contractWith(await connect({ roots }), async (c) => {
    assert.ok(!(await c.callTool({ name: 'read', arguments: { path: 'a.txt' } })).isError);
    roots.splice(0, 1, b);
    await c.sendRootsListChanged();
    await waitFor(async () => {
      const r = await c.callTool({ name: 'read', arguments: { path: join(b, 'b.txt') } });
      return !r.isError;
    }, 5000, 'new root usable');
    const old = await c.callTool({ name: 'read', arguments: { path: join(a, 'a.txt') } });
    assert.equal(old.isError, true, 'removed root refused');
  });
});

test('without roots capability: --root, else cwd', async () => {
  const r1 = contractWorkspace({ 'r.txt': 'R\n' });
  const cwd = contractWorkspace({ 'c.txt': 'C\n' }, 'contract-cwd-');
  await contractWith(await connect({ args: ['--root', r1], cwd }), async (c) => {
    assert.ok(!(await c.callTool({ name: 'read', arguments: { path: 'r.txt' } })).isError);
    assert.equal((await c.callTool({ name: 'read', arguments: { path: join(cwd, 'c.txt') } })).isError, true);
  });
  await contractWith(await connect({ cwd }), async (c) => {
    const r = await c.callTool({ name: 'read', arguments: { path: 'c.txt' } });
    assert.ok(!r.isError, text(r));
  });
});

// ---------------------------------------------------------------- errors

test('errors are results: invalid input names the field', async () => {
  const ws = contractWorkspace({ 'a.txt': 'x\n' });
  await contractWith(await connect({ roots: [ws] }), async (c) => {
    const r = await c.callTool({ name: 'read', arguments: { path: 'a.txt', offset: -3 } });
    assert.equal(r.isError, true);
    assert.match(text(r), /`offset` must be .*≥ 1, got -3/);
    const m = await c.callTool({ name: 'read', arguments: { path: 'missing.txt' } });
    assert.equal(m.isError, true);
    // Lenient input: an alias and a numeric string are repaired, not errors.
    const al = await c.callTool({ name: 'read', arguments: { file_path: 'a.txt', offset: '1' } });
    assert.ok(!al.isError, text(al));
  });
});

test('errors are results: an unknown tool is an isError result, not a protocol error', async () => {
  const ws = contractWorkspace({});
  await contractWith(await connect({ roots: [ws] }), async (c) => {
    let r;
    try {
      r = await c.callTool({ name: 'no_such_tool', arguments: {} });
    } catch (e) {
      assert.fail(`docs/tools.md "Errors are results. Unknown tool …": got protocol error ${e.code}: ${e.message}`);
    }
    assert.equal(r.isError, true);
    assert.match(text(r), /no_such_tool/);
  });
});

test('a panicking tool is an isError result and the session goes on', async () => {
  const ws = contractWorkspace({ 'a.txt': 'x\n' });
  await contractWith(await connect({ roots: [ws] }), async (c) => {
    const r = await c.callTool({ name: 'test_panic', arguments: {} });
    assert.equal(r.isError, true);
    assert.ok(!(await c.callTool({ name: 'read', arguments: { path: 'a.txt' } })).isError);
  });
});

// ---------------------------------------------------------------- aggregation

// contractUpstream writes .agentls/mcp.json for server-filesystem rooted at ws.
function contractUpstream(ws, shape = 'mcpServers', dir = join(ws, '.agentls')) {
  mkdirSync(dir, { recursive: true });
  const entry = { command: process.execPath, args: [filesystemServer, ws] };
  writeFileSync(join(dir, 'mcp.json'), JSON.stringify({ [shape]: { filesystem: entry } }));
}

async function contractFindReadText(c) {
  const r = await c.callTool({ name: 'tool_search', arguments: { query: 'read text file' } });
  assert.ok(!r.isError, text(r));
  assert.match(text(r), /filesystem__read_text_file/);
  return r;
}

test('aggregation: tool_search finds filesystem__read_text_file, list_changed, secret masked', async () => {
  const ws = contractWorkspace({ 'secret.txt': `plain line\napi token ${GH_TOKEN}\n` });
  contractUpstream(ws);
  await contractWith(await connect({ args: ['--root', ws] }), async (c) => {
    let changed = 0;
    c.setNotificationHandler(ToolListChangedNotificationSchema, () => { changed++; });
    const before = (await c.listTools()).tools.map((t) => t.name);
    assert.ok(!before.includes('filesystem__read_text_file'), 'upstream tools are deferred');
    await contractFindReadText(c);
    await waitFor(() => changed > 0, 3000, 'notifications/tools/list_changed');
    const after = (await c.listTools()).tools;
    const rt = after.find((t) => t.name === 'filesystem__read_text_file');
    assert.ok(rt, 'activated tool listed');
    for (const h of HINTS) assert.equal(typeof rt.annotations?.[h], 'boolean', `upstream ${h}`);
    const r = await c.callTool({ name: 'filesystem__read_text_file', arguments: { path: join(ws, 'secret.txt') } });
    assert.ok(!r.isError, text(r));
    assert.match(text(r), /plain line/);
    assert.match(text(r), /REDACTED/);
    assert.ok(!JSON.stringify(r).includes(GH_TOKEN), 'planted secret leaked');
    // The upstream's stderr goes to agentls's log.
    await waitFor(() => c.stderrText().includes('Secure MCP Filesystem Server running on stdio'), 3000, 'upstream stderr in the log');
  });
});

test('aggregation: the upstream process ends with the session', async () => {
  const ws = contractWorkspace({ 'f.txt': 'x\n' });
  contractUpstream(ws);
  const c = await connect({ args: ['--root', ws] });
  const r = await c.callTool({ name: 'filesystem__read_text_file', arguments: { path: join(ws, 'f.txt') } });
  const pid = r._meta?.details?.upstream?.pid ?? contractChildPid(c);
  assert.ok(pid && alive(pid), 'upstream running');
  await c.close();
  await waitFor(() => !alive(pid), 5000, 'upstream server exits after the client closes');
});

test('bash: secrets in command output are masked', async () => {
  const ws = contractWorkspace({});
  await contractWith(await connect({ roots: [ws], env: { CONTRACT_PLAIN: GH_TOKEN } }), async (c) => {
    const r = await c.callTool({ name: 'bash', arguments: { command: 'echo "$CONTRACT_PLAIN"' } });
    assert.ok(!JSON.stringify(r).includes(GH_TOKEN), `bash output leaked the token: ${text(r)}`);
    assert.match(text(r), /REDACTED/);
  });
});

test('aggregation: calling a deferred upstream tool by name works without tool_search', async () => {
  const ws = contractWorkspace({ 'f.txt': 'hello upstream\n' });
  contractUpstream(ws);
  await contractWith(await connect({ args: ['--root', ws] }), async (c) => {
    const r = await c.callTool({ name: 'filesystem__read_text_file', arguments: { path: join(ws, 'f.txt') } });
    assert.ok(!r.isError, text(r));
    assert.equal(text(r).trim(), 'hello upstream');
  });
});

test('aggregation: the {"servers"} shape and the user config dir', async () => {
  const ws = contractWorkspace({ 'f.txt': 'from user config\n' });
  const xdg = contractWorkspace({}, 'contract-xdg-');
  contractUpstream(ws, 'servers', join(xdg, 'agentls'));
  await contractWith(await connect({ args: ['--root', ws], env: { XDG_CONFIG_HOME: xdg } }), async (c) => {
    await contractFindReadText(c);
    const r = await c.callTool({ name: 'filesystem__read_text_file', arguments: { path: join(ws, 'f.txt') } });
    assert.ok(!r.isError, text(r));
    assert.match(text(r), /from user config/);
  });
});

test('aggregation: deny rules mcp__filesystem__write_file and mcp__filesystem block the call', async () => {
  for (const rule of ['mcp__filesystem__write_file', 'mcp__filesystem']) {
    const ws = contractWorkspace({ 'f.txt': 'x\n' });
    contractUpstream(ws);
    contractSettings(ws, { permissions: { deny: [rule] } });
    // The client would approve anything: only the deny rule can stop the write.
    const c = await contractConnect({ args: ['--root', ws], answer: () => ({ action: 'accept', content: { decision: 'allowOnce' } }) });
    await contractWith(c, async () => {
      const r = await c.callTool({ name: 'filesystem__write_file', arguments: { path: join(ws, 'new.txt'), content: 'pwned' } });
      assert.equal(r.isError, true, `${rule}: ${text(r)}`);
      assert.match(text(r), new RegExp(`denied by the rule ${rule}\\b`));
      assert.equal(existsSync(join(ws, 'new.txt')), false, `${rule}: nothing written`);
      assert.equal(c.asked.length, 0, `${rule}: no question asked`);
    });
  }
});

test('aggregation: deny rule from the roots workspace settings blocks the upstream write', async () => {
  const ws = contractWorkspace({ 'f.txt': 'x\n' });
  contractUpstream(ws);
  contractSettings(ws, { permissions: { deny: ['mcp__filesystem__write_file'] } });
  const elsewhere = contractWorkspace({}, 'contract-cwd-');
  const c = await contractConnect({ roots: [ws], cwd: elsewhere, answer: () => ({ action: 'accept', content: { decision: 'allowOnce' } }) });
  await contractWith(c, async () => {
    let r;
    try {
      r = await c.callTool({ name: 'filesystem__write_file', arguments: { path: join(ws, 'new.txt'), content: 'pwned' } });
    } catch (e) {
      assert.fail(`the roots workspace's upstream is not registered, so its deny rule cannot be checked: ${e.message}`);
    }
    assert.equal(existsSync(join(ws, 'new.txt')), false, `written despite the deny rule: ${text(r)}`);
    assert.match(text(r), /denied by the rule mcp__filesystem__write_file/);
  });
});

test('aggregation: without a deny rule an approved upstream write goes through', async () => {
  const ws = contractWorkspace({ 'f.txt': 'x\n' });
  contractUpstream(ws);
  const c = await contractConnect({ args: ['--root', ws], answer: () => ({ action: 'accept', content: { decision: 'allowOnce' } }) });
  await contractWith(c, async () => {
    const r = await c.callTool({ name: 'filesystem__write_file', arguments: { path: join(ws, 'new.txt'), content: 'ok' } });
    assert.ok(!r.isError, text(r));
    assert.equal(readFileSync(join(ws, 'new.txt'), 'utf8'), 'ok');
  });
});

test('aggregation: killing the upstream gives a clear error, the next call works after restart', async () => {
  const ws = contractWorkspace({ 'f.txt': 'survives\n' });
  contractUpstream(ws);
  await contractWith(await connect({ args: ['--root', ws] }), async (c) => {
    const call = () => c.callTool({ name: 'filesystem__read_text_file', arguments: { path: join(ws, 'f.txt') } });
    const r1 = await call();
    assert.ok(!r1.isError, text(r1));
    const pid = r1._meta?.details?.upstream?.pid ?? contractChildPid(c);
    assert.ok(pid, 'upstream pid');
    process.kill(pid, 'SIGKILL');
    await waitFor(() => !alive(pid), 3000, 'upstream dead');
    const r2 = await call();
    assert.equal(r2.isError, true, `call right after the kill: ${text(r2)}`);
    assert.match(text(r2), /unavailable/i);
    assert.match(text(r2), /restart/i);
    let last;
    await waitFor(async () => { last = await call(); return !last.isError; }, 10000, 'upstream restarted');
    assert.match(text(last), /survives/);
  });
});

// contractChildPid finds the server-filesystem process started by agentls.
function contractChildPid(c) {
  const agentls = c.transport?.pid;
  const out = execFileSync('ps', ['-eo', 'pid=,ppid=,args=']).toString();
  for (const line of out.split('\n')) {
    const [pid, ppid, ...args] = line.trim().split(/\s+/);
    if (Number(ppid) === agentls && args.join(' ').includes('server-filesystem')) return Number(pid);
  }
  return undefined;
}

test('aggregation: upstream calls are audited with the mcp tool name', async () => {
  const ws = contractWorkspace({ 'f.txt': `k ${GH_TOKEN}\n` });
  contractUpstream(ws);
  const audit = contractWorkspace({}, 'contract-audit-');
  await contractWith(await connect({ args: ['--root', ws], env: { AGENTLS_AUDIT_DIR: audit } }), async (c) => {
    const r = await c.callTool({ name: 'filesystem__read_text_file', arguments: { path: join(ws, 'f.txt') } });
    assert.ok(!r.isError, text(r));
  });
  const lines = readdirSync(audit).flatMap((f) => readFileSync(join(audit, f), 'utf8').split('\n').filter(Boolean)).map((l) => JSON.parse(l));
  const e = lines.find((l) => l.tool === 'filesystem__read_text_file');
  assert.ok(e, `audit lines: ${JSON.stringify(lines).slice(0, 500)}`);
  assert.equal(e.decision, 'allow');
  assert.equal(e.isError, false);
  assert.ok(!JSON.stringify(lines).includes(GH_TOKEN));
});

test('aggregation: an oversized upstream result is cut to the budget, spilled, and the spill is readable', async () => {
  const big = Array.from({ length: 6000 }, (_, i) => `row ${i + 1} ${'z'.repeat(40)}`).join('\n') + '\n';
  const ws = contractWorkspace({ 'big.txt': big });
  contractUpstream(ws);
  const cache = contractWorkspace({}, 'contract-cache-');
  await contractWith(await connect({ args: ['--root', ws], env: { XDG_CACHE_HOME: cache } }), async (c) => {
    const r = await c.callTool({ name: 'filesystem__read_text_file', arguments: { path: join(ws, 'big.txt') } });
    const t = text(r);
    const m = t.match(/showing lines 1-(\d+) of (\d+)[\s\S]*continue with read (\{.*\})/);
    assert.ok(m, `cut notice: ${t.slice(-600)}`);
    const shown = Number(m[1]);
    const body = t.slice(0, t.lastIndexOf('\n[')); // the text before the notice
    assert.ok(Buffer.byteLength(body) <= 65536, `body over the 65,536-byte budget: ${Buffer.byteLength(body)}`);
    assert.ok(body.endsWith(`row ${shown} ${'z'.repeat(40)}`), 'cut at a line boundary, at the announced line');
    const next = JSON.parse(m[3]);
    assert.equal(next.offset, shown + 1);
    const more = await c.callTool({ name: 'read', arguments: next });
    assert.ok(!more.isError, `the spill file named in the notice must be readable: ${text(more)}`);
    assert.match(text(more), new RegExp(`\\brow ${shown + 1} z`));
  });
});

test('aggregation: .agentls/mcp.json of the workspace given by client roots is loaded', async () => {
  const ws = contractWorkspace({ 'f.txt': 'roots upstream\n' });
  contractUpstream(ws);
  const elsewhere = contractWorkspace({}, 'contract-cwd-');
  await contractWith(await connect({ roots: [ws], cwd: elsewhere }), async (c) => {
    const s = await c.callTool({ name: 'tool_search', arguments: { query: 'read text file' } });
    assert.match(text(s), /filesystem__read_text_file/, `upstream of the roots workspace not registered: ${text(s)}`);
    const r = await c.callTool({ name: 'filesystem__read_text_file', arguments: { path: join(ws, 'f.txt') } });
    assert.match(text(r), /roots upstream/);
  });
});
