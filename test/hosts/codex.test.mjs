// agentls inside the real Codex CLI (`codex exec`), its model replaced by the
// scripted model speaking the OpenAI Responses API. The model is gpt-5.5, a
// model Codex knows: Codex then defers MCP tools behind its client-side
// tool_search and caps tool output as it does for real users.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startModel } from './model.mjs';
import { BIG, bigRead, callResults, capProbe, describeRun, elicitations, hostBin, probeWorkspace, run, workspace } from './hosts.mjs';

const MAIN = 'package main\n\nfunc main() {\n\tprintln("hello")\n}\n';
const EDITED = 'package main\n\nfunc main() {\n\tprintln("goodbye")\n}\n';

const toml = (s) => JSON.stringify(s);

// codex runs one `codex exec` session in ws with the model named (gpt-5.5
// by default). The user's allow for edit and bash is Codex's own per-tool
// approval_mode = "approve".
async function codex(w, script, modelName = 'gpt-5.5') {
  const model = await startModel(script);
  const home = join(w.dir, 'codex-home');
  mkdirSync(home, { recursive: true });
  writeFileSync(join(home, 'config.toml'), `model = ${toml(modelName)}
model_provider = "x"
check_for_update_on_startup = false

[model_providers.x]
name = "scripted"
base_url = ${toml(`${model.url}/v1`)}
env_key = "X_API_KEY"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0

[analytics]
enabled = false

[feedback]
enabled = false

[otel]
exporter = "none"

[mcp_servers.agentls]
command = ${toml(w.wrap)}

[mcp_servers.agentls.tools.edit]
approval_mode = "approve"

[mcp_servers.agentls.tools.bash]
approval_mode = "approve"
`);
  const env = { PATH: process.env.PATH, HOME: w.home, CODEX_HOME: home, X_API_KEY: 'k' };
  try {
    const r = await run(hostBin('AGENTLS_CODEX'), ['exec', '--skip-git-repo-check', '--json', 'In main.go, make the program say goodbye instead of hello.'], { cwd: w.ws, env, timeoutMs: 60000 });
    return { r, model, why: describeRun(r, w) };
  } finally {
    await model.close();
  }
}

// seen is what the model was shown as each agentls call's output, in order.
// Codex puts "Wall time: … Output:" before the tool's text.
function seen(model) {
  const last = model.agentRequests().at(-1);
  assert.ok(last, 'the host never asked the model');
  const out = [];
  for (const i of last.body.input || []) {
    if (i.type !== 'function_call_output') continue;
    const o = i.output;
    out.push(typeof o === 'string' ? o : (o || []).map((x) => x.text ?? '').join(''));
  }
  return out;
}

test('codex: grep and read results reach the model as agentls wrote them', async () => {
  const w = workspace({ 'main.go': MAIN });
  const { r, model, why } = await codex(w, [
    { tool: 'grep', input: { pattern: 'hello' } },
    { tool: 'read', input: { path: 'main.go' } },
    { text: 'finished' },
  ]);
  assert.equal(r.code, 0, why);
  const results = callResults(w.traffic());
  assert.deepEqual(results.map((c) => c.name), ['grep', 'read'], why);
  const shown = seen(model);
  assert.equal(shown.length, 2, why);
  assert.ok(shown[0].endsWith(results[0].text), `grep: the model sees agentls's whole answer: ${shown[0]}`);
  assert.match(results[0].text, /^main\.go:4: \tprintln\("hello"\)/);
  assert.ok(shown[1].endsWith(results[1].text), `read: the model sees agentls's whole answer: ${shown[1]}`);
  assert.match(results[1].text, /^main\.go, lines 1-5 of 5\n/);
});

// No double approval: with agentls's defaults an edit is left to Codex's
// approval, which the user gave (approval_mode).
test('codex: an edit the user approved in Codex is applied with agentls\'s defaults', async () => {
  const w = workspace({ 'main.go': MAIN });
  const { r, model, why } = await codex(w, [
    { tool: 'read', input: { path: 'main.go' } },
    { tool: 'edit', input: { path: 'main.go', edits: [{ oldText: 'hello', newText: 'goodbye' }] } },
    { text: 'finished' },
  ]);
  assert.equal(r.code, 0, why);
  const asked = elicitations(w.traffic());
  assert.equal(asked.length, 0, `agentls asked again although the user approved edit in Codex: ${JSON.stringify(asked)}`);
  assert.equal(w.file('main.go'), EDITED, `the file changed${why}`);
  const shown = seen(model);
  assert.equal(shown.length, 2, why);
  assert.doesNotMatch(shown[1], /denied|refused|not allowed/i, `the model is told the edit was made: ${shown[1]}`);
});

// Results that fit the host: Codex keeps about 10,000 tokens of a tool's
// output and cuts the middle out of anything longer, so agentls must stop
// its read within that and say where to continue.
test('codex: a 3,000-line read reaches the model whole, and its continuation notice is true', async () => {
  const w = workspace({ 'big.txt': BIG });
  const read = bigRead();
  const { r, model, why } = await codex(w, read.script);
  assert.equal(r.code, 0, why);
  read.check(seen(model), callResults(w.traffic()), why, offered(model, 'read'));
});

// offered is the description of agentls's tool as Codex last offered it to
// the model (in its tool list, or found by its tool_search).
function offered(model, name) {
  const last = model.agentRequests().at(-1);
  const spaces = [...(last?.body.tools || [])];
  for (const i of last?.body.input || []) if (i.type === 'tool_search_output') spaces.push(...(i.tools || []));
  for (const ns of spaces) {
    if (ns.name !== 'mcp__agentls') continue;
    for (const t of ns.tools || []) if (t.name === name) return t.description;
  }
  return '';
}

// The cap docs/tools.md gives for Codex, measured: a bare MCP server
// (probe-server.mjs) in agentls's place returns results of agentls's
// budget for Codex, of the most Codex passes whole and of a little more,
// and the model's input shows what Codex kept of each. For gpt-5.5 Codex
// keeps 48,000 bytes counted with its "Wall time: … Output:" prefix;
// a model without a token policy gets 12,000 (the next test).
test('codex: its cap on a tool result, measured, holds agentls\'s budget for it', async (t) => {
  const w = probeWorkspace();
  const probe = capProbe({ bytes: 10_000, cap: [47_900, 48_000] });
  const { r, model, why } = await codex(w, probe.script);
  assert.equal(r.code, 0, why);
  const kept = probe.check(seen(model), why);
  t.diagnostic(`codex passes 47,900 bytes whole and cuts 48,000 out of the middle: ${kept.head} lines kept from the start, ${kept.tail} from the end`);
});

test('codex: its cap for a model it has no token policy for, measured, holds agentls\'s budget', async (t) => {
  const w = probeWorkspace();
  const probe = capProbe({ bytes: 10_000, cap: [11_900, 12_000] });
  const { r, model, why } = await codex(w, probe.script, 'scripted');
  assert.equal(r.code, 0, why);
  const kept = probe.check(seen(model), why);
  t.diagnostic(`codex passes 11,900 bytes whole and cuts 12,000 out of the middle: ${kept.head} lines kept from the start, ${kept.tail} from the end`);
});
