// Ending agentls mcp: SIGTERM while a command runs, and the client closing
// stdin, both end the server promptly and leave no process behind.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { agentlsBin, tempDir, alive, waitFor } from './helpers.mjs';

async function startWithSleep() {
  const ws = tempDir('agentls-shutdown-');
  mkdirSync(join(ws, '.agentls'));
  writeFileSync(join(ws, '.agentls', 'settings.json'), JSON.stringify({ permissions: { allow: ['bash'] } }));
  const transport = new StdioClientTransport({ command: agentlsBin(), args: ['mcp', '--root', ws], env: { ...process.env }, stderr: 'ignore' });
  const client = new Client({ name: 'agentls-shutdown-test', version: '1.0.0' });
  await client.connect(transport);
  const pidFile = join(ws, 'sleep.pid');
  const call = client.callTool({ name: 'bash', arguments: { command: `echo $$ > ${pidFile}; exec sleep 100` } }, undefined, { timeout: 60_000 });
  call.catch(() => {});
  let sleepPid = 0;
  await waitFor(() => {
    try {
      sleepPid = Number(readFileSync(pidFile, 'utf8').trim());
    } catch {}
    return sleepPid > 0 && alive(sleepPid);
  }, 10_000, 'sleep to start');
  return { client, transport, sleepPid };
}

test('SIGTERM ends the server and the command it runs', async () => {
  const { client, transport, sleepPid } = await startWithSleep();
  const serverPid = transport.pid;
  assert.ok(serverPid > 0);
  process.kill(serverPid, 'SIGTERM');
  await waitFor(() => !alive(serverPid), 5_000, `agentls (pid ${serverPid}) to exit`);
  await waitFor(() => !alive(sleepPid), 5_000, `sleep (pid ${sleepPid}) to die`);
  await client.close();
});

test('closing stdin ends the server and the command it runs', async () => {
  const { client, transport, sleepPid } = await startWithSleep();
  const serverPid = transport.pid;
  await client.close(); // closes the server's stdin (and signals it if it lingers)
  await waitFor(() => !alive(sleepPid), 5_000, `sleep (pid ${sleepPid}) to die`);
  await waitFor(() => !alive(serverPid), 5_000, `agentls (pid ${serverPid}) to exit`);
});
