// Contract tests of `agentls mcp` with the official TypeScript
// SDK client as the peer: limits from .agentls/settings.json, cancellation
// racing with edit/write, the edit guard, live settings, secret masking and
// robustness under concurrency. Written from the contract (docs/tools.md,
// docs/protocol.md, docs/protocol.md, docs/tools.md, issue 9), not from the code,
// and only for what the other files here do not already check.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import {
  writeFileSync, readFileSync, mkdirSync, readdirSync, chmodSync, statSync, existsSync, mkdtempSync, rmSync,
} from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { randomUUID } from 'node:crypto';
import { connect, text, tempDir, waitFor, here } from './helpers.mjs';

before(() => {
  if (process.env.AGENTLS_BIN) return;
  const out = mkdtempSync(join(tmpdir(), 'lgm-bin-'));
  execFileSync('go', ['build', '-o', join(out, 'agentls'), './cmd/agentls'], {
    cwd: join(here, '..', '..'),
    env: { ...process.env, CGO_ENABLED: '0' },
    stdio: 'inherit',
  });
  process.env.AGENTLS_BIN = join(out, 'agentls');
});

// A GitHub token built at runtime, so no scanner flags this file.
const lgmAlnum = 'aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dE3fG5hJ7k';
const LGM_TOKEN = 'ghp_' + lgmAlnum.slice(0, 36);

const lgmClients = [];
after(async () => {
  for (const c of lgmClients) await c.close().catch(() => {});
});

// lgmOpen connects a client that is closed after the file.
async function lgmOpen(opts) {
  const c = await connect({ name: 'lgm', ...opts });
  lgmClients.push(c);
  return c;
}

// lgmWorkspace makes a temp folder with the given files (path → string|Buffer).
function lgmWorkspace(files = {}) {
  const dir = tempDir('lgm-');
  for (const [p, body] of Object.entries(files)) {
    const full = join(dir, p);
    mkdirSync(join(full, '..'), { recursive: true });
    writeFileSync(full, body);
  }
  return dir;
}

// lgmSettings writes .agentls/<name> (settings.json by default); a string is written raw.
function lgmSettings(dir, s, name = 'settings.json') {
  mkdirSync(join(dir, '.agentls'), { recursive: true });
  writeFileSync(join(dir, '.agentls', name), typeof s === 'string' ? s : JSON.stringify(s));
}

const lgmOk = (r, what) => assert.equal(r.isError ?? false, false, `${what}: ${text(r)}`);
const lgmErr = (r, what) => assert.equal(r.isError, true, `${what} must fail: ${text(r)}`);

function lgmPids(marker) {
  const out = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      if (readFileSync(`/proc/${d}/environ`, 'latin1').includes(marker)) out.push(Number(d));
    } catch {}
  }
  return out;
}

function lgmKill(marker) {
  for (const pid of lgmPids(marker)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {}
  }
}

const lgmLines = (n, f) => Array.from({ length: n }, (_, i) => f(i + 1)).join('\n') + '\n';
const lgmTool = async (c, name) => (await c.listTools()).tools.find((t) => t.name === name);

// ---------------------------------------------------------------- limits

