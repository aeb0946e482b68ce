// A canned vLLM-compatible engine for the capacity measurement: it answers /v1/chat/completions (stream
// and non-stream, with prompt_token_ids, token_ids and logprobs) from a precomputed answer, without a
// tokenizer or a policy, so it costs far less CPU per request than the sim. The sim stays the engine of
// the overhead figures; this one only shows what Rollgate sustains when the engine is not the bottleneck.
//   node --import tsx bench/canned-engine.ts [--port 0] [--prompt-tokens 250] [--output-tokens 32]
import { createServer } from 'node:http';

export async function startCannedEngine(opts: { port?: number; promptTokens?: number; outputTokens?: number } = {}) {
  const P = opts.promptTokens ?? 250;
  const N = opts.outputTokens ?? 32;
  const promptIds = Array.from({ length: P }, (_, i) => 1000 + ((i * 7919) % 140000));
  const outIds = Array.from({ length: N }, (_, i) => 2000 + ((i * 104729) % 140000));
  const words = outIds.map((_, i) => (i === N - 1 ? ' done.' : ` w${i}`));
  const model = 'Qwen/Qwen3-8B';
  let running = 0;
  let requests = 0;
  let connections = 0;
  const head = (id: string) => `{"id":"${id}","object":"chat.completion.chunk","created":1,"model":"${model}",`;
  // Precomputed frames: only the id differs per request.
  const tokenFrames = outIds.map((t, i) => `"choices":[{"index":0,"delta":{"content":${JSON.stringify(words[i])}},"logprobs":{"content":[{"token":${JSON.stringify(words[i])},"logprob":-0.${(i % 9) + 1}25,"bytes":[],"top_logprobs":[]}]},"finish_reason":${i === N - 1 ? '"length"' : 'null'},"token_ids":[${t}]}]}\n\n`);
  const firstFrame = `"choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}],"prompt_token_ids":[${promptIds.join(',')}]}\n\n`;
  const usage = `"choices":[],"usage":{"prompt_tokens":${P},"completion_tokens":${N},"total_tokens":${P + N}}}\n\n`;
  const full = JSON.stringify({
    object: 'chat.completion', created: 1, model, prompt_token_ids: promptIds,
    choices: [{ index: 0, message: { role: 'assistant', content: words.join(''), reasoning: null, tool_calls: [] }, logprobs: { content: outIds.map((_, i) => ({ token: words[i], logprob: -0.125, bytes: [], top_logprobs: [] })) }, finish_reason: 'length', token_ids: outIds }],
    usage: { prompt_tokens: P, completion_tokens: N, total_tokens: P + N },
  }).slice(1);

  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method === 'GET' && path === '/health') { res.writeHead(200).end(); return; }
    if (req.method === 'GET' && path === '/metrics') {
      res.writeHead(200, { 'content-type': 'text/plain' }).end(`vllm:num_requests_running{engine="0"} ${running}\nvllm:num_requests_waiting{engine="0"} 0\nbench_connections_total ${connections}\nbench_requests_total ${requests}\n`);
      return;
    }
    if (req.method !== 'POST' || path !== '/v1/chat/completions') { res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"message":"not found","code":404}}'); return; }
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      requests++;
      let body: { stream?: boolean };
      try { body = JSON.parse(Buffer.concat(chunks).toString('utf8')); } catch { res.writeHead(400).end('{"error":{"message":"bad json","code":400}}'); return; }
      const id = `chatcmpl-${requests.toString(16).padStart(12, '0')}`;
      if (!body.stream) {
        res.writeHead(200, { 'content-type': 'application/json' }).end(`{"id":"${id}",${full}`);
        return;
      }
      running++;
      res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
      const h = head(id);
      let out = `data: ${h}${firstFrame}`;
      for (const f of tokenFrames) out += `data: ${h}${f}`;
      out += `data: ${h}${usage}data: [DONE]\n\n`;
      res.end(out);
      running--;
    });
  });
  server.on('connection', () => { connections++; });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((r) => server.listen(opts.port ?? 0, '127.0.0.1', r));
  const addr = server.address();
  const url = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`;
  return { url, close: () => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); }) };
}

if (process.argv[1] && import.meta.url.endsWith(process.argv[1].split('/').pop()!)) {
  const arg = (name: string) => { const i = process.argv.indexOf(name); return i >= 0 ? process.argv[i + 1] : undefined; };
  const e = await startCannedEngine({ port: Number(arg('--port') ?? 0), promptTokens: Number(arg('--prompt-tokens') ?? 250), outputTokens: Number(arg('--output-tokens') ?? 32) });
  const stop = () => { void e.close().finally(() => process.exit(0)); };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  console.log(`listening on ${e.url}`);
}
