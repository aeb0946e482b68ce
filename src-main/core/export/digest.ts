// Export row integrity (issue 14): sha256 over exactly what a trainer consumes — the ids, the loss mask and
// the logprobs — in a fixed binary layout, so a file can be re-checked against itself and against the store
// (`rollgate export --verify FILE`). Layout: "rollgate-trace-v1\0", then for each of prompt_ids, response_ids
// (Int32 LE), loss_mask (Uint8), response_logprobs (Float32 LE): its length (Uint32 LE) and its values.
import { createHash } from 'node:crypto';

export interface DigestFields {
  prompt_ids: ArrayLike<number>;
  response_ids: ArrayLike<number>;
  loss_mask: ArrayLike<number>;
  response_logprobs: ArrayLike<number>;
}

const TAG = Buffer.from('rollgate-trace-v1\0', 'utf8');

function block(values: ArrayLike<number>, width: 1 | 4, put: (view: DataView, at: number, v: number) => void): Buffer {
  const out = Buffer.alloc(4 + values.length * width);
  const view = new DataView(out.buffer, out.byteOffset, out.byteLength);
  view.setUint32(0, values.length, true);
  for (let i = 0; i < values.length; i++) put(view, 4 + i * width, values[i]!);
  return out;
}

export function traceDigest(row: DigestFields): string {
  const h = createHash('sha256');
  h.update(TAG);
  h.update(block(row.prompt_ids, 4, (v, at, x) => v.setInt32(at, x, true)));
  h.update(block(row.response_ids, 4, (v, at, x) => v.setInt32(at, x, true)));
  h.update(block(row.loss_mask, 1, (v, at, x) => v.setUint8(at, x)));
  h.update(block(row.response_logprobs, 4, (v, at, x) => v.setFloat32(at, x, true)));
  return `sha256:${h.digest('hex')}`;
}
