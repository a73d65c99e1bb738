// A scripted model on 127.0.0.1 that a real coding-agent host talks to as if
// it were its model provider. It speaks the four wire formats the hosts use:
// Anthropic Messages (Claude Code), OpenAI Responses (Codex), OpenAI Chat
// Completions (opencode) and Gemini generateContent (Gemini CLI), all as the
// streaming SSE the hosts ask for.
//
// A scenario is a list of steps, host-neutral: {tool: 'grep', input: {...}}
// asks the host to call agentls's grep; {text: '...'} ends the turn. The step
// a request gets is the number of tool results it already carries, so a host
// that retries or sends side requests (titles, summaries) does not shift the
// script. Every request is recorded (path and parsed body): the tests assert
// on the tool results the model was shown.
import { createServer } from 'node:http';

/**
 * startModel listens on 127.0.0.1 (a free port) and answers with script.
 * Returns {url, requests, agentRequests(), toolResults(), close()}.
 */
export async function startModel(script) {
  const requests = [];
  let ids = 0;
  const nextId = (p) => `${p}_${++ids}`;

  const server = createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      let body = null;
      try { body = raw ? JSON.parse(raw) : null; } catch { body = null; }
      const entry = { method: req.method, path: req.url, raw, body };
      requests.push(entry);
      try {
        route(entry, res);
      } catch (e) {
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: String(e?.stack || e) } }));
      }
    });
  });

  function route(entry, res) {
    const path = entry.path.split('?')[0];
    const b = entry.body || {};
    if (entry.method === 'GET' && /\/models\/?$/.test(path)) {
      return json(res, { object: 'list', data: [{ id: 'scripted', object: 'model' }], models: [] });
    }
    // Claude Code counts an MCP result's tokens here against
    // MAX_MCP_OUTPUT_TOKENS. One token per byte of text is the most a
    // tokenizer can give, so a result that passes here passes any.
    if (path.endsWith('/messages/count_tokens')) return json(res, { input_tokens: Buffer.byteLength(messageText(b)) });
    if (path.endsWith('/messages')) return anthropic(entry, b, res);
    if (path.endsWith('/responses')) return responses(entry, b, res);
    if (path.endsWith('/chat/completions')) return chat(entry, b, res);
    if (/:(stream)?[gG]enerateContent$/.test(path)) return gemini(entry, b, res, /:stream/.test(path));
    if (/:countTokens$/.test(path)) return json(res, { totalTokens: 100 });
    res.writeHead(404, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: { message: `scripted model: no route for ${entry.method} ${entry.path}` } }));
  }

  // step returns the scripted step for a request that already carries n tool
  // results; past the end it repeats the final text.
  // A step may be a function of the tool results so far (what the model has
  // read), as a model's next call depends on what it saw.
  function step(n, body) {
    const s = n < script.length ? script[n] : { text: 'done' };
    return typeof s === 'function' ? s(toolResultTexts(body)) : s;
  }

  // toolName finds the host's name for agentls's tool among the tools the
  // request offers (mcp__agentls__grep, agentls_grep, mcp_agentls_grep, …),
  // else falls back to the host's own convention.
  function toolName(offered, tool, fallback) {
    const hit = offered.find((n) => n === tool || n.endsWith(`__${tool}`) || n.endsWith(`_${tool}`) || n.endsWith(`.${tool}`));
    return hit || fallback;
  }

  // --- Anthropic Messages (Claude Code) ---
  function anthropic(entry, b, res) {
    const tools = (b.tools || []).map((t) => t.name).filter(Boolean);
    entry.agent = tools.length > 0;
    let s;
    if (!entry.agent) {
      s = { text: 'ok' };
    } else {
      // Steps are counted by the model's own calls, not ToolSearch's.
      let n = 0;
      let searched = false;
      for (const m of b.messages || []) {
        if (m.role !== 'assistant' || !Array.isArray(m.content)) continue;
        for (const c of m.content) {
          if (c.type !== 'tool_use') continue;
          if (c.name === 'ToolSearch') searched = true;
          else n++;
        }
      }
      s = step(n, b);
      // Claude Code defers MCP tools: the model loads them with ToolSearch
      // first, as Claude Code tells it to, so their schemas are in its prompt.
      if (s.tool && !searched && tools.includes('ToolSearch') && !tools.some((t) => t.endsWith(`__${s.tool}`))) {
        const names = [...new Set(script.filter((x) => x && x.tool).map((x) => `mcp__agentls__${x.tool}`).concat(`mcp__agentls__${s.tool}`))];
        s = { tool: 'ToolSearch', input: { query: `select:${names.join(',')}` } };
      }
    }
    const msgId = nextId('msg');
    const blocks = [];
    if (s.tool) {
      blocks.push({ type: 'tool_use', id: nextId('toolu'), name: toolName(tools, s.tool, `mcp__agentls__${s.tool}`), input: s.input });
    } else {
      blocks.push({ type: 'text', text: s.text });
    }
    const stop = s.tool ? 'tool_use' : 'end_turn';
    const usage = { input_tokens: 10, output_tokens: 5, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
    if (!b.stream) {
      return json(res, { id: msgId, type: 'message', role: 'assistant', model: b.model || 'scripted', content: blocks, stop_reason: stop, stop_sequence: null, usage });
    }
    const out = sse(res);
    out('message_start', { type: 'message_start', message: { id: msgId, type: 'message', role: 'assistant', model: b.model || 'scripted', content: [], stop_reason: null, stop_sequence: null, usage: { ...usage, output_tokens: 1 } } });
    blocks.forEach((blk, i) => {
      if (blk.type === 'tool_use') {
        out('content_block_start', { type: 'content_block_start', index: i, content_block: { type: 'tool_use', id: blk.id, name: blk.name, input: {} } });
        out('content_block_delta', { type: 'content_block_delta', index: i, delta: { type: 'input_json_delta', partial_json: JSON.stringify(blk.input) } });
      } else {
        out('content_block_start', { type: 'content_block_start', index: i, content_block: { type: 'text', text: '' } });
        out('content_block_delta', { type: 'content_block_delta', index: i, delta: { type: 'text_delta', text: blk.text } });
      }
      out('content_block_stop', { type: 'content_block_stop', index: i });
    });
    out('message_delta', { type: 'message_delta', delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: 5 } });
    out('message_stop', { type: 'message_stop' });
    res.end();
  }

  // --- OpenAI Responses (Codex) ---
  function responses(entry, b, res) {
    const offered = [];
    for (const t of b.tools || []) {
      if (t.name) offered.push(t.name);
      // Codex groups an MCP server's tools in a namespace.
      for (const inner of t.tools || []) if (inner.name) offered.push(`${t.name}.${inner.name}`);
    }
    entry.agent = offered.length > 0;
    const input = Array.isArray(b.input) ? b.input : [];
    // Tools a client-side tool_search found are offered in its output.
    for (const i of input) {
      if (i.type !== 'tool_search_output') continue;
      for (const t of i.tools || []) for (const inner of t.tools || []) if (inner.name) offered.push(`${t.name}.${inner.name}`);
    }
    const n = input.filter((i) => i.type === 'function_call_output' || i.type === 'custom_tool_call_output').length;
    let s = entry.agent ? step(n, b) : { text: 'ok' };
    // For the models it knows, Codex defers MCP tools behind its client-side
    // tool_search: the model searches first, as a real one would.
    const searchable = (b.tools || []).some((t) => t.type === 'tool_search');
    const found = input.some((i) => i.type === 'tool_search_output');
    if (s.tool && searchable && !found && !offered.some((o) => o.endsWith(`.${s.tool}`))) {
      s = { search: `agentls ${s.tool}` };
    }
    const respId = nextId('resp');
    const out = sse(res);
    out('response.created', { type: 'response.created', response: { id: respId, object: 'response', status: 'in_progress', output: [] } });
    let item;
    if (s.search) {
      item = { type: 'tool_search_call', id: nextId('ts'), call_id: nextId('call'), execution: 'client', status: 'completed', arguments: { query: s.search, limit: 8 } };
      out('response.output_item.added', { type: 'response.output_item.added', output_index: 0, item });
    } else if (s.tool) {
      const full = toolName(offered, s.tool, `mcp__agentls__${s.tool}`);
      const dot = full.lastIndexOf('.');
      item = { type: 'function_call', id: nextId('fc'), call_id: nextId('call'), name: dot >= 0 ? full.slice(dot + 1) : full, arguments: JSON.stringify(s.input), status: 'completed' };
      if (dot >= 0) item.namespace = full.slice(0, dot);
      out('response.output_item.added', { type: 'response.output_item.added', output_index: 0, item: { ...item, arguments: '', status: 'in_progress' } });
      out('response.function_call_arguments.delta', { type: 'response.function_call_arguments.delta', item_id: item.id, output_index: 0, delta: item.arguments });
      out('response.function_call_arguments.done', { type: 'response.function_call_arguments.done', item_id: item.id, output_index: 0, arguments: item.arguments });
    } else {
      item = { type: 'message', id: nextId('msg'), role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: s.text, annotations: [] }] };
      out('response.output_item.added', { type: 'response.output_item.added', output_index: 0, item: { ...item, content: [] } });
      out('response.output_text.delta', { type: 'response.output_text.delta', item_id: item.id, output_index: 0, content_index: 0, delta: s.text });
    }
    out('response.output_item.done', { type: 'response.output_item.done', output_index: 0, item });
    out('response.completed', { type: 'response.completed', response: { id: respId, object: 'response', status: 'completed', output: [item], usage: { input_tokens: 10, input_tokens_details: { cached_tokens: 0 }, output_tokens: 5, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 15 } } });
    res.end();
  }

  // --- OpenAI Chat Completions (opencode) ---
  function chat(entry, b, res) {
    const offered = (b.tools || []).map((t) => t.function?.name).filter(Boolean);
    entry.agent = offered.length > 0;
    const n = (b.messages || []).filter((m) => m.role === 'tool').length;
    const s = entry.agent ? step(n, b) : { text: 'ok' };
    const id = nextId('chatcmpl');
    const base = { id, object: 'chat.completion.chunk', created: Math.floor(Date.now() / 1000), model: b.model || 'scripted' };
    let delta;
    if (s.tool) {
      delta = { role: 'assistant', content: null, tool_calls: [{ index: 0, id: nextId('call'), type: 'function', function: { name: toolName(offered, s.tool, `agentls_${s.tool}`), arguments: JSON.stringify(s.input) } }] };
    } else {
      delta = { role: 'assistant', content: s.text };
    }
    const finish = s.tool ? 'tool_calls' : 'stop';
    if (!b.stream) {
      return json(res, { ...base, object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: delta.content ?? null, tool_calls: delta.tool_calls }, finish_reason: finish }], usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } });
    }
    const out = sse(res);
    out(null, { ...base, choices: [{ index: 0, delta, finish_reason: null }] });
    out(null, { ...base, choices: [{ index: 0, delta: {}, finish_reason: finish }], usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } });
    res.write('data: [DONE]\n\n');
    res.end();
  }

  // --- Gemini generateContent (Gemini CLI) ---
  function gemini(entry, b, res, stream) {
    const offered = [];
    for (const t of b.tools || []) for (const f of t.functionDeclarations || []) offered.push(f.name);
    entry.agent = offered.length > 0;
    let n = 0;
    for (const c of b.contents || []) n += (c.parts || []).filter((p) => p.functionResponse).length;
    const s = entry.agent ? step(n, b) : { text: 'ok' };
    const part = s.tool
      ? { functionCall: { name: toolName(offered, s.tool, s.tool), args: s.input } }
      : { text: s.text };
    const chunk = { candidates: [{ content: { role: 'model', parts: [part] }, finishReason: 'STOP', index: 0 }], usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15 }, modelVersion: 'scripted' };
    if (!stream) return json(res, chunk);
    const out = sse(res);
    out(null, chunk);
    res.end();
  }

  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    // The agent-loop requests (those offering tools), in order.
    agentRequests: () => requests.filter((r) => r.agent),
    close: () => new Promise((resolve) => { server.closeAllConnections?.(); server.close(() => resolve()); }),
  };
}

