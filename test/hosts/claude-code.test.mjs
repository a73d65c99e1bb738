// agentls inside the real Claude Code CLI (headless `claude -p`), its model
// replaced by the scripted model: what a Claude Code user who added agentls
// gets. The model greps, reads, then edits main.go; the tests assert on the
// file, on the MCP traffic (was the user asked a second time?) and on the
// tool results the model was shown.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { startModel } from './model.mjs';
import { BIG, bigRead, callResults, capProbe, describeRun, elicitationAnswers, elicitations, hostBin, probeWorkspace, run, workspace } from './hosts.mjs';

const MAIN = 'package main\n\nfunc main() {\n\tprintln("hello")\n}\n';
const EDITED = 'package main\n\nfunc main() {\n\tprintln("goodbye")\n}\n';

const grepReadEdit = [
  { tool: 'grep', input: { pattern: 'hello' } },
  { tool: 'read', input: { path: 'main.go' } },
  { tool: 'edit', input: { path: 'main.go', edits: [{ oldText: 'hello', newText: 'goodbye' }] } },
  { text: 'finished' },
];

// claude runs one headless session in ws with the tools the user allowed.
async function claude(w, script, allowed) {
  const model = await startModel(script);
  writeFileSync(join(w.dir, 'mcp.json'), JSON.stringify({ mcpServers: { agentls: { type: 'stdio', command: w.wrap, args: [] } } }));
  const env = {
    PATH: process.env.PATH,
    HOME: w.home,
    XDG_CONFIG_HOME: join(w.home, '.config'),
    ANTHROPIC_BASE_URL: model.url,
    ANTHROPIC_API_KEY: 'sk-ant-test',
    DISABLE_TELEMETRY: '1',
    DISABLE_AUTOUPDATER: '1',
    DISABLE_ERROR_REPORTING: '1',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
  };
  const args = ['-p', 'In main.go, make the program say goodbye instead of hello.',
    '--mcp-config', join(w.dir, 'mcp.json'), '--strict-mcp-config',
    '--allowedTools', allowed.join(','), '--output-format', 'stream-json', '--verbose'];
  try {
    const r = await run(hostBin('AGENTLS_CLAUDE'), args, { cwd: w.ws, env, timeoutMs: 60000 });
    return { r, model, why: describeRun(r, w) };
  } finally {
    await model.close();
  }
}

// seen is what the model was shown as each agentls tool's result, in
// order: the tool results of the last request of the agent loop (Claude
// Code's own ToolSearch left out).
function seen(model) {
  const last = model.agentRequests().at(-1);
  assert.ok(last, 'the host never asked the model');
  const names = new Map();
  const out = [];
  for (const m of last.body.messages || []) {
    if (!Array.isArray(m.content)) continue;
    for (const c of m.content) {
      if (c.type === 'tool_use') names.set(c.id, c.name);
      if (c.type !== 'tool_result' || !names.get(c.tool_use_id)?.startsWith('mcp__agentls__')) continue;
      out.push(typeof c.content === 'string' ? c.content : (c.content || []).map((x) => x.text ?? '').join(''));
    }
  }
  return out;
}

function settings(w, permissions) {
  mkdirSync(join(w.ws, '.agentls'), { recursive: true });
  writeFileSync(join(w.ws, '.agentls', 'settings.json'), JSON.stringify({ permissions }));
}

const ALLOWED = ['mcp__agentls__grep', 'mcp__agentls__read', 'mcp__agentls__edit'];

test('claude code: grep and read results reach the model as agentls wrote them', async () => {
  const w = workspace({ 'main.go': MAIN });
  const { r, model, why } = await claude(w, [grepReadEdit[0], grepReadEdit[1], { text: 'finished' }], ALLOWED);
  assert.equal(r.code, 0, why);
  const results = callResults(w.traffic());
  assert.deepEqual(results.map((c) => c.name), ['grep', 'read'], why);
  const shown = seen(model);
  assert.equal(shown.length, 2, why);
  assert.equal(shown[0], results[0].text, 'grep: the model sees exactly what agentls answered');
  assert.match(shown[0], /^main\.go:4: \tprintln\("hello"\)/);
  assert.equal(shown[1], results[1].text, 'read: the model sees exactly what agentls answered');
  assert.match(shown[1], /^main\.go, lines 1-5 of 5\n/);
  assert.match(shown[1], /4→\tprintln\("hello"\)/);
  assert.equal(elicitations(w.traffic()).length, 0, 'nothing asked for read-only calls');
});

