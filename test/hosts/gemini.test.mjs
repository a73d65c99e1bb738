// agentls inside the real Gemini CLI (`gemini -p`), its model replaced by the
// scripted model speaking the Gemini API (GOOGLE_GEMINI_BASE_URL). Gemini CLI
// has no elicitation, and headless it offers an MCP server's tools only when
// the user trusts the server ("trust": true, the user's allow here) or writes
// a policy rule. Run with AGENTLS_HOSTS=all.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startModel } from './model.mjs';
import { BIG, bigRead, callResults, capProbe, describeRun, elicitations, hostBin, probeWorkspace, run, workspace } from './hosts.mjs';

const MAIN = 'package main\n\nfunc main() {\n\tprintln("hello")\n}\n';
const EDITED = 'package main\n\nfunc main() {\n\tprintln("goodbye")\n}\n';

async function gemini(w, script) {
  const model = await startModel(script);
  mkdirSync(join(w.home, '.gemini'), { recursive: true });
  writeFileSync(join(w.home, '.gemini', 'settings.json'), JSON.stringify({
    security: { auth: { selectedType: 'gemini-api-key' } },
    general: { disableAutoUpdate: true, disableUpdateNag: true },
    privacy: { usageStatisticsEnabled: false },
    telemetry: { enabled: false },
    mcpServers: { agentls: { command: w.wrap, args: [], trust: true } },
  }));
  const env = {
    PATH: process.env.PATH, HOME: w.home,
    GOOGLE_GEMINI_BASE_URL: model.url, GEMINI_API_KEY: 'k',
    GEMINI_CLI_NO_RELAUNCH: 'true', GEMINI_CLI_TRUST_WORKSPACE: 'true',
  };
  try {
    const r = await run(hostBin('AGENTLS_GEMINI'), ['-m', 'gemini-2.5-pro', '-o', 'stream-json', '-p', 'In main.go, make the program say goodbye instead of hello.'], { cwd: w.ws, env, timeoutMs: 60000 });
    return { r, model, why: describeRun(r, w) };
  } finally {
    await model.close();
  }
}

// seen is what the model was shown per agentls call: the functionResponse's
// output (Gemini CLI's <untrusted_context> envelope taken off) or, for a
// failed call, its whole error text.
function seen(model) {
  const last = model.agentRequests().at(-1);
  assert.ok(last, 'the host never asked the model');
  const out = [];
  for (const c of last.body.contents || []) {
    for (const p of c.parts || []) {
      const r = p.functionResponse?.response;
      if (!r) continue;
      if (typeof r.output === 'string') out.push(r.output.replace(/^<untrusted_context>\n/, '').replace(/\n<\/untrusted_context>$/, ''));
      else out.push(typeof r.error === 'string' ? r.error : JSON.stringify(r));
    }
  }
  return out;
}

test('gemini cli: grep and read results reach the model as agentls wrote them', async () => {
  const w = workspace({ 'main.go': MAIN });
  const { r, model, why } = await gemini(w, [
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

// No double approval: the user trusts the server in Gemini CLI, which
// cannot ask; with agentls's defaults the edit runs.
test('gemini cli: an edit of a trusted server is applied with agentls\'s defaults', async () => {
  const w = workspace({ 'main.go': MAIN });
  const { r, model, why } = await gemini(w, [
    { tool: 'read', input: { path: 'main.go' } },
    { tool: 'edit', input: { path: 'main.go', edits: [{ oldText: 'hello', newText: 'goodbye' }] } },
    { text: 'finished' },
  ]);
  assert.equal(r.code, 0, why);
  assert.equal(elicitations(w.traffic()).length, 0);
  const shown = seen(model);
  assert.equal(shown.length, 2, why);
  assert.equal(w.file('main.go'), EDITED, `the file changed; the model was told: ${shown[1]}`);
});

// Nothing internal in a result: Gemini CLI shows the model a failed call's
// whole result, so agentls's _meta must carry nothing internal (timings,
// decision records).
test('gemini cli: a refusal reaches the model as agentls\'s words, without internal details', async () => {
  const w = workspace({ 'main.go': MAIN });
  mkdirSync(join(w.ws, '.agentls'));
  writeFileSync(join(w.ws, '.agentls', 'settings.json'), JSON.stringify({ permissions: { deny: ['Edit(main.go)'] } }));
  const { r, model, why } = await gemini(w, [
    { tool: 'read', input: { path: 'main.go' } },
    { tool: 'edit', input: { path: 'main.go', edits: [{ oldText: 'hello', newText: 'goodbye' }] } },
    { text: 'finished' },
  ]);
  assert.equal(r.code, 0, why);
  assert.equal(w.file('main.go'), MAIN, 'the file is unchanged');
  const shown = seen(model);
  assert.equal(shown.length, 2, why);
  assert.match(shown[1], /denied by the rule Edit\(main\.go\)/, shown[1]);
  assert.doesNotMatch(shown[1], /"details"|durationMs|"permission"/, `internal details reached the model: ${shown[1]}`);
});

// Results that fit the host: Gemini CLI keeps 40,000 characters of a tool
// result, its own envelope included.
test('gemini cli: a 3,000-line read reaches the model whole, and its continuation notice is true', async () => {
  const w = workspace({ 'big.txt': BIG });
  const read = bigRead();
  const { r, model, why } = await gemini(w, read.script);
  assert.equal(r.code, 0, why);
  const decls = (model.agentRequests().at(-1)?.body.tools || []).flatMap((t) => t.functionDeclarations || []);
  read.check(seen(model), callResults(w.traffic()), why, decls.find((f) => f.name === 'mcp_agentls_read')?.description || '');
});

// The cap docs/tools.md gives for Gemini CLI, measured with a bare MCP
// server in agentls's place (see codex.test.mjs): 40,000 characters
// counted with the 41-character <untrusted_context> envelope it wraps a
// result in, so 39,959 of the server's own.
test('gemini cli: its cap on a tool result, measured, holds agentls\'s budget for it', async (t) => {
  const w = probeWorkspace();
  const probe = capProbe({ bytes: 39_000, cap: [39_959, 39_960] });
  const { r, model, why } = await gemini(w, probe.script);
  assert.equal(r.code, 0, why);
  probe.check(seen(model), why);
  t.diagnostic('gemini cli passes 39,959 bytes whole and cuts 39,960 out of the middle');
});
