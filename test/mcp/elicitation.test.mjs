// "ask" decisions through MCP elicitation: the user's ask rule asks (the
// default mode alone leaves a call to the host); a client that declares
// elicitation is asked with a form, and its answer decides. A client
// without elicitation gets a refusal that says the host could not ask.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { agentlsBin, tempDir, text, connect } from './helpers.mjs';

const clients = [];
after(async () => {
  for (const c of clients) await c.close();
});

// askingWorkspace is a workspace whose settings ask before touch.
function askingWorkspace() {
  const ws = tempDir('agentls-elicit-');
  mkdirSync(join(ws, '.agentls'));
  writeFileSync(join(ws, '.agentls', 'settings.json'), JSON.stringify({ permissions: { ask: ['Bash(touch:*)'] } }));
  return ws;
}

// answering: what the user does with the form ({action, content}).
async function connectAsking(ws, answering) {
  const asked = [];
  const client = new Client({ name: 'agentls-elicit-test', version: '1.0.0' }, { capabilities: { elicitation: {} } });
  client.setRequestHandler(ElicitRequestSchema, async (req) => {
    asked.push(req.params);
    return answering;
  });
  await client.connect(new StdioClientTransport({ command: agentlsBin(), args: ['mcp', '--root', ws], env: { ...process.env }, stderr: 'ignore' }));
  clients.push(client);
  return { client, asked };
}

test('elicitation: an allowed form lets the call run', async () => {
  const ws = askingWorkspace();
  const { client, asked } = await connectAsking(ws, { action: 'accept', content: { decision: 'allowOnce' } });
  const r = await client.callTool({ name: 'bash', arguments: { command: 'touch made-by-bash' } });
  assert.ok(!r.isError, text(r));
  assert.equal(asked.length, 1, 'the user was asked once');
  assert.match(asked[0].message, /bash/);
  assert.deepEqual(asked[0].requestedSchema.required, ['decision']);
  assert.ok(existsSync(join(ws, 'made-by-bash')), 'the command ran');
});

test('elicitation: a declined form denies the call and nothing runs', async () => {
  const ws = askingWorkspace();
  const { client, asked } = await connectAsking(ws, { action: 'decline' });
  const r = await client.callTool({ name: 'bash', arguments: { command: 'touch made-by-bash' } });
  assert.equal(r.isError, true);
  assert.equal(asked.length, 1);
  assert.ok(!existsSync(join(ws, 'made-by-bash')), 'the command did not run');
});

test('elicitation: rejectAlways is remembered for the session', async () => {
  const ws = askingWorkspace();
  const { client, asked } = await connectAsking(ws, { action: 'accept', content: { decision: 'rejectAlways' } });
  for (let i = 0; i < 2; i++) {
    const r = await client.callTool({ name: 'bash', arguments: { command: 'touch made-by-bash' } });
    assert.equal(r.isError, true);
  }
  assert.equal(asked.length, 1, 'asked once, then remembered');
  assert.ok(!existsSync(join(ws, 'made-by-bash')));
});

test('no elicitation support: the ask is a refusal that says the host could not ask', async () => {
  const ws = askingWorkspace();
  const client = await connect({ args: ['--root', ws] });
  clients.push(client);
  const r = await client.callTool({ name: 'bash', arguments: { command: 'touch made-by-bash' } });
  assert.equal(r.isError, true);
  assert.match(text(r), /the MCP host could not ask the user/);
  assert.ok(!existsSync(join(ws, 'made-by-bash')));
});