// No double approval: a call agentls would ask about only because of its
// built-in defaults is left to the host, which the user already answered
// with --allowedTools.
test('claude code: an edit the user allowed in Claude Code is applied without a second question', async () => {
  const w = workspace({ 'main.go': MAIN });
  const { r, model, why } = await claude(w, grepReadEdit, ALLOWED);
  assert.equal(r.code, 0, why);
  const asked = elicitations(w.traffic());
  assert.equal(asked.length, 0, `agentls asked again although the user allowed the edit in Claude Code: ${JSON.stringify(asked)}`);
  assert.equal(w.file('main.go'), EDITED, 'the file changed');
  const shown = seen(model);
  assert.equal(shown.length, 3, why);
  assert.doesNotMatch(shown[2], /denied|refused|not allowed/i, 'the model is told the edit was made');
  assert.match(shown[2], /main\.go/);
});

// A question shows what it approves, and a host that cannot answer it
// makes agentls tell the model so, with the rule that would allow the call.
// (Headless Claude Code answers agentls's questions with "cancel".)
test('claude code: the user\'s ask rule asks with the diff; headless, the model is told the host could not ask and how to allow it', async () => {
  const w = workspace({ 'main.go': MAIN });
  settings(w, { ask: ['Edit(main.go)'] });
  const { r, model, why } = await claude(w, grepReadEdit, ALLOWED);
  assert.equal(r.code, 0, why);
  const asked = elicitations(w.traffic());
  assert.ok(asked.length >= 1, `the ask rule sent no elicitation${why}`);
  const answers = elicitationAnswers(w.traffic());
  assert.ok(answers.length >= 1 && answers.every((a) => a.action !== 'accept'), `headless Claude Code cannot accept: ${JSON.stringify(answers)}`);
  assert.equal(w.file('main.go'), MAIN, 'the file is unchanged');
  const q = asked[0].message;
  assert.match(q, /main\.go/, `the question names the file: ${q}`);
  assert.match(q, /^-\s*println\("hello"\)/m, `the question shows the removed line: ${q}`);
  assert.match(q, /^\+\s*println\("goodbye"\)/m, `the question shows the added line: ${q}`);
  const shown = seen(model);
  assert.equal(shown.length, 3, why);
  const told = shown[2];
  assert.match(told, /could not ask/i, `the model is told the host could not ask: ${told}`);
  assert.doesNotMatch(told, /denied by the user|the user declined/i, `nobody declined: ${told}`);
  // An allow rule does not lift an ask rule: what the user can do is
  // change that rule, so the model must be told which rule and where.
  const how = told.slice(told.search(/could not ask/i));
  assert.match(how, /Edit\(main\.go\)/, `the model is told which rule asks: ${told}`);
  assert.match(how, /\.agentls\/settings\.json/, `… and where it is: ${told}`);
});

// The how-to-allow the model is told must be true: a destructive command
// asks even though the host allowed bash; headless, the model is told the
// host could not ask and which settings would allow the call, and with
// those settings written the same call runs.
test('claude code: a destructive command asks; headless, the model is told the host could not ask, and the settings it names let the call run', async () => {
  const w = workspace({ 'build/out.o': 'object\n' });
  const script = [{ tool: 'bash', input: { command: 'rm -r build' } }, { text: 'finished' }];
  const first = await claude(w, script, ['mcp__agentls__bash']);
  assert.equal(first.r.code, 0, first.why);
  assert.ok(elicitations(w.traffic()).length >= 1, `rm -r asked nobody${first.why}`);
  assert.ok(existsSync(join(w.ws, 'build', 'out.o')), 'nothing was deleted');
  const told = seen(first.model)[0];
  assert.ok(told, first.why);
  assert.match(told, /could not ask/i, told);
  const advice = settingsAdvice(told, w);
  assert.ok(advice, `the model is told which settings file and rule would allow the call: ${told}`);
  mkdirSync(dirname(advice.file), { recursive: true });
  writeFileSync(advice.file, JSON.stringify(advice.settings));
  w.resetTraffic();
  const second = await claude(w, script, ['mcp__agentls__bash']);
  assert.equal(second.r.code, 0, second.why);
  assert.equal(elicitations(w.traffic()).length, 0, 'allowed by the settings the model named: nobody is asked');
  assert.ok(!existsSync(join(w.ws, 'build')), `the command ran with the settings the model was told (${advice.file}): ${seen(second.model)[0]}`);
});

