// "ask" decisions through MCP elicitation: with no settings, bash asks; a
// client that declares elicitation is asked with a form, and its answer
// decides. A client without elicitation gets a denial that says so.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { agentlsBin, tempDir, text, connect } from './helpers.mjs';

const clients = [];
after(async () => {
  for (const c of clients) await c.close();
});

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
  const ws = tempDir('agentls-elicit-');
  const { client, asked } = await connectAsking(ws, { action: 'accept', content: { decision: 'allowOnce' } });
  const r = await client.callTool({ name: 'bash', arguments: { command: 'touch made-by-bash' } });
  assert.ok(!r.isError, text(r));
  assert.equal(asked.length, 1, 'the user was asked once');
  assert.match(asked[0].message, /bash/);
  assert.deepEqual(asked[0].requestedSchema.required, ['decision']);
  assert.ok(existsSync(join(ws, 'made-by-bash')), 'the command ran');
});

test('elicitation: a declined form denies the call and nothing runs', async () => {
  const ws = tempDir('agentls-elicit-');
  const { client, asked } = await connectAsking(ws, { action: 'decline' });
  const r = await client.callTool({ name: 'bash', arguments: { command: 'touch made-by-bash' } });
  assert.equal(r.isError, true);
  assert.equal(asked.length, 1);
  assert.ok(!existsSync(join(ws, 'made-by-bash')), 'the command did not run');
});

test('elicitation: rejectAlways is remembered for the session', async () => {
  const ws = tempDir('agentls-elicit-');
  const { client, asked } = await connectAsking(ws, { action: 'accept', content: { decision: 'rejectAlways' } });
  for (let i = 0; i < 2; i++) {
    const r = await client.callTool({ name: 'bash', arguments: { command: 'touch made-by-bash' } });
    assert.equal(r.isError, true);
  }
  assert.equal(asked.length, 1, 'asked once, then remembered');
  assert.ok(!existsSync(join(ws, 'made-by-bash')));
});

test('no elicitation support: the ask is a denial that says approval is needed', async () => {
  const ws = tempDir('agentls-elicit-');
  const client = await connect({ args: ['--root', ws] });
  clients.push(client);
  const r = await client.callTool({ name: 'bash', arguments: { command: 'touch made-by-bash' } });
  assert.equal(r.isError, true);
  assert.match(text(r), /approval/);
  assert.ok(!existsSync(join(ws, 'made-by-bash')));
});
