// Benchmark: `agentls mcp` vs @modelcontextprotocol/server-filesystem, both
// driven by the official TypeScript SDK client in the same run.
// Usage: AGENTLS_BIN=/path/agentls node bench/mcp/bench.mjs  (or bench/mcp/run.sh);
// AGENTLS_REF_BIN=/path/other-agentls adds a reference build to the turns.
// Prints a markdown table of p50/p99 for rounds of 200 sequential small-file
// reads and for connect+initialize, and exits 1 when a target is missed
// (agentls read p50 <= 1.5x the go-sdk floor server's and <= 0.6x
// server-filesystem's; connect+initialize <= 50 ms).
import { createRequire } from 'node:module';
import { mkdtempSync, writeFileSync, realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const testDir = join(here, '..', '..', 'test', 'mcp');
const require = createRequire(join(testDir, 'package.json'));
const { Client } = await import(require.resolve('@modelcontextprotocol/sdk/client/index.js'));
const { StdioClientTransport } = await import(require.resolve('@modelcontextprotocol/sdk/client/stdio.js'));
const fsServer = join(testDir, 'node_modules', '@modelcontextprotocol', 'server-filesystem', 'dist', 'index.js');

const READS = 200;
const ROUNDS = 5;
const CONNECTS = 20;
const TARGET_READ_RATIO = 0.6; // of server-filesystem's read p50
const TARGET_SDK_RATIO = 1.5; // of the go-sdk floor server's read p50
const TARGET_CONNECT_MS = 50;

const bin = process.env.AGENTLS_BIN;
if (!bin) throw new Error('set AGENTLS_BIN');
const ws = realpathSync(mkdtempSync(join(tmpdir(), 'agentls-bench-')));
const files = [];
for (let i = 0; i < 20; i++) {
  const f = join(ws, `f${i}.txt`);
  writeFileSync(f, Array.from({ length: 40 }, (_, j) => `line ${j} of file ${i}`).join('\n') + '\n');
  files.push(f);
}

const peers = {
  agentls: { command: bin, args: ['mcp', '--root', ws], call: (f) => ({ name: 'read', arguments: { path: f } }) },
  'server-filesystem': { command: process.execPath, args: [fsServer, ws], call: (f) => ({ name: 'read_text_file', arguments: { path: f } }) },
};

function pct(xs, p) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)];
}

async function open(peer) {
  const client = new Client({ name: 'bench', version: '1' }, { capabilities: {} });
  const t0 = performance.now();
  await client.connect(new StdioClientTransport({ command: peer.command, args: peer.args, env: peer.env, stderr: 'ignore' }));
  return { client, ms: performance.now() - t0 };
}

// The peers take turns, ROUNDS times: in each turn a fresh connection
// (a new server process) gets 20 warm-up calls, then READS pings and READS
// sequential reads. Taking turns puts a load spike on this machine on both
// peers alike instead of on whichever ran at the time; the percentiles are
// over all turns.
// The floor (not a peer): a Go server that answers without doing anything.
const floor = process.env.NULLSERVER_BIN;
if (floor) peers.floor = { command: floor, args: [], call: () => ({ name: 'none', arguments: {} }) };
// The library floor: the smallest server the go-sdk makes (bench/mcp/sdkserver).
const sdkFloor = process.env.SDKSERVER_BIN;
if (sdkFloor) peers.sdkfloor = { command: sdkFloor, args: [], call: () => ({ name: 'none', arguments: {} }) };
// The same server answering each read with the text and _meta agentls's
// read gives, and doing nothing else: what an answer of that size costs
// the client and the SDK (not a target; it shows how much of agentls's
// read time is its own work).
if (sdkFloor) peers.sdkanswer = { command: sdkFloor, args: [], call: (f) => ({ name: 'read', arguments: { path: f } }) };

// A reference build of agentls (say, the commit before a change), measured
// in the same turns: AGENTLS_REF_BIN=/path/agentls.
const refBin = process.env.AGENTLS_REF_BIN;
if (refBin) peers['agentls-ref'] = { command: refBin, args: ['mcp', '--root', ws], call: (f) => ({ name: 'read', arguments: { path: f } }) };

