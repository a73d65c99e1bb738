// Shared helpers: spawn `agentls mcp` with the official TypeScript SDK client.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ElicitRequestSchema, ListRootsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { mkdtempSync, realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export const here = dirname(fileURLToPath(import.meta.url));

export function agentlsBin() {
  const bin = process.env.AGENTLS_BIN;
  if (!bin) throw new Error('AGENTLS_BIN is not set: run test/mcp/run.sh');
  return bin;
}

export function tempDir(prefix) {
  return realpathSync(mkdtempSync(join(tmpdir(), prefix)));
}

// The filesystem reference server's entry point, run with this node.
export const filesystemServer = join(here, 'node_modules', '@modelcontextprotocol', 'server-filesystem', 'dist', 'index.js');

/**
 * connect starts `agentls mcp` and connects a Client.
 * opts.roots: folder paths the client offers as MCP roots (none: no roots capability).
 * opts.args: extra agentls arguments (e.g. ['--root', dir]).
 * opts.answer: declares elicitation; answer(params) returns the ElicitResult,
 * and client.asked collects every elicitation request's params.
 */
export async function connect({ roots, args = [], cwd, env = {}, answer, name = 'agentls-mcp-test' } = {}) {
  const capabilities = {};
  if (roots) capabilities.roots = { listChanged: true };
  if (answer) capabilities.elicitation = {};
  const client = new Client({ name, version: '1.0.0' }, { capabilities });
  if (roots) {
    client.setRequestHandler(ListRootsRequestSchema, async () => ({
      roots: roots.map((p) => ({ uri: pathToFileURL(p).href, name: p.split('/').pop() })),
    }));
  }
  client.asked = [];
  if (answer) {
    client.setRequestHandler(ElicitRequestSchema, async (req) => {
      client.asked.push(req.params);
      return answer(req.params);
    });
  }
  const transport = new StdioClientTransport({
    command: agentlsBin(),
    args: ['mcp', '--log-level', 'info', ...args],
    cwd,
    env: { ...process.env, AGENTLS_TEST_TOOLS: '1', ...env },
    stderr: 'pipe',
  });
  const stderr = [];
  transport.stderr?.on('data', (b) => stderr.push(b.toString()));
  try {
    await client.connect(transport);
  } catch (e) {
    await sleep(50);
    throw new Error(`agentls mcp ${args.join(' ')} did not start: ${e.message}\nstderr: ${stderr.join('')}`);
  }
  client.stderrText = () => stderr.join('');
  return client;
}

export function text(result) {
  return (result.content ?? []).filter((c) => c.type === 'text').map((c) => c.text).join('\n');
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

export function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

export async function waitFor(pred, ms, what) {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await pred()) return;
    await sleep(25);
  }
  throw new Error(`timed out after ${ms} ms waiting for ${what}`);
}
