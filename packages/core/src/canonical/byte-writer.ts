import { createHash, hash as oneShotHash, type Hash } from 'node:crypto';
import type { WorkBudget } from './work-budget.js';

const typedArrayFill = Uint8Array.prototype.fill;

/**
 * A growable output buffer for the serializers. Given a hash, it is a fixed window instead: full
 * windows go into the hash, so a canonical form can be digested in bounded memory whatever its size,
 * and each window's bytes are charged to the budget, if any, as they go into the hash.
 * @internal
 */
export class ByteWriter {
  buf: Buffer;
  pos = 0;
  /** Hashing: the window, and the hash once a window was full (small outputs hash in one shot). */
  private readonly hashing: boolean;
  private sink: Hash | undefined;

  /** A growing buffer of `initialBytes`, or (with `window`) a window whose bytes are hashed and charged to `budget`. */
  constructor(
    initialBytes: number,
    window?: Buffer,
    private readonly budget?: WorkBudget,
  ) {
    this.hashing = window !== undefined;
    this.buf = window ?? Buffer.allocUnsafe(Math.max(64, initialBytes));
  }

  ensure(extra: number): void {
    const need = this.pos + extra;
    if (need <= this.buf.length) return;
    if (this.hashing) {
      this.flush();
      if (extra <= this.buf.length) return;
    }
    let size = this.buf.length * 2;
    while (size < this.pos + extra) size *= 2;
    const grown = Buffer.allocUnsafe(size);
    this.buf.copy(grown, 0, 0, this.pos);
    this.buf = grown;
  }

  /** Hands the written bytes to the hash and starts the window again. */
  private flush(): void {
    this.budget?.charge(this.pos);
    this.sink ??= createHash('sha256');
    if (this.pos > 0) this.sink.update(this.buf.subarray(0, this.pos));
    this.pos = 0;
  }

  byte(c: number): void {
    if (this.pos >= this.buf.length) this.ensure(1);
    this.buf[this.pos++] = c;
  }

  /** Writes a string known to be ASCII. */
  ascii(s: string): void {
    const n = s.length;
    this.ensure(n);
    const buf = this.buf;
    let p = this.pos;
    for (let i = 0; i < n; i++) buf[p++] = s.charCodeAt(i);
    this.pos = p;
  }

  /** Writes any well-formed string as UTF-8. */
  utf8(s: string): void {
    if (this.hashing && s.length * 3 > this.buf.length) {
      // Longer than the window could hold: straight into the hash.
      this.flush();
      this.budget?.charge(Buffer.byteLength(s, 'utf8'));
      this.sink!.update(s, 'utf8');
      return;
    }
    this.ensure(s.length * 3);
    this.pos += this.buf.write(s, this.pos, 'utf8');
  }

  /** Copies `src[start, end)`. */
  copy(src: Uint8Array, start: number, end: number): void {
    const n = end - start;
    if (this.hashing && n > this.buf.length) {
      // Longer than the window: straight into the hash.
      this.flush();
      this.budget?.charge(n);
      this.sink!.update(src.subarray(start, end));
      return;
    }
    this.ensure(n);
    const buf = this.buf;
    if (n < 24) {
      // Short copies are cheaper as a loop than as a native call.
      let p = this.pos;
      for (let i = start; i < end; i++) buf[p++] = src[i]!;
      this.pos = p;
    } else {
      buf.set(src.subarray(start, end), this.pos);
      this.pos += n;
    }
  }

  /** Writes a newline and `2 * depth` spaces. */
  newlineIndent(depth: number): void {
    const n = 1 + 2 * depth;
    this.ensure(n);
    const buf = this.buf;
    let p = this.pos;
    buf[p++] = 0x0a;
    if (n <= 17) {
      for (let i = 1; i < n; i++) buf[p++] = 0x20;
    } else {
      // The typed array's own fill: Buffer#fill checks its arguments in JavaScript first, which
      // doubles the cost of deep indentation (every line of a body nested 100 levels is 200+ spaces).
      typedArrayFill.call(buf, 0x20, p, p + n - 1);
      p += n - 1;
    }
    this.pos = p;
  }

  /** The written bytes (a view; the writer must not be used afterwards). */
  result(): Buffer {
    return this.buf.subarray(0, this.pos);
  }

  /** Hashing: the lowercase SHA-256 hex of everything written. */
  digestHex(): string {
    if (this.sink === undefined) {
      this.budget?.charge(this.pos);
      return oneShotHash('sha256', this.buf.subarray(0, this.pos), 'hex');
    }
    this.flush();
    return this.sink.digest('hex');
  }
}