describe('limits from .agentls/settings.json', () => {
  // 7 lines in all: a header, 5 lines of the file and the notice.
  const limits = { readLines: 7, grep: { matches: 3 } };
  const body = lgmLines(12, (i) => `line ${i} hit`);

  test('limits: tools/list descriptions and schemas state the numbers in force', async () => {
    const ws = lgmWorkspace({ 'f.txt': body });
    lgmSettings(ws, { limits });
    const c = await lgmOpen({ args: ['--root', ws] });
    const read = await lgmTool(c, 'read');
    const grep = await lgmTool(c, 'grep');
    assert.match(read.description, /A result is at most 7 lines\b/);
    assert.doesNotMatch(read.description, /\b2000 lines\b/, 'the default is not stated any more');
    assert.match(read.inputSchema.properties.limit.description, /\b7\b/);
    assert.match(grep.description, /At most 3 matching lines by default/);
    assert.doesNotMatch(grep.description, /\b100 matching lines\b/);
    assert.match(grep.inputSchema.properties.limit.description, /default 3\b/);
  });

  test('limits: read stops at readLines with the exact continuation, and the continuation works', async () => {
    const ws = lgmWorkspace({ 'f.txt': body });
    lgmSettings(ws, { limits });
    const c = await lgmOpen({ args: ['--root', ws] });
    const a = await c.callTool({ name: 'read', arguments: { path: 'f.txt' } });
    lgmOk(a, 'read');
    const ta = text(a);
    assert.match(ta, /^f\.txt, lines 1-5 of 12\n/);
    const notice = ta.split('\n').at(-1);
    assert.match(notice, /lines 1-5 of 12\b/, 'the notice says what was shown');
    assert.match(notice, /\boffset=6\b/, 'the notice gives the call that continues');
    assert.match(ta, /5→line 5 hit/);
    assert.doesNotMatch(ta, /line 6 hit/);
    const b = await c.callTool({ name: 'read', arguments: { path: 'f.txt', offset: 6 } });
    const tb = text(b);
    assert.match(tb, /^f\.txt, lines 6-10 of 12\n/);
    assert.match(tb, /\boffset=11\b/);
    assert.doesNotMatch(tb, /line 11 hit/);
    // An explicit larger limit is still capped by readLines ("the largest limit").
    const d = await c.callTool({ name: 'read', arguments: { path: 'f.txt', offset: 6, limit: 100 } });
    assert.match(text(d), /^f\.txt, lines 6-10 of 12\n/);
    assert.doesNotMatch(text(d), /line 11 hit/);
  });

  test('limits: grep stops at grep.matches, names the limit and the call that gets more', async () => {
    const ws = lgmWorkspace({ 'f.txt': body });
    lgmSettings(ws, { limits });
    const c = await lgmOpen({ args: ['--root', ws] });
    const r = await c.callTool({ name: 'grep', arguments: { pattern: 'hit' } });
    lgmOk(r, 'grep');
    const t = text(r);
    assert.deepEqual(t.split('\n').filter((l) => /^f\.txt:\d+: /.test(l)), [
      'f.txt:1: line 1 hit', 'f.txt:2: line 2 hit', 'f.txt:3: line 3 hit',
    ]);
    const notice = t.trim().split('\n').at(-1);
    assert.match(notice, /limit 3\b/, 'the notice names the limit hit');
    assert.match(notice, /limit=6\b/, 'the notice gives the call that gets more');
    // The setting is the default, not a cap: a call's own limit wins.
    const all = await c.callTool({ name: 'grep', arguments: { pattern: 'hit', limit: 6 } });
    assert.equal(text(all).split('\n').filter((l) => /^f\.txt:\d+: /.test(l)).length, 6, text(all));
  });

  test('limits: every limit set in the file is the number its description states; a bash timeout above the max is refused', async () => {
    const ws = lgmWorkspace({ 'f.txt': 'x\n' });
    lgmSettings(ws, {
      limits: {
        readLines: 11, readBytes: 4444, readLineChars: 33, lsEntries: 44, grepMatches: 55, grepLineChars: 66,
        grepBytes: 7777, findPaths: 88, bashTimeout: 66, bashMaxTimeout: 77, bashLines: 111, bashBytes: 8888,
      },
    });
    const c = await lgmOpen({ args: ['--root', ws] });
    const tools = Object.fromEntries((await c.listTools()).tools.map((t) => [t.name, t]));
    const says = {
      read: [/A result is at most 11 lines and 4444 bytes/, /longer than 33 characters/],
      ls: [/At most 44 entries/],
      grep: [/At most 55 matching lines/, /cut at 66 characters/, /at most 7777 bytes/],
      find: [/At most 88 paths/],
      bash: [/A result is at most 111 lines and 8888 bytes/],
    };
    for (const [name, res] of Object.entries(says)) {
      for (const re of res) assert.match(tools[name].description, re, `${name} description`);
    }
    assert.match(tools.bash.inputSchema.properties.timeout.description, /default 66, maximum 77/);
    assert.equal(tools.bash.inputSchema.properties.timeout.maximum, 77);
    const r = await c.callTool({ name: 'bash', arguments: { command: 'echo hi', timeout: 78 } });
    lgmErr(r, 'a timeout above bashMaxTimeout');
    assert.match(text(r), /`timeout`/);
    assert.match(text(r), /\b77\b/);
  });

  test('limits: settings.local.json wins over settings.json per name, an unknown name is only a warning', async () => {
    const ws = lgmWorkspace({ 'f.txt': body });
    lgmSettings(ws, { limits: { readLines: 7, grepMatches: 3 } });
    lgmSettings(ws, { limits: { readLines: 9, lgmBogus: 1 } }, 'settings.local.json');
    const c = await lgmOpen({ args: ['--root', ws] });
    assert.match(text(await c.callTool({ name: 'read', arguments: { path: 'f.txt' } })), /^f\.txt, lines 1-7 of 12\n/);
    const g = text(await c.callTool({ name: 'grep', arguments: { pattern: 'hit' } }));
    assert.equal(g.split('\n').filter((l) => /^f\.txt:\d+: /.test(l)).length, 3, g);
  });

  test('limits: the workspace from the client roots brings its limits', async () => {
    const ws = lgmWorkspace({ 'f.txt': body });
    lgmSettings(ws, { limits });
    // No --root, and a working directory without settings: the roots are the workspace.
    const c = await lgmOpen({ roots: [ws], cwd: lgmWorkspace({}) });
    assert.match((await lgmTool(c, 'read')).description, /A result is at most 7 lines\b/);
    const r = await c.callTool({ name: 'read', arguments: { path: 'f.txt' } });
    assert.match(text(r), /^f\.txt, lines 1-5 of 12\n/);
  });

  for (const [name, bad, problem] of [
    ['out of range', { limits: { readLines: 0, grep: { matches: 3 } } }, /readLines/],
    ['wrong type', { limits: { readLines: 'many' } }, /readLines/],
    ['limits not an object', { limits: [5] }, /limits/],
    ['not JSON at all', '{"limits": {"readLines": 5', /settings\.json/],
  ]) {
    test(`lgm limits: a bad limit in the file (${name}) is not fatal; the defaults apply`, async () => {
      const ws = lgmWorkspace({ 'f.txt': lgmLines(12, (i) => `line ${i} hit`) });
      lgmSettings(ws, bad);
      const c = await lgmOpen({ args: ['--root', ws] });
      const read = await lgmTool(c, 'read');
      assert.match(read.description, /A result is at most 2000 lines\b/);
      const grep = await lgmTool(c, 'grep');
      assert.match(grep.description, /At most 100 matching lines by default/);
      const r = await c.callTool({ name: 'read', arguments: { path: 'f.txt' } });
      lgmOk(r, 'read');
      assert.match(text(r), /^f\.txt, lines 1-12 of 12\n/);
      const g = text(await c.callTool({ name: 'grep', arguments: { pattern: 'hit' } }));
      assert.equal(g.split('\n').filter((l) => /^f\.txt:\d+: /.test(l)).length, 12, g);
      // Reported, not silent (docs/protocol.md "Limits": a wrong value is reported).
      await waitFor(() => problem.test(c.stderrText()), 3_000, 'the bad limit to be reported on stderr');
    });
  }

  test('limits: a bad limit ignores only the limits; the same file\'s mode still applies', async () => {
    const ws = lgmWorkspace({ 'g.txt': 'hello\n' });
    lgmSettings(ws, { mode: 'acceptEdits', limits: { readLines: 0 } });
    const c = await lgmOpen({ args: ['--root', ws] });
    lgmOk(await c.callTool({ name: 'read', arguments: { path: 'g.txt' } }), 'read');
    const e = await c.callTool({ name: 'edit', arguments: { path: 'g.txt', edits: [{ oldText: 'hello', newText: 'bye' }] } });
    lgmOk(e, 'edit under acceptEdits');
    assert.equal(readFileSync(join(ws, 'g.txt'), 'utf8'), 'bye\n');
  });
});

