// Which codec serves which agent-facing path.
import type { DialectCodec } from '../core/dialects/codec.js';
import { openAIChatCodec } from '../core/dialects/openai-chat.js';

export interface DialectRoute {
  codec: DialectCodec;
  method: 'POST';
  /** Path below the session prefix (`/s/:key`) or the bare origin. */
  path: string;
}

export const dialectRoutes: DialectRoute[] = [
  { codec: openAIChatCodec as DialectCodec, method: 'POST', path: '/v1/chat/completions' },
];

/** The dialect a failed request should be answered in, judged from its URL alone. */
export function codecForUrl(url: string): DialectCodec {
  const path = url.split('?')[0]!;
  for (const r of dialectRoutes) if (path.endsWith(r.path)) return r.codec;
  return openAIChatCodec as DialectCodec;
}
