// agentls inside the real opencode CLI (`opencode run`), its model replaced
// by the scripted model behind an OpenAI-compatible provider (Chat
// Completions). opencode has no elicitation; the user's allow is its own
// `permission` entry for the tool (agentls_edit). Run with AGENTLS_HOSTS=all.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startModel } from './model.mjs';
import { BIG, bigRead, callResults, capProbe, describeRun, elicitations, hostBin, probeWorkspace, run, workspace } from './hosts.mjs';

const MAIN = 'package main\n\nfunc main() {\n\tprintln("hello")\n}\n';
const EDITED = 'package main\n\nfunc main() {\n\tprintln("goodbye")\n}\n';

async function opencode(w, script) {
  const model = await startModel(script);
  const config = join(w.dir, 'opencode.json');
  writeFileSync(config, JSON.stringify({
    provider: { x: { npm: '@ai-sdk/openai-compatible', name: 'scripted', options: { baseURL: `${model.url}/v1`, apiKey: 'k' }, models: { m: { name: 'm', tool_call: true } } } },
    model: 'x/m',
    small_model: 'x/m',
    mcp: { agentls: { type: 'local', command: [w.wrap] } },
    permission: { agentls_edit: 'allow' },
    autoupdate: false,
    share: 'disabled',
  }));
  const x = (p) => join(w.home, p);
  const env = {
    PATH: process.env.PATH, HOME: w.home,
    XDG_CONFIG_HOME: x('.config'), XDG_DATA_HOME: x('.local/share'), XDG_CACHE_HOME: x('.cache'), XDG_STATE_HOME: x('.local/state'),
    OPENCODE_CONFIG: config,
    OPENCODE_DISABLE_AUTOUPDATE: '1', OPENCODE_DISABLE_MODELS_FETCH: '1', OPENCODE_DISABLE_LSP_DOWNLOAD: '1',
    OPENCODE_DISABLE_DEFAULT_PLUGINS: '1', OPENCODE_DISABLE_CLAUDE_CODE: '1', OPENCODE_DISABLE_SHARE: '1',
  };
  try {
    const r = await run(hostBin('AGENTLS_OPENCODE'), ['run', '--format', 'json', 'In main.go, make the program say goodbye instead of hello.'], { cwd: w.ws, env, timeoutMs: 60000 });
    return { r, model, why: describeRun(r, w) };
  } finally {
    await model.close();
  }
}

// seen is what the model was shown as each agentls call's result, in order.
function seen(model) {
  const last = model.agentRequests().at(-1);
  assert.ok(last, 'the host never asked the model');
  return (last.body.messages || []).filter((m) => m.role === 'tool').map((m) => (typeof m.content === 'string' ? m.content : (m.content || []).map((c) => c.text ?? '').join('')));
}

test('opencode: grep and read results reach the model as agentls wrote them', async () => {
  const w = workspace({ 'main.go': MAIN });
  const { r, model, why } = await opencode(w, [
    { tool: 'grep', input: { pattern: 'hello' } },
    { tool: 'read', input: { path: 'main.go' } },
    { text: 'finished' },
  ]);
  assert.equal(r.code, 0, why);
  const results = callResults(w.traffic());
  assert.deepEqual(results.map((c) => c.name), ['grep', 'read'], why);
  const shown = seen(model);
  assert.equal(shown.length, 2, why);
  assert.equal(shown[0], results[0].text);
  assert.match(shown[0], /^main\.go:4: \tprintln\("hello"\)/);
  assert.equal(shown[1], results[1].text);
  assert.match(shown[1], /^main\.go, lines 1-5 of 5\n/);
});

// No double approval: opencode cannot ask, and its user allowed
// agentls_edit; with agentls's defaults the edit runs.
test('opencode: an edit the user allowed in opencode is applied with agentls\'s defaults', async () => {
  const w = workspace({ 'main.go': MAIN });
  const { r, model, why } = await opencode(w, [
    { tool: 'read', input: { path: 'main.go' } },
    { tool: 'edit', input: { path: 'main.go', edits: [{ oldText: 'hello', newText: 'goodbye' }] } },
    { text: 'finished' },
  ]);
  assert.equal(r.code, 0, why);
  assert.equal(elicitations(w.traffic()).length, 0);
  const shown = seen(model);
  assert.equal(shown.length, 2, why);
  assert.equal(w.file('main.go'), EDITED, `the file changed; the model was told: ${shown[1]}`);
  assert.doesNotMatch(shown[1], /denied|refused|not allowed|cannot ask/i, shown[1]);
});

// Results that fit the host: opencode keeps 50 KB / 2,000 lines of a tool
// result.
test('opencode: a 3,000-line read reaches the model whole, and its continuation notice is true', async () => {
  const w = workspace({ 'big.txt': BIG });
  const read = bigRead();
  const { r, model, why } = await opencode(w, read.script);
  assert.equal(r.code, 0, why);
  const tool = (model.agentRequests().at(-1)?.body.tools || []).find((t) => t.function?.name === 'agentls_read');
  read.check(seen(model), callResults(w.traffic()), why, tool?.function?.description || '');
});

// The caps docs/tools.md gives for opencode (bytes and lines), measured
// with a bare MCP server in agentls's place (see codex.test.mjs).
test('opencode: its caps on a tool result, measured, hold agentls\'s budgets for it', async (t) => {
  const w = probeWorkspace();
  const probe = capProbe({ bytes: 51_200, lines: 2000, cap: [51_200, 51_201], capLines: [2000, 2001] });
  const { r, model, why } = await opencode(w, probe.script);
  assert.equal(r.code, 0, why);
  const kept = probe.check(seen(model), why);
  t.diagnostic(`opencode passes 51,200 bytes and 2,000 lines whole and cuts one more: ${kept.head} lines kept from the start, ${kept.tail} from the end`);
});
