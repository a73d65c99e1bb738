// agentls behind the real mcp-hub (npm mcp-hub, the hub mcphub.nvim runs):
// the hub starts `agentls mcp` from its config file, lists its tools, and
// tools called through the hub's HTTP API on 127.0.0.1 run in the workspace.
// The hub declares no elicitation, so a default-mode edit needs an allow
// rule; the workspace's .agentls/settings.json gives it, as the docs say.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, writeFileSync, readFileSync, realpathSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const hubCli = join(here, 'node_modules', 'mcp-hub', 'dist', 'cli.js');
const bin = process.env.AGENTLS_BIN;
if (!bin) throw new Error('AGENTLS_BIN is not set: run test/mcphub/run.sh');

// How long the hub may take to start agentls and list its tools.
const READY_MS = 20000;

let tmp, ws, port, hub, hubLog = '';

function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port: p } = s.address();
      s.close(() => resolve(p));
    });
  });
}

async function api(method, path, body) {
  const res = await fetch(`http://127.0.0.1:${port}${path}`, {
    method,
    headers: body ? { 'content-type': 'application/json' } : {},
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  let json;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, json, text };
}

// A tool call through the hub: POST /api/servers/tools; returns the MCP result.
async function callTool(tool, args) {
  const res = await api('POST', '/api/servers/tools', { server_name: 'agentls', tool, arguments: args });
  assert.equal(res.status, 200, `${tool} through the hub: HTTP ${res.status} ${res.text}\nhub log:\n${hubLog}`);
  return res.json.result;
}

function text(result) {
  return (result.content || []).filter((c) => c.type === 'text').map((c) => c.text).join('\n');
}

// The agentls server as the hub reports it, once it is connected.
async function connectedServer() {
  const deadline = Date.now() + READY_MS;
  let last;
  while (Date.now() < deadline) {
    try {
      last = await api('GET', '/api/health');
      const s = last.json?.servers?.find((x) => x.name === 'agentls');
      if (last.json?.state === 'ready' && s?.status === 'connected') return s;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`agentls not connected through the hub in ${READY_MS} ms: ${last?.text}\nhub log:\n${hubLog}`);
}

before(async () => {
  tmp = realpathSync(mkdtempSync(join(tmpdir(), 'agentls-mcphub-')));
  ws = join(tmp, 'ws');
  mkdirSync(join(ws, '.agentls'), { recursive: true });
  writeFileSync(join(ws, 'hello.txt'), 'alpha\nbeta\ngamma\n');
  writeFileSync(join(ws, 'other.txt'), 'one\ntwo\n');
  // The hub cannot answer an approval question (no elicitation): the
  // user's allow rule lets the edit tool run in default mode.
  writeFileSync(join(ws, '.agentls', 'settings.json'), JSON.stringify({ permissions: { allow: ['Edit'] } }));
  // mcphub.nvim's servers.json shape: mcpServers.<name>.{command, args, cwd}.
  const config = join(tmp, 'servers.json');
  writeFileSync(config, JSON.stringify({
    mcpServers: { agentls: { command: bin, args: ['mcp', '--root', ws], cwd: ws } },
  }));
  port = await freePort();
  const home = join(tmp, 'home');
  mkdirSync(home);
  hub = spawn(process.execPath, [hubCli, '--port', String(port), '--config', config], {
    cwd: ws,
    detached: true, // its own process group: the teardown ends the hub and agentls together
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      ...process.env,
      HOME: home,
      XDG_STATE_HOME: join(home, 'state'),
      XDG_CONFIG_HOME: join(home, 'config'),
      XDG_DATA_HOME: join(home, 'data'),
      XDG_CACHE_HOME: join(home, 'cache'),
    },
  });
  hub.stdout.on('data', (b) => { hubLog += b.toString(); });
  hub.stderr.on('data', (b) => { hubLog += b.toString(); });
});

after(async () => {
  if (hub && hub.exitCode === null) {
    const exited = new Promise((r) => hub.once('exit', r));
    try {
      process.kill(-hub.pid, 'SIGTERM');
    } catch {
      // already gone
    }
    const timer = setTimeout(() => {
      try { process.kill(-hub.pid, 'SIGKILL'); } catch { /* gone */ }
    }, 5000);
    await exited;
    clearTimeout(timer);
  }
});

test('the hub starts agentls mcp from its config and lists every agentls tool', async () => {
  const server = await connectedServer();
  const listed = server.capabilities.tools.map((t) => t.name).sort();
  const own = JSON.parse(execFileSync(bin, ['tools', '--format', 'mcp'], { cwd: ws })).map((t) => t.name).sort();
  assert.deepEqual(listed, own, 'tools through the hub = agentls tools --format mcp');
  const read = server.capabilities.tools.find((t) => t.name === 'read');
  assert.ok(read.description.length > 0 && read.inputSchema?.properties?.path, 'read keeps its description and schema');
});

test('a read through the hub returns the numbered lines', async () => {
  await connectedServer();
  const res = await callTool('read', { path: 'hello.txt' });
  assert.notEqual(res.isError, true, text(res));
  assert.match(text(res), /1→alpha\n\s+2→beta\n\s+3→gamma/);
});

test('an edit through the hub changes the file (allowed by .agentls/settings.json)', async () => {
  await connectedServer();
  await callTool('read', { path: 'hello.txt' });
  const res = await callTool('edit', { path: 'hello.txt', edits: [{ oldText: 'beta', newText: 'BETA' }] });
  assert.notEqual(res.isError, true, text(res));
  assert.match(text(res), /^Edited hello\.txt: 1 replacement, line 2\./);
  assert.equal(readFileSync(join(ws, 'hello.txt'), 'utf8'), 'alpha\nBETA\ngamma\n');
});

test('an edit of a file not read first is refused through the hub, and the file is unchanged', async () => {
  await connectedServer();
  const res = await callTool('edit', { path: 'other.txt', edits: [{ oldText: 'two', newText: 'TWO' }] });
  assert.equal(res.isError, true, text(res));
  assert.match(text(res), /read/i, 'the model is told to read it first');
  assert.equal(readFileSync(join(ws, 'other.txt'), 'utf8'), 'one\ntwo\n');
});

test('a path outside the workspace is refused through the hub', async () => {
  await connectedServer();
  const res = await callTool('read', { path: '/etc/passwd' });
  assert.equal(res.isError, true, text(res));
  assert.ok(!text(res).includes('root:'), 'no file content leaked');
});
