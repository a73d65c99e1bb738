// Shared helpers of the host tests: a temp workspace whose agentls is
// wrapped in a script that tees its MCP stdio to files (so a test sees every
// message between the host and agentls, elicitations included), and a host
// run with a deadline.
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

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

/**
 * workspace makes a temp dir with ws/ (the files given, path → text), home/
 * (the host's HOME) and wrap.sh, which runs `agentls mcp --root ws` with its
 * stdin and stdout copied to mcp-in.log and mcp-out.log.
 */
export function workspace(files) {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'agentls-hosts-')));
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
  return `\n--- host exit ${r.code}${r.timedOut ? ' (killed at the deadline)' : ''} after ${r.ms} ms\n--- stdout\n${r.stdout.slice(-4000)}\n--- stderr\n${r.stderr.slice(-4000)}\n--- agentls stderr\n${ws ? ws.stderr().slice(-2000) : ''}`;
}