// ---------------------------------------------------------------- cancellation

describe('cancellation', () => {
  test('cancel: an edit aborted at any moment leaves the file old or new, never partial', async () => {
    const lines = 4000;
    const gen = (n) => lgmLines(lines, (i) => `row ${i} gen-${n} ${'x'.repeat(40)}`);
    const ws = lgmWorkspace({ 'big.txt': gen(0) });
    lgmSettings(ws, { mode: 'acceptEdits' });
    const c = await lgmOpen({ args: ['--root', ws] });
    let cur = 0;
    let changed = 0;
    let cancelled = 0;
    for (let i = 0; i < 24; i++) {
      lgmOk(await c.callTool({ name: 'read', arguments: { path: 'big.txt', limit: 1 } }), 'read');
      const ac = new AbortController();
      const call = c.callTool(
        { name: 'edit', arguments: { path: 'big.txt', edits: [{ oldText: `gen-${cur}`, newText: `gen-${cur + 1}`, replaceAll: true }] } },
        undefined,
        { signal: ac.signal, timeout: 30_000 },
      );
      const delay = i % 8;
      if (delay === 0) ac.abort('lgm');
      else setTimeout(() => ac.abort('lgm'), delay);
      const outcome = await call.then((r) => r, () => 'aborted');
      if (outcome === 'aborted') cancelled++;
      // Wait until the server has settled the call: a ping is answered after it.
      await c.ping();
      const disk = readFileSync(join(ws, 'big.txt'), 'utf8');
      const old = gen(cur);
      const next = gen(cur + 1);
      assert.ok(disk === old || disk === next, `iteration ${i}: the file is neither old nor new (${disk.length} bytes)`);
      if (outcome !== 'aborted') lgmOk(outcome, `iteration ${i} edit`);
      if (disk === next) {
        cur++;
        changed++;
      }
      const r = await c.callTool({ name: 'read', arguments: { path: 'big.txt', offset: lines, limit: 1 } });
      assert.match(text(r), new RegExp(`row ${lines} gen-${cur} `), `iteration ${i}: read agrees with the disk`);
    }
    const left = readdirSync(ws).filter((n) => n !== '.agentls');
    assert.deepEqual(left, ['big.txt'], 'no temp file is left behind');
    assert.ok(cancelled > 0, `some calls were cancelled (${cancelled}, ${changed} changed)`);
  });

  test('cancel: a write aborted at any moment leaves no file or the whole file, no temp file', async () => {
    const ws = lgmWorkspace({});
    lgmSettings(ws, { mode: 'acceptEdits' });
    const c = await lgmOpen({ args: ['--root', ws] });
    const content = lgmLines(60_000, (i) => `payload ${i} ${'y'.repeat(60)}`); // ~4.6 MB
    for (let i = 0; i < 10; i++) {
      const name = `w${i}.txt`;
      const ac = new AbortController();
      const call = c.callTool({ name: 'write', arguments: { path: name, content } }, undefined, { signal: ac.signal, timeout: 30_000 });
      setTimeout(() => ac.abort('lgm'), i * 3);
      await call.then(() => {}, () => {});
      await c.ping();
      const p = join(ws, name);
      if (existsSync(p)) {
        assert.equal(statSync(p).size, Buffer.byteLength(content), `${name}: present only whole`);
        assert.ok(readFileSync(p, 'utf8') === content, `${name}: content intact`);
      }
    }
    const stray = readdirSync(ws).filter((n) => n !== '.agentls' && !/^w\d\.txt$/.test(n));
    assert.deepEqual(stray, [], 'no temp file is left behind');
  });

  test('cancel: aborting one of two concurrent `sleep 100` kills only that one; the session goes on', async () => {
    const ws = lgmWorkspace({});
    const c = await lgmOpen({ args: ['--root', ws] });
    const mA = `LGM_A_${randomUUID().replace(/-/g, '')}`;
    const mB = `LGM_B_${randomUUID().replace(/-/g, '')}`;
    const acA = new AbortController();
    const acB = new AbortController();
    const opts = (ac) => ({ signal: ac.signal, timeout: 60_000, onprogress: () => {} });
    const callA = c.callTool({ name: 'bash', arguments: { command: `export ${mA}=1; sleep 100; echo after` } }, undefined, opts(acA));
    const callB = c.callTool({ name: 'bash', arguments: { command: `export ${mB}=1; sleep 100; echo after` } }, undefined, opts(acB));
    callA.catch(() => {});
    callB.catch(() => {});
    try {
      await waitFor(() => lgmPids(mA).length >= 1 && lgmPids(mB).length >= 1, 5_000, 'both sleeps to start');
      acA.abort('lgm');
      await assert.rejects(callA);
      await waitFor(() => lgmPids(mA).length === 0, 4_000, 'the aborted sleep to die');
      assert.ok(lgmPids(mB).length >= 1, 'the other call\'s sleep still runs');
      const r = await c.callTool({ name: 'bash', arguments: { command: 'echo still-here' } });
      lgmOk(r, 'a call after the cancel');
      assert.match(text(r), /still-here/);
      acB.abort('lgm');
      await assert.rejects(callB);
      await waitFor(() => lgmPids(mB).length === 0, 4_000, 'the second sleep to die');
    } finally {
      lgmKill(mA);
      lgmKill(mB);
    }
  });
});

