// Polynomial prefix hashes of token arrays (two moduli, combined into one safe-integer key).
// Used to find, in time linear in the tokens, which earlier tip a prompt extends. Hits are always
// confirmed by an exact comparison before they are trusted for merging.

const P1 = 2147483647; // 2^31 - 1
const B1 = 1000003;
const P2 = 2147483629;
const B2 = 999983;
const LOW = 4194304; // 2^22: key = h1 * 2^22 + (h2 mod 2^22) < 2^53

export class PrefixHasher {
  /** h1[i], h2[i] = hashes of tokens[0:i]; index 0 is the empty prefix. */
  readonly h1: Float64Array;
  readonly h2: Float64Array;
  length = 0;

  constructor(capacity: number) {
    this.h1 = new Float64Array(capacity + 1);
    this.h2 = new Float64Array(capacity + 1);
  }

  push(token: number): void {
    const t = (token >>> 0) % 2147483587;
    const i = this.length;
    this.h1[i + 1] = (this.h1[i] * B1 + t + 1) % P1;
    this.h2[i + 1] = (this.h2[i] * B2 + t + 1) % P2;
    this.length = i + 1;
  }

  pushAll(tokens: ArrayLike<number>): void {
    for (let i = 0; i < tokens.length; i++) this.push(tokens[i]);
  }

  /** Key of the prefix of length i (0 ≤ i ≤ length). */
  key(i: number): number {
    return this.h1[i] * LOW + (this.h2[i] % LOW);
  }
}
