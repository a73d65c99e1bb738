// Results that fit the host: `agentls mcp` sizes every result for the
// client that connected (clientInfo.name), and the tool descriptions it
// lists state the numbers in force for that host (docs/tools.md, "Results
// and the host's output cap").
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { connect, tempDir, text } from './helpers.mjs';

// The host table: clientInfo.name → the cap agentls keeps to (bytes, lines).
const hosts = [
  { name: 'codex-mcp-client', bytes: 10000 },
  { name: 'gemini-cli-mcp-client', bytes: 39000 },
  { name: 'claude-code', bytes: 25000 },
  { name: 'opencode', bytes: 51200, lines: 2000 },
  { name: 'some-other-client', bytes: 39000 },
];

const total = 3000;
let ws;

before(() => {
  ws = tempDir('agentls-mcp-budget-');
  const lines = [];
  for (let i = 1; i <= total; i++) lines.push(`line ${i} ${'x'.repeat(i % 50)}`);
  writeFileSync(join(ws, 'big.txt'), lines.join('\n') + '\n');
  const short = [];
  for (let i = 1; i <= total; i++) short.push(`s${i}`);
  writeFileSync(join(ws, 'short.txt'), short.join('\n') + '\n');
  mkdirSync(join(ws, 'src'));
  for (let i = 0; i < 400; i++) writeFileSync(join(ws, 'src', `f${i}.txt`), `needle ${i}\n`.repeat(20));
  mkdirSync(join(ws, '.agentls'));
  writeFileSync(join(ws, '.agentls', 'settings.json'), JSON.stringify({ permissions: { allow: ['bash'] } }));
});

const lineCount = (s) => s.split('\n').length;
const bytes = (s) => Buffer.byteLength(s, 'utf8');

function fits(host, what, result) {
  const s = text(result);
  assert.ok(bytes(s) <= host.bytes, `${host.name} ${what}: ${bytes(s)} bytes, over the cap of ${host.bytes}`);
  if (host.lines) assert.ok(lineCount(s) <= host.lines, `${host.name} ${what}: ${lineCount(s)} lines, over the cap of ${host.lines}`);
  return s;
}

for (const host of hosts) {
  test(`${host.name}: results within ${host.bytes} bytes${host.lines ? ` and ${host.lines} lines` : ''}, continuation exact, descriptions state it`, async () => {
    const client = await connect({ roots: [ws], name: host.name });
    try {
      const { tools } = await client.listTools();
      const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
      const readBytes = Math.min(51200, host.bytes);
      const readLines = Math.min(2000, host.lines ?? 2000);
      assert.match(byName.read.description, new RegExp(`A result is at most ${readLines} lines and ${readBytes} bytes`));
      assert.match(byName.bash.description, new RegExp(`A result is at most ${Math.min(2000, host.lines ?? 2000)} lines and ${readBytes} bytes`));
      assert.match(byName.ls.description, new RegExp(`at most ${host.lines ? `${host.lines} lines and ` : ''}${Math.min(65536, host.bytes)} bytes`));
      for (const t of tools) assert.ok(t.title, `${t.name} has a title`);

      // read big.txt page by page: every page within the cap, the notice's
      // offset continues with the next line, no line lost or repeated.
      for (const file of ['big.txt', 'short.txt']) {
        let next = 1;
        let pages = 0;
        while (next <= total) {
          pages++;
          const r = await client.callTool({ name: 'read', arguments: { path: file, offset: next } });
          const s = fits(host, `read ${file} offset ${next}`, r);
          const head = s.match(/^(\S+), lines (\d+)-(\d+) of (\d+)/);
          assert.ok(head, `header of ${s.slice(0, 80)}`);
          assert.equal(Number(head[2]), next);
          const numbered = [...s.matchAll(/^ *(\d+)→/gm)].map((m) => Number(m[1]));
          assert.equal(numbered[0], next);
          const last = numbered[numbered.length - 1];
          assert.equal(Number(head[3]), last, 'header names the last line shown');
          assert.equal(numbered.length, last - next + 1, 'every line in between');
          if (last === total) break;
          const notice = s.match(/\[Showing lines (\d+)-(\d+) of (\d+)[^\]]*Use offset=(\d+) to continue\.\]$/);
          assert.ok(notice, `continuation notice at the end of page ${pages}: ${s.slice(-200)}`);
          assert.deepEqual([Number(notice[1]), Number(notice[2]), Number(notice[4])], [next, last, last + 1]);
          next = last + 1;
        }
        assert.ok(pages > 1, `${file} took ${pages} page(s); the test needs a cut`);
      }

      const g = await client.callTool({ name: 'grep', arguments: { pattern: 'needle', limit: 2000, context: 2 } });
      fits(host, 'grep', g);
      const b = await client.callTool({ name: 'bash', arguments: { command: 'seq 200000' } });
      const bs = fits(host, 'bash', b);
      const m = bs.match(/showing lines (\d+)-(\d+) of (\d+)/);
      assert.ok(m, `bash notice: ${bs.slice(0, 200)}`);
      const shown = bs.slice(bs.indexOf(']\n') + 2).split('\n');
      assert.equal(shown[0], m[1], 'the first line shown is the one the notice names');
      assert.equal(shown[shown.length - 1], '200000');
      const l = await client.callTool({ name: 'ls', arguments: { path: 'src', limit: 400 } });
      fits(host, 'ls', l);
    } finally {
      await client.close();
    }
  });
}

after(() => {});
