// A bare MCP server over stdio (newline-delimited JSON-RPC) with one tool,
// `probe {bytes, lineBytes?}`, whose result is a text of exactly that many
// bytes in numbered lines (probeText). A host test puts it where agentls
// would be and looks at what of the text reached the model: that measures
// the host's own output cap, with nothing of agentls's in the way.
import { createInterface } from 'node:readline';
import { probeText } from './hosts.mjs';

const tool = {
  name: 'probe',
  title: 'Probe',
  description: 'Returns a text of `bytes` bytes in numbered lines of `lineBytes` bytes (64 by default).',
  inputSchema: {
    type: 'object',
    properties: { bytes: { type: 'integer' }, lineBytes: { type: 'integer' } },
    required: ['bytes'],
  },
  annotations: { readOnlyHint: true },
};

function answer(m) {
  switch (m.method) {
    case 'initialize':
      return {
        protocolVersion: m.params?.protocolVersion || '2025-06-18',
        capabilities: { tools: {} },
        serverInfo: { name: 'probe', version: '1.0.0' },
      };
    case 'ping':
      return {};
    case 'tools/list':
      return { tools: [tool] };
    case 'tools/call': {
      const a = m.params?.arguments || {};
      return { content: [{ type: 'text', text: probeText(Number(a.bytes), Number(a.lineBytes) || undefined) }] };
    }
    default:
      return null;
  }
}

const rl = createInterface({ input: process.stdin });
rl.on('line', (line) => {
  let m;
  try { m = JSON.parse(line); } catch { return; }
  if (m.id === undefined || !m.method) return; // notifications and answers
  const result = answer(m);
  const reply = result
    ? { jsonrpc: '2.0', id: m.id, result }
    : { jsonrpc: '2.0', id: m.id, error: { code: -32601, message: `method not found: ${m.method}` } };
  process.stdout.write(`${JSON.stringify(reply)}\n`);
});
rl.on('close', () => process.exit(0));