// ---------------------------------------------------------------- edit guard

describe('read-before-edit and external changes', () => {
  const open = async (files) => {
    const ws = lgmWorkspace(files);
    lgmSettings(ws, { mode: 'acceptEdits' });
    return [ws, await lgmOpen({ args: ['--root', ws] })];
  };

  test('guard: edit and overwrite without a read fail, naming the file and read; nothing written', async () => {
    const [ws, c] = await open({ 'src/a.txt': 'alpha\n' });
    const e = await c.callTool({ name: 'edit', arguments: { path: 'src/a.txt', edits: [{ oldText: 'alpha', newText: 'beta' }] } });
    lgmErr(e, 'edit without read');
    assert.match(text(e), /src\/a\.txt/);
    assert.match(text(e), /\bread\b/);
    const w = await c.callTool({ name: 'write', arguments: { path: 'src/a.txt', content: 'gamma\n' } });
    lgmErr(w, 'write over an unread file');
    assert.match(text(w), /src\/a\.txt/);
    assert.equal(readFileSync(join(ws, 'src/a.txt'), 'utf8'), 'alpha\n');
  });

  for (const [name, change] of [
    ['longer', (p) => writeFileSync(p, 'alpha\nbeta\ngamma\n')],
    ['same size, at once', (p) => writeFileSync(p, 'ALPHA\nbeta\n')],
  ]) {
    test(`lgm guard: an external change after the read (${name}) makes edit and write stale, naming the file`, async () => {
      const [ws, c] = await open({ 'src/b.txt': 'alpha\nbeta\n' });
      const p = join(ws, 'src/b.txt');
      lgmOk(await c.callTool({ name: 'read', arguments: { path: 'src/b.txt' } }), 'read');
      change(p);
      const after = readFileSync(p, 'utf8');
      const e = await c.callTool({ name: 'edit', arguments: { path: 'src/b.txt', edits: [{ oldText: 'beta', newText: 'BETA' }] } });
      lgmErr(e, 'edit of a changed file');
      assert.match(text(e), /src\/b\.txt/);
      assert.match(text(e), /changed|modified|stale/i);
      assert.match(text(e), /read it again|re-?read/i);
      const w = await c.callTool({ name: 'write', arguments: { path: 'src/b.txt', content: 'replaced\n' } });
      lgmErr(w, 'write over a changed file');
      assert.match(text(w), /src\/b\.txt/);
      assert.equal(readFileSync(p, 'utf8'), after, 'the external change stays');
      lgmOk(await c.callTool({ name: 'read', arguments: { path: 'src/b.txt' } }), 're-read');
      lgmOk(await c.callTool({ name: 'edit', arguments: { path: 'src/b.txt', edits: [{ oldText: 'beta', newText: 'BETA' }] } }), 'edit after re-read');
      assert.equal(readFileSync(p, 'utf8'), after.replace('beta', 'BETA'));
    });
  }

  test('guard: a write-protected file (0444) is refused by edit and write, untouched (even as root)', async () => {
    const [ws, c] = await open({ 'ro.txt': 'alpha\nbeta\n' });
    const p = join(ws, 'ro.txt');
    chmodSync(p, 0o444);
    lgmOk(await c.callTool({ name: 'read', arguments: { path: 'ro.txt' } }), 'read');
    const e = await c.callTool({ name: 'edit', arguments: { path: 'ro.txt', edits: [{ oldText: 'alpha', newText: 'ALPHA' }] } });
    lgmErr(e, 'edit of a 0444 file');
    assert.match(text(e), /ro\.txt/);
    assert.match(text(e), /write-protected/);
    assert.match(text(e), /0444/);
    assert.match(text(e), /chmod u\+w/);
    const w = await c.callTool({ name: 'write', arguments: { path: 'ro.txt', content: 'new\n' } });
    lgmErr(w, 'write of a 0444 file');
    assert.match(text(w), /write-protected/);
    assert.equal(readFileSync(p, 'utf8'), 'alpha\nbeta\n');
    assert.equal(statSync(p).mode & 0o777, 0o444, 'mode unchanged');
  });

  test('guard: editing a UTF-16 file is refused clearly, bytes untouched; read decodes it', async () => {
    const bytes = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('alpha\nbeta\n', 'utf16le')]);
    const [ws, c] = await open({ 'u16.txt': bytes });
    const r = await c.callTool({ name: 'read', arguments: { path: 'u16.txt' } });
    lgmOk(r, 'read');
    assert.match(text(r), /1→alpha/);
    assert.match(text(r), /UTF-16/);
    const e = await c.callTool({ name: 'edit', arguments: { path: 'u16.txt', edits: [{ oldText: 'alpha', newText: 'ALPHA' }] } });
    lgmErr(e, 'edit of a UTF-16 file');
    assert.match(text(e), /u16\.txt/);
    assert.match(text(e), /UTF-16/);
    assert.match(text(e), /\bwrite\b/, 'says how to proceed');
    assert.ok(readFileSync(join(ws, 'u16.txt')).equals(bytes), 'bytes untouched');
  });
});

