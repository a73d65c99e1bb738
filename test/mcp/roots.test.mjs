// Stale MCP roots, with the official TypeScript SDK client declaring roots:
// one root that cannot be opened used to drop the good ones too, and the
// workspace fell back to the server's working directory. The good roots are
// kept and the stale one named; with none usable every call fails naming
// the roots.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { connect, tempDir, text } from './helpers.mjs';

const clients = [];
after(async () => {
  for (const c of clients) await c.close().catch(() => {});
});

async function open(opts) {
  const c = await connect(opts);
  clients.push(c);
  return c;
}

function dirs() {
  const cwd = tempDir('agentls-roots-cwd-');
  const good = tempDir('agentls-roots-good-');
  writeFileSync(join(cwd, 'cwd-secret.txt'), 'CWD SECRET\n');
  writeFileSync(join(good, 'g.txt'), 'good root\n');
  writeFileSync(join(good, 'plain.txt'), 'a file\n');
  return { cwd, good, missing: join(good, 'gone'), file: join(good, 'plain.txt') };
}

test('a stale root is skipped and named; the good root stays the workspace', async () => {
  const d = dirs();
  const client = await open({ roots: [d.good, d.missing], cwd: d.cwd });
  const r = await client.callTool({ name: 'read', arguments: { path: 'g.txt' } });
  assert.equal(r.isError ?? false, false, text(r));
  assert.match(text(r), /good root/);
  assert.ok(text(r).includes(d.missing), 'the first result names the skipped root: ' + text(r));
  const again = await client.callTool({ name: 'read', arguments: { path: 'g.txt' } });
  assert.ok(!text(again).includes(d.missing), 'the note comes once: ' + text(again));
  const cwd = await client.callTool({ name: 'read', arguments: { path: join(d.cwd, 'cwd-secret.txt') } });
  assert.equal(cwd.isError, true, 'the working directory is no workspace folder: ' + text(cwd));
  assert.doesNotMatch(text(cwd), /CWD SECRET/);
});

test('with no usable root every call fails naming the roots, never the working directory', async () => {
  const d = dirs();
  const client = await open({ roots: [d.missing, d.file], cwd: d.cwd });
  for (const [name, args] of [
    ['read', { path: 'cwd-secret.txt' }],
    ['ls', {}],
    ['grep', { pattern: 'CWD SECRET' }],
    ['write', { path: 'new.txt', content: 'x' }],
  ]) {
    const r = await client.callTool({ name, arguments: args });
    assert.equal(r.isError, true, `${name}: ${text(r)}`);
    assert.doesNotMatch(text(r), /CWD SECRET/);
    assert.match(text(r), /No workspace folder/, `${name}: ${text(r)}`);
    assert.ok(text(r).includes(d.missing) && text(r).includes(d.file), `${name} names both roots: ${text(r)}`);
  }
  assert.equal(existsSync(join(d.cwd, 'new.txt')), false);
});
