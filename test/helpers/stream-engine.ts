// A vLLM-shaped engine with one long streamed answer per call, written one token at a time and honouring its own
// socket's backpressure (it waits for 'drain'), so `written()` tells how much of the answer a reader took.
// Tokens carry `wordChars` characters each, so an answer can outgrow the kernel's socket buffers (tens of MB on
// loopback). Used by the backpressure test and bench/hardening.ts.
import { createServer } from 'node:http';

export interface StreamEngine { url: string; model: string; written(): number; close(): Promise<void> }

export async function startStreamEngine(opts: { tokens: number; wordChars: number; model?: string }): Promise<StreamEngine> {
  const model = opts.model ?? 'Qwen/Qwen3-8B';
  const word = ` ${'x'.repeat(Math.max(0, opts.wordChars - 1))}`;
  const head = `{"id":"chatcmpl-stream","object":"chat.completion.chunk","created":1,"model":"${model}",`;
  const frame = (i: number) => `data: ${head}"choices":[{"index":0,"delta":{"content":"${word}"},"logprobs":{"content":[{"token":"${word}","logprob":-0.5,"bytes":[],"top_logprobs":[]}]},"finish_reason":${i === opts.tokens - 1 ? '"length"' : 'null'},"token_ids":[${1000 + (i % 5000)}]}]}\n\n`;
  let written = 0;
  const server = createServer((req, res) => {
    if (req.url === '/health') { res.writeHead(200).end(); return; }
    if (req.method !== 'POST' || req.url !== '/v1/chat/completions') { res.writeHead(404).end(); return; }
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`data: ${head}"choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}],"prompt_token_ids":[1,2,3]}\n\n`);
      let i = 0;
      const pump = () => {
        while (i < opts.tokens) {
          written++;
          if (!res.write(frame(i++))) { res.once('drain', pump); return; }
        }
        res.end(`data: ${head}"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":${opts.tokens},"total_tokens":${opts.tokens + 3}}}\n\ndata: [DONE]\n\n`);
      };
      res.on('close', () => res.off('drain', pump));
      pump();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    model,
    written: () => written,
    close: () => new Promise((r) => { server.closeAllConnections(); server.close(() => r()); }),
  };
}