// ---------------------------------------------------------------- live settings

describe('settings edited live', () => {
  test('live: a deny rule added to settings.json applies to the very next call', async () => {
    const ws = lgmWorkspace({ 'g.txt': 'hello\n', 'h.txt': 'other\n' });
    lgmSettings(ws, { mode: 'acceptEdits' });
    const c = await lgmOpen({ args: ['--root', ws] });
    lgmOk(await c.callTool({ name: 'read', arguments: { path: 'g.txt' } }), 'read before the rule');
    lgmOk(await c.callTool({ name: 'read', arguments: { path: 'h.txt' } }), 'read h before the rule');
    lgmSettings(ws, { mode: 'acceptEdits', permissions: { deny: ['Read(g.txt)', 'Edit(h.txt)'] } });
    const e = await c.callTool({ name: 'edit', arguments: { path: 'h.txt', edits: [{ oldText: 'other', newText: 'changed' }] } });
    lgmErr(e, 'edit after the Edit deny rule');
    assert.match(text(e), /Edit\(h\.txt\)/);
    assert.equal(readFileSync(join(ws, 'h.txt'), 'utf8'), 'other\n');
    const r = await c.callTool({ name: 'read', arguments: { path: 'g.txt' } });
    lgmErr(r, 'read after the deny rule');
    assert.match(text(r), /Read\(g\.txt\)/);
    assert.doesNotMatch(text(r), /hello/);
    lgmOk(await c.callTool({ name: 'read', arguments: { path: 'h.txt' } }), 'another file');
  });

  test('live: a same-size rewrite of settings.json at once swaps the denied file on the next call', async () => {
    const ws = lgmWorkspace({ 'a.txt': 'aaa\n', 'b.txt': 'bbb\n' });
    lgmSettings(ws, { permissions: { deny: ['Read(a.txt)'] } });
    const c = await lgmOpen({ args: ['--root', ws] });
    for (let i = 0; i < 6; i++) {
      const [denied, allowed] = i % 2 === 0 ? ['a.txt', 'b.txt'] : ['b.txt', 'a.txt'];
      lgmSettings(ws, { permissions: { deny: [`Read(${denied})`] } });
      const d = await c.callTool({ name: 'read', arguments: { path: denied } });
      lgmErr(d, `round ${i}: read ${denied}`);
      const a = await c.callTool({ name: 'read', arguments: { path: allowed } });
      lgmOk(a, `round ${i}: read ${allowed}`);
    }
  });

  test('live: saving settings.json broken keeps the previous deny; fixing or deleting it lifts it', async () => {
    const ws = lgmWorkspace({ 'g.txt': 'hello\n' });
    lgmSettings(ws, { permissions: { deny: ['Read(g.txt)', 'Bash(echo:*)'] } });
    const c = await lgmOpen({ args: ['--root', ws] });
    lgmErr(await c.callTool({ name: 'read', arguments: { path: 'g.txt' } }), 'read under the deny');
    for (const broken of ['{"permissions": {"deny": [', '', '{"permissions": {"deny": ["Read(g.txt"]}}']) {
      lgmSettings(ws, broken);
      const r = await c.callTool({ name: 'read', arguments: { path: 'g.txt' } });
      lgmErr(r, `read after saving ${JSON.stringify(broken)}`);
      assert.doesNotMatch(text(r), /hello/);
      const b = await c.callTool({ name: 'bash', arguments: { command: 'echo leaked' } });
      lgmErr(b, `bash after saving ${JSON.stringify(broken)}`);
      assert.doesNotMatch(text(b), /leaked/);
    }
    lgmSettings(ws, { permissions: { deny: [] } });
    const ok = await c.callTool({ name: 'read', arguments: { path: 'g.txt' } });
    lgmOk(ok, 'read after the fix');
    assert.match(text(ok), /hello/);
    lgmSettings(ws, { permissions: { deny: ['Read(g.txt)'] } });
    lgmErr(await c.callTool({ name: 'read', arguments: { path: 'g.txt' } }), 'denied again');
    rmSync(join(ws, '.agentls', 'settings.json'));
    lgmOk(await c.callTool({ name: 'read', arguments: { path: 'g.txt' } }), 'a deleted file\'s rules go');
  });

  test('live: a settings.json broken at start lets read-only calls run and refuses the rest, naming the file', async () => {
    const ws = lgmWorkspace({ 'g.txt': 'hello\n' });
    lgmSettings(ws, '{"permissions": ');
    const c = await lgmOpen({ args: ['--root', ws] });
    const r = await c.callTool({ name: 'read', arguments: { path: 'g.txt' } });
    lgmOk(r, 'read');
    assert.match(text(r), /hello/);
    const b = await c.callTool({ name: 'bash', arguments: { command: 'touch made.txt' } });
    lgmErr(b, 'bash while settings.json is broken');
    assert.match(text(b), /settings\.json/);
    assert.ok(!existsSync(join(ws, 'made.txt')), 'the command ran');
  });
});

