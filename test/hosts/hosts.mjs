// Shared helpers of the host tests: a temp workspace whose agentls is
// wrapped in a script that tees its MCP stdio to files (so a test sees every
// message between the host and agentls, elicitations included), and a host
// run with a deadline.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export function agentlsBin() {
  const bin = process.env.AGENTLS_BIN;
  if (!bin) throw new Error('AGENTLS_BIN is not set: run test/hosts/run.sh');
  return bin;
}

// hostBin names a host's executable, which test/hosts/run.sh installs and
// passes in the environment (AGENTLS_CLAUDE, AGENTLS_CODEX, …).
export function hostBin(envName) {
  const bin = process.env[envName];
  if (!bin || !existsSync(bin)) throw new Error(`${envName} is not set or missing: run test/hosts/run.sh`);
  return bin;
}

const sq = (s) => `'${String(s).replace(/'/g, `'\\''`)}'`;

// Temp dirs of this test file's workspaces, removed when it exits
// (KEEP_TMP=1 keeps them to look at the logs).
const made = [];
process.on('exit', () => {
  if (process.env.KEEP_TMP) return;
  for (const d of made) rmSync(d, { recursive: true, force: true });
});

/**
 * workspace makes a temp dir with ws/ (the files given, path → text), home/
 * (the host's HOME) and wrap.sh, which runs `agentls mcp --root ws` with its
 * stdin and stdout copied to mcp-in.log and mcp-out.log.
 */
export function workspace(files) {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'agentls-hosts-')));
  made.push(dir);
  const ws = join(dir, 'ws');
  const home = join(dir, 'home');
  mkdirSync(ws);
  mkdirSync(home);
  for (const [p, text] of Object.entries(files)) {
    mkdirSync(dirname(join(ws, p)), { recursive: true });
    writeFileSync(join(ws, p), text);
  }
  const wrap = join(dir, 'wrap.sh');
  writeFileSync(wrap, [
    '#!/bin/sh',
    `tee -a ${sq(join(dir, 'mcp-in.log'))} | ${sq(agentlsBin())} mcp --root ${sq(ws)} 2>>${sq(join(dir, 'mcp-err.log'))} | tee -a ${sq(join(dir, 'mcp-out.log'))}`,
    '',
  ].join('\n'));
  chmodSync(wrap, 0o755);
  return {
    dir, ws, home, wrap,
    file: (p) => readFileSync(join(ws, p), 'utf8'),
    traffic: () => traffic(dir),
    // resetTraffic empties the stdio logs before another host run.
    resetTraffic: () => { for (const f of ['mcp-in.log', 'mcp-out.log']) writeFileSync(join(dir, f), ''); },
    stderr: () => (existsSync(join(dir, 'mcp-err.log')) ? readFileSync(join(dir, 'mcp-err.log'), 'utf8') : ''),
  };
}

function lines(path) {
  if (!existsSync(path)) return [];
  const out = [];
  for (const l of readFileSync(path, 'utf8').split('\n')) {
    if (!l.trim()) continue;
    try { out.push(JSON.parse(l)); } catch { out.push({ unparsed: l }); }
  }
  return out;
}

// traffic is the MCP stdio both ways: sent (host → agentls), received
// (agentls → host).
function traffic(dir) {
  return { sent: lines(join(dir, 'mcp-in.log')), received: lines(join(dir, 'mcp-out.log')) };
}

/**
 * elicitations lists the params of every elicitation agentls put to the
 * host: an `elicitation/create` request, or (MCP 2026-07-28) an input
 * request carried in a tool call's `input_required` result.
 */
export function elicitations(t) {
  const out = [];
  for (const m of t.received) {
    if (m.method === 'elicitation/create') out.push(m.params);
    for (const r of Object.values(m.result?.inputRequests || {})) {
      if (r?.method === 'elicitation/create') out.push(r.params);
    }
  }
  return out;
}

/**
 * elicitationAnswers lists the host's answers to those questions: the
 * result of an `elicitation/create` request, or the input responses a
 * retried tool call carries.
 */
export function elicitationAnswers(t) {
  const asked = new Set(t.received.filter((m) => m.method === 'elicitation/create').map((m) => m.id));
  const out = [];
  for (const m of t.sent) {
    if (asked.has(m.id) && m.result) out.push(m.result);
    for (const r of Object.values(m.params?.inputResponses || {})) out.push(r);
  }
  return out;
}

/**
 * callResults pairs each tools/call the host sent with agentls's final
 * answer to it: [{name, arguments, text, isError}]. (A call answered with
 * input_required and retried is listed once per final answer.)
 */
export function callResults(t) {
  const calls = new Map();
  for (const m of t.sent) if (m.method === 'tools/call') calls.set(m.id, m.params);
  const out = [];
  for (const m of t.received) {
    if (!calls.has(m.id) || !m.result || m.result.resultType === 'input_required') continue;
    const p = calls.get(m.id);
    const text = (m.result.content || []).filter((c) => c.type === 'text').map((c) => c.text).join('\n');
    out.push({ name: p.name, arguments: p.arguments, text, isError: !!m.result.isError });
  }
  return out;
}

/**
 * run starts a host command and resolves with {code, signal, stdout,
 * stderr, ms} when it exits; past timeoutMs it is killed (its process
 * group) and the result says so.
 */
export function run(cmd, args, { cwd, env, timeoutMs = 60000 }) {
  return new Promise((resolve) => {
    const t0 = Date.now();
    const p = spawn(cmd, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (d) => { stdout += d; });
    p.stderr.on('data', (d) => { stderr += d; });
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      try { process.kill(-p.pid, 'SIGKILL'); } catch { /* already gone */ }
    }, timeoutMs);
    p.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr, ms: Date.now() - t0, timedOut });
    });
  });
}

// describeRun is a failure message's tail: how the host run ended and what
// it printed, so a failing test explains itself.
export function describeRun(r, ws) {
  return `\n--- host exit ${r.code}${r.timedOut ? ' (killed at the deadline)' : ''} after ${r.ms} ms${ws ? ` in ${ws.dir} (KEEP_TMP=1 keeps it)` : ''}\n--- stdout\n${r.stdout.slice(-4000)}\n--- stderr\n${r.stderr.slice(-4000)}\n--- agentls stderr\n${ws ? ws.stderr().slice(-2000) : ''}`;
}

// BIG is a 3,000-line file of ~55 bytes a line (~160 KB): more than any
// host keeps of one tool result.
export const BIG = Array.from({ length: 3000 }, (_, i) => `line ${i + 1} of the big file, padded to look like code;`).join('\n') + '\n';

/**
 * bigRead is the scenario "read BIG, then continue where the notice says":
 * script for the model, and check(shown, results, why), which asserts that
 * the first result reached the model whole (header, every line up to the
 * last one it states, the continuation notice at the end, nothing cut by
 * the host) and that the continuation it names starts at the next line.
 * shown: what the model was shown per call (a host may put a prefix before
 * agentls's text); results: agentls's answers (callResults); description:
 * read's description as the host offered it to the model, whose stated
 * budget the result must keep.
 */
export function bigRead() {
  let next = null;
  const script = [
    { tool: 'read', input: { path: 'big.txt' } },
    (results) => {
      // The newest result is the read's (Claude Code's own ToolSearch may come first).
      const m = /offset=(\d+)/.exec(results.at(-1) || '');
      next = m ? Number(m[1]) : null;
      return next ? { tool: 'read', input: { path: 'big.txt', offset: next, limit: 5 } } : { text: 'no continuation offered' };
    },
    { text: 'finished' },
  ];
  function check(shown, results, why = '', description = null) {
    const first = results[0];
    assert.ok(first, `agentls answered no read${why}`);
    if (description !== null) {
      // The numbers the host shows the model hold for this host.
      const m = /at most ([\d,]+) lines (?:and|or) ([\d,]+) bytes/i.exec(description || '');
      assert.ok(m, `read's description as the model got it states its budget: ${description}`);
      const bytes = Number(m[2].replace(/,/g, ''));
      const lines = Number(m[1].replace(/,/g, ''));
      assert.ok(Buffer.byteLength(first.text) <= bytes, `the result (${Buffer.byteLength(first.text)} bytes) is within the ${bytes} bytes the description states`);
      assert.ok(first.text.split('\n').length <= lines, `the result is within the ${lines} lines the description states`);
    }
    assert.ok(shown.length >= 1, why);
    const text = shown[0];
    assert.ok(text.endsWith(first.text), `the model got agentls's whole result (${Buffer.byteLength(first.text)} bytes sent, ${Buffer.byteLength(text)} shown): …${text.slice(-300)}`);
    assert.doesNotMatch(text, /truncated/i, 'the host cut nothing out');
    const head = /big\.txt, lines 1-(\d+) of 3000\n/.exec(text);
    assert.ok(head, `the header is there: ${text.slice(0, 200)}`);
    const last = Number(head[1]);
    assert.ok(last > 1 && last < 3000, `a partial read: ${last}`);
    for (const n of [1, Math.floor(last / 2), last]) {
      assert.ok(text.includes(`${n}→line ${n} of the big file`), `line ${n} is shown`);
    }
    assert.ok(!text.includes(`${last + 1}→line ${last + 1} `), 'no line after the last one the header states');
    assert.match(text, new RegExp(`\\[Showing lines 1-${last} of 3000[^\\]]*offset=${last + 1}[^\\]]*\\]\\s*$`), `the continuation notice ends the result: …${text.slice(-300)}`);
    assert.equal(next, last + 1, 'the model continued at the offset the notice gave');
    assert.ok(shown[1], `the model's continuation was answered${why}`);
    assert.match(shown[1], new RegExp(`big\\.txt, lines ${last + 1}-${last + 5} of 3000\\n\\s*${last + 1}→line ${last + 1} of the big file`), `the continuation starts where the notice said: ${shown[1].slice(0, 300)}`);
  }
  return { script, check };
}