const results = {};
for (const name of Object.keys(peers)) results[name] = { connects: [], reads: [], pings: [] };
for (const peer of Object.values(peers)) await (await open(peer)).client.close(); // warm the client
for (let i = 0; i < CONNECTS; i++) {
  for (const [name, peer] of Object.entries(peers)) {
    const { client, ms } = await open(peer);
    results[name].connects.push(ms);
    await client.close();
  }
}
// Round -1 is not recorded: it warms this client's own code (the JIT),
// which would otherwise slow whichever peer is measured first. The order
// of the peers alternates from round to round for the same reason.
for (let round = -1; round < ROUNDS; round++) {
  const order = Object.entries(peers);
  if (round % 2) order.reverse();
  for (const [name, peer] of order) {
    const { client } = await open(peer);
    const r = round < 0 ? { reads: [], pings: [] } : results[name];
    for (let i = 0; i < 20; i++) await client.callTool(peer.call(files[i % files.length])); // warm-up
    // The floor every call pays: the client, the stdio transport and the
    // server's dispatch, with no tool work (MCP ping).
    for (let i = 0; i < READS; i++) {
      const t0 = performance.now();
      await client.ping();
      r.pings.push(performance.now() - t0);
    }
    for (let i = 0; i < READS; i++) {
      const t0 = performance.now();
      const res = await client.callTool(peer.call(files[i % files.length]));
      r.reads.push(performance.now() - t0);
      if (res.isError) throw new Error(`${name}: ${JSON.stringify(res.content)}`);
    }
    await client.close();
  }
}

const f = (x) => x.toFixed(2);
console.log(`| peer | read p50 ms | read p99 ms | ping p50 ms (floor) | connect+initialize p50 ms | connect+initialize p99 ms |`);
console.log(`| --- | ---: | ---: | ---: | ---: | ---: |`);
for (const [name, r] of Object.entries(results)) {
  const label = {
    floor: 'floor: a Go server doing nothing (`bench/mcp/nullserver`)',
    sdkfloor: 'library floor: the smallest go-sdk server (`bench/mcp/sdkserver`)',
    sdkanswer: "the same server answering with agentls's read text and `_meta` (`bench/mcp/sdkserver` tool read)",
    'agentls-ref': 'reference: `$AGENTLS_REF_BIN`',
  }[name] ?? name;
  console.log(`| ${label} | ${f(pct(r.reads, 50))} | ${f(pct(r.reads, 99))} | ${f(pct(r.pings, 50))} | ${f(pct(r.connects, 50))} | ${f(pct(r.connects, 99))} |`);
}
// The spawn floor: starting the same binary for --version, no MCP at all.
{
  const { execFileSync } = await import('node:child_process');
  const spawns = [];
  for (let i = 0; i < CONNECTS; i++) {
    const t0 = performance.now();
    execFileSync(peers.agentls.command, ['--version']);
    spawns.push(performance.now() - t0);
  }
  console.log(`\nSpawn floor: \`agentls --version\` p50 ${f(pct(spawns, 50))} ms from this client.`);
}
const a = results.agentls, s = results['server-filesystem'], k = results.sdkfloor;
const ratio = pct(a.reads, 50) / pct(s.reads, 50);
const sdkRatio = k ? pct(a.reads, 50) / pct(k.reads, 50) : NaN; // NaN: no floor server given
const same = results.sdkanswer;
const answerRatio = same ? pct(same.reads, 50) / pct(k.reads, 50) : NaN;
console.log(`\n${ROUNDS} rounds of ${READS} sequential reads and ${CONNECTS} connects each, the peers taking turns (a fresh connection per turn). agentls read p50 / server-filesystem's: ${ratio.toFixed(2)} (target <= ${TARGET_READ_RATIO}); / the go-sdk floor server's: ${sdkRatio.toFixed(2)} (target <= ${TARGET_SDK_RATIO}; the floor server giving agentls's answer: ${answerRatio.toFixed(2)} of its own); agentls connect+initialize p50 ${f(pct(a.connects, 50))} ms (target <= ${TARGET_CONNECT_MS} ms).`);
let ok = true;
if (ratio > TARGET_READ_RATIO) { console.log('TARGET MISSED: read p50 vs server-filesystem'); ok = false; }
if (sdkRatio > TARGET_SDK_RATIO) { console.log('TARGET MISSED: read p50 vs the go-sdk floor server'); ok = false; }
if (pct(a.connects, 50) > TARGET_CONNECT_MS) { console.log('TARGET MISSED: connect+initialize'); ok = false; }
process.exit(ok ? 0 : 1);