// ---------------------------------------------------------------- secrets

describe('secrets', () => {
  const noToken = (x, what) => {
    const s = JSON.stringify(x);
    assert.ok(!s.includes(LGM_TOKEN), `${what} leaks the token: ${s.slice(0, 400)}`);
    assert.ok(!s.includes(lgmAlnum.slice(0, 36)), `${what} leaks the token body`);
  };

  test('secrets: masked in read, grep (with context), bash content and in _meta/structuredContent', async () => {
    const ws = lgmWorkspace({
      'cfg/app.txt': `before\ntoken = "${LGM_TOKEN}"\nafter\n`,
      'cfg/other.txt': `GITHUB_TOKEN=${LGM_TOKEN}\n`,
    });
    const c = await lgmOpen({ args: ['--root', ws] });
    const calls = [
      ['read', { path: 'cfg/app.txt' }],
      ['grep', { pattern: 'ghp_' }],
      ['grep', { pattern: 'before', context: 2 }],
      ['bash', { command: 'cat cfg/app.txt cfg/other.txt' }],
      ['bash', { command: `echo ${LGM_TOKEN} >&2; exit 4` }],
    ];
    for (const [name, args] of calls) {
      const r = await c.callTool({ name, arguments: args });
      noToken(r, `${name} ${JSON.stringify(args).replace(LGM_TOKEN, 'TOKEN')}`);
      assert.match(text(r), /\[REDACTED:[a-z-]+\]/, `${name} shows where the secret was`);
    }
  });

  test('secrets: masked in the edit/write diff details, and the file on disk keeps the real token', async () => {
    const ws = lgmWorkspace({ 'k.txt': `key: ${LGM_TOKEN}\nname: old\n` });
    lgmSettings(ws, { mode: 'acceptEdits' });
    const c = await lgmOpen({ args: ['--root', ws] });
    noToken(await c.callTool({ name: 'read', arguments: { path: 'k.txt' } }), 'read');
    const e = await c.callTool({ name: 'edit', arguments: { path: 'k.txt', edits: [{ oldText: 'name: old', newText: 'name: new' }] } });
    lgmOk(e, 'edit of another line');
    noToken(e, 'edit');
    assert.equal(readFileSync(join(ws, 'k.txt'), 'utf8'), `key: ${LGM_TOKEN}\nname: new\n`, 'the real token stays on disk');
    const e2 = await c.callTool({ name: 'edit', arguments: { path: 'k.txt', edits: [{ oldText: 'name: new', newText: `name: new\nalso: ${LGM_TOKEN}` }] } });
    lgmOk(e2, 'edit adding the token');
    noToken(e2, 'edit adding the token');
    assert.match(JSON.stringify(e2._meta ?? e2.structuredContent ?? {}), /REDACTED/, 'the diff in the details is masked, not dropped');
    const w = await c.callTool({ name: 'write', arguments: { path: 'new.txt', content: `t=${LGM_TOKEN}\n` } });
    lgmOk(w, 'write');
    noToken(w, 'write');
    assert.equal(readFileSync(join(ws, 'new.txt'), 'utf8'), `t=${LGM_TOKEN}\n`);
  });

  test('secrets: bash progress notifications do not carry the token', async () => {
    const ws = lgmWorkspace({});
    const c = await lgmOpen({ args: ['--root', ws] });
    const progress = [];
    const r = await c.callTool(
      { name: 'bash', arguments: { command: `for i in 1 2 3; do echo "tick$i ${LGM_TOKEN}"; sleep 0.15; done` } },
      undefined,
      { onprogress: (p) => progress.push(p), timeout: 30_000 },
    );
    lgmOk(r, 'bash');
    noToken(r, 'bash result');
    assert.ok(progress.some((p) => /tick/.test(p.message ?? '')), `progress carries output: ${JSON.stringify(progress)}`);
    noToken(progress, 'progress notifications');
  });
});