// settingsAdvice finds, in what the model was told, the settings file to
// write and the JSON to put there: {file, settings}, or null.
function settingsAdvice(text, w) {
  const json = /\{"permissions":.*?\}\}/.exec(text);
  if (!json) return null;
  let settings;
  try { settings = JSON.parse(json[0]); } catch { return null; }
  let file = null;
  const named = text.match(/\((\/[^()]*\/agentls\/settings\.json)\)/); // the user settings file by its path
  if (/\.agentls\/settings\.local\.json/.test(text)) file = join(w.ws, '.agentls', 'settings.local.json');
  else if (named && named[1] === join(w.home, '.config', 'agentls', 'settings.json')) file = named[1];
  else if (/\$XDG_CONFIG_HOME\/agentls\/settings\.json|~\/\.config\/agentls\/settings\.json/.test(text)) file = join(w.home, '.config', 'agentls', 'settings.json');
  return file ? { file, settings } : null;
}

test('claude code: a deny rule refuses the edit without asking', async () => {
  const w = workspace({ 'main.go': MAIN });
  settings(w, { deny: ['Edit(main.go)'] });
  const { r, model, why } = await claude(w, grepReadEdit, ALLOWED);
  assert.equal(r.code, 0, why);
  assert.equal(elicitations(w.traffic()).length, 0, 'a deny rule asks nobody');
  assert.equal(w.file('main.go'), MAIN, 'the file is unchanged');
  const shown = seen(model);
  assert.equal(shown.length, 3, why);
  assert.match(shown[2], /Edit\(main\.go\)/, `the refusal names the rule: ${shown[2]}`);
  assert.match(shown[2], /^denied by the rule Edit\(main\.go\)/, shown[2]);
});

// Results that fit the host: Claude Code keeps MAX_MCP_OUTPUT_TOKENS
// (25,000 tokens) of an MCP result, so agentls must stop its read within
// that and say where to continue.
test('claude code: a 3,000-line read reaches the model whole, and its continuation notice is true', async () => {
  const w = workspace({ 'big.txt': BIG });
  const read = bigRead();
  const { r, model, why } = await claude(w, read.script, ALLOWED);
  assert.equal(r.code, 0, why);
  read.check(seen(model), callResults(w.traffic()), why, offered(model, 'read'));
});

// offered is the description of agentls's tool as Claude Code last
// offered it to the model.
function offered(model, name) {
  const last = model.agentRequests().at(-1);
  const t = (last?.body.tools || []).find((x) => x.name === `mcp__agentls__${name}`);
  return t ? t.description : '';
}

// The cap docs/tools.md gives for Claude Code, measured with a bare MCP
// server in agentls's place (see codex.test.mjs). Claude Code saves a
// result over 50,000 characters to a file and shows the model a 2 KB
// preview; it counts tokens (against MAX_MCP_OUTPUT_TOKENS, 25,000) only
// past about twice that many bytes, and the scripted model counts a token
// per byte, the most any tokenizer gives.
test('claude code: its cap on a tool result, measured, holds agentls\'s budget for it', async (t) => {
  const w = probeWorkspace();
  const probe = capProbe({ bytes: 25_000, cap: [50_000, 50_001] });
  const { r, model, why } = await claude(w, probe.script, ['mcp__agentls__probe']);
  assert.equal(r.code, 0, why);
  const kept = probe.check(seen(model), why);
  t.diagnostic(`claude code passes 50,000 bytes whole and saves 50,001 to a file, showing the model ${kept.head} lines of it`);
});