// messageText is the text of an Anthropic request's messages.
function messageText(b) {
  const out = [];
  const walk = (c) => {
    if (typeof c === 'string') out.push(c);
    else if (Array.isArray(c)) c.forEach(walk);
    else if (c && typeof c === 'object') { if (typeof c.text === 'string') out.push(c.text); walk(c.content); }
  };
  for (const m of b.messages || []) walk(m.content);
  return out.join('');
}

function json(res, v) {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify(v));
}

function sse(res) {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
  return (event, data) => {
    if (event) res.write(`event: ${event}\n`);
    res.write(`data: ${JSON.stringify(data)}\n\n`);
  };
}

/**
 * toolResultTexts returns the text of every tool result in a recorded agent
 * request body, in order, whatever the wire format: what the model was shown.
 */
export function toolResultTexts(body) {
  const out = [];
  const flat = (c) => (typeof c === 'string' ? c : Array.isArray(c) ? c.map((x) => (typeof x === 'string' ? x : x.text ?? x.output ?? '')).join('') : c && typeof c === 'object' ? JSON.stringify(c) : '');
  for (const m of body?.messages || []) {
    if (Array.isArray(m.content)) for (const c of m.content) if (c.type === 'tool_result') out.push(flat(c.content));
    if (m.role === 'tool') out.push(flat(m.content));
  }
  for (const i of Array.isArray(body?.input) ? body.input : []) {
    if (i.type === 'function_call_output' || i.type === 'custom_tool_call_output') out.push(flat(i.output));
  }
  for (const c of body?.contents || []) {
    for (const p of c.parts || []) if (p.functionResponse) out.push(flat(p.functionResponse.response));
  }
  return out;
}