// ---------------------------------------------------------------- robustness

describe('robustness', () => {
  test('robust: 50 concurrent tools/call (read, grep, bash) over one connection, each answered with its own result', async () => {
    const files = {};
    for (let i = 0; i < 50; i++) files[`c/f${i}.txt`] = `content-${i}-end\n`;
    const ws = lgmWorkspace(files);
    const c = await lgmOpen({ args: ['--root', ws] });
    const jobs = [];
    for (let i = 0; i < 50; i++) {
      let call;
      let want;
      switch (i % 3) {
        case 0:
          call = { name: 'read', arguments: { path: `c/f${i}.txt` } };
          want = new RegExp(`^c/f${i}\\.txt, lines 1-1 of 1\\n\\s+1→content-${i}-end$`);
          break;
        case 1:
          call = { name: 'grep', arguments: { pattern: `content-${i}-end`, literal: true } };
          want = new RegExp(`^c/f${i}\\.txt:1: content-${i}-end$`);
          break;
        default:
          // echo is read-only, so the default mode runs it without asking.
          call = { name: 'bash', arguments: { command: `echo out-${i}` } };
          want = new RegExp(`^out-${i}$`);
      }
      jobs.push(c.callTool(call, undefined, { timeout: 30_000 }).then((r) => ({ i, call, r, want })));
    }
    const done = await Promise.all(jobs);
    const wrong = done.filter(({ r, want }) => r.isError || !want.test(text(r).trim()));
    assert.deepEqual(
      wrong.map(({ i, call, r }) => `call ${i} ${call.name} ${JSON.stringify(call.arguments)} → ${JSON.stringify(r)}`),
      [],
      `${wrong.length} of 50 concurrent calls answered wrongly`,
    );
    assert.equal(new Set(done.map(({ r }) => r._meta?.callId)).size, 50, 'each call has its own callId');
  });

  test('robust: a truncated JSON line among in-flight calls gets -32700 (id null); every call is still answered', async () => {
    const files = {};
    for (let i = 0; i < 20; i++) files[`m/f${i}.txt`] = `body-${i}\n`;
    const ws = lgmWorkspace(files);
    const c = await lgmOpen({ args: ['--root', ws] });
    const rawLines = [];
    let buf = '';
    // The SDK drops a reply it cannot route (id null); read stdout alongside it.
    c.transport._process.stdout.on('data', (d) => {
      buf += d;
      let i;
      while ((i = buf.indexOf('\n')) >= 0) {
        rawLines.push(buf.slice(0, i));
        buf = buf.slice(i + 1);
      }
    });
    const jobs = [];
    for (let i = 0; i < 20; i++) {
      jobs.push(c.callTool({ name: 'read', arguments: { path: `m/f${i}.txt` } }, undefined, { timeout: 30_000 }).then((r) => ({ i, r })));
      // A line cut short: a stream decoder would swallow the next request into it.
      if (i === 10) c.transport._process.stdin.write('{"jsonrpc":"2.0","id":99999,"method":\n');
    }
    for (const { i, r } of await Promise.all(jobs)) {
      lgmOk(r, `read ${i}`);
      assert.match(text(r), new RegExp(`1→body-${i}$`));
    }
    await waitFor(() => rawLines.some((l) => /"code":-32700/.test(l)), 3_000, 'the -32700 reply');
    const perr = JSON.parse(rawLines.find((l) => /"code":-32700/.test(l)));
    assert.equal(perr.id, null);
    assert.ok(!rawLines.some((l) => /"id":99999/.test(l)), 'nothing answers the id of the broken line');
    const r = await c.callTool({ name: 'grep', arguments: { pattern: 'body-3', literal: true } });
    lgmOk(r, 'a call after the malformed line');
  });
});