/**
 * probeText is `bytes` bytes of numbered lines of lineBytes bytes each
 * ("probe line 000001 xxx…\n"), the last one cut to fit: what
 * probe-server.mjs's tool returns.
 */
export function probeText(bytes, lineBytes = 64) {
  const out = [];
  let size = 0;
  for (let n = 1; size < bytes; n++) {
    let l = `probe line ${String(n).padStart(6, '0')} `.padEnd(lineBytes - 1, 'x') + '\n';
    if (size + l.length > bytes) l = l.slice(0, bytes - size);
    out.push(l);
    size += l.length;
  }
  return out.join('');
}

const PROBE = fileURLToPath(new URL('./probe-server.mjs', import.meta.url));

/**
 * probeWorkspace is a workspace whose MCP server, in agentls's place and
 * under its name, is probe-server.mjs: the host's own cap on a tool result,
 * measured without agentls.
 */
export function probeWorkspace() {
  const w = workspace({});
  writeFileSync(w.wrap, [
    '#!/bin/sh',
    `tee -a ${sq(join(w.dir, 'mcp-in.log'))} | ${sq(process.execPath)} ${sq(PROBE)} | tee -a ${sq(join(w.dir, 'mcp-out.log'))}`,
    '',
  ].join('\n'));
  return w;
}

/**
 * probeKept is what of probeText(bytes) a host passed to its model (shown:
 * the text the model got for that call): {head, tail}, the numbered lines
 * kept from the start and from the end.
 */
function probeKept(shown, bytes) {
  const numbers = (text) => [...text.matchAll(/probe line (\d{6}) /g)].map((m) => Number(m[1]));
  const total = numbers(probeText(bytes)).length; // a last line cut inside its number is not counted
  const seen = new Set(numbers(shown));
  let head = 0;
  while (seen.has(head + 1)) head++;
  let tail = 0;
  while (head + tail < total && seen.has(total - tail)) tail++;
  return { head, tail };
}

/**
 * capProbe is the scenario "measure the host's cap": the model calls the
 * probe with a result of exactly agentls's budget for the host (bytes, and
 * lines when the host counts lines), then with the largest result the host
 * was measured to pass whole (cap[0] bytes, capLines[0] short lines) and
 * the smallest it cuts (cap[1], capLines[1]). check(shown) asserts each,
 * and returns what the host kept of the first result it cut.
 */
export function capProbe({ bytes, lines = 0, cap, capLines = null }) {
  const short = (n) => ({ bytes: 20 * n, lineBytes: 20 });
  const probes = [{ bytes }, { bytes: cap[0] }, { bytes: cap[1] }];
  if (capLines) probes.push(short(capLines[0]), short(capLines[1]));
  const script = [...probes.map((input) => ({ tool: 'probe', input })), { text: 'finished' }];
  function check(shown, why = '') {
    const got = shown.filter((s) => /probe line 000001 /.test(s));
    assert.equal(got.length, probes.length, `the model got every probe's result${why}`);
    const whole = (i) => got[i].includes(probeText(probes[i].bytes, probes[i].lineBytes));
    const size = (i) => (probes[i].lineBytes ? `${probes[i].bytes / probes[i].lineBytes} lines` : `${probes[i].bytes} bytes`);
    assert.ok(bytes <= cap[0], `agentls's budget of ${bytes} bytes is within the ${cap[0]} measured`);
    assert.ok(whole(0), `a result of ${size(0)} (agentls's budget for this host) reached the model whole${why}`);
    assert.ok(whole(1), `a result of ${size(1)} reached the model whole${why}`);
    assert.ok(!whole(2), `the host cut a result of ${size(2)}${why}`);
    if (capLines) {
      assert.ok(lines && lines <= capLines[0], `agentls's budget of ${lines} lines is within the ${capLines[0]} measured`);
      assert.ok(whole(3), `a result of ${size(3)} reached the model whole${why}`);
      assert.ok(!whole(4), `the host cut a result of ${size(4)}${why}`);
    }
    return probeKept(got[2], probes[2].bytes);
  }
  return { script, check };
}
