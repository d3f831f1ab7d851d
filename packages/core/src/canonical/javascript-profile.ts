import { JobhookError } from '../errors.js';
import type { ParsedBody } from './tape.js';

type Loose = null | boolean | number | string | Loose[] | { [key: string]: Loose };

/**
 * The recipe of the service's Node.js documentation, taken literally as the reference:
 * `JSON.stringify(sortKeysDeep(JSON.parse(body)), null, 2)` where `sortKeysDeep` rebuilds each object
 * from `Object.keys(o).sort()` by plain assignment. Its quirks are the profile: integer-like keys come
 * first (JavaScript objects order them so), numbers are doubles (`1.0` prints `1`, big integers round),
 * and a `__proto__` key is lost.
 * @internal
 */
export function serializeJavaScript(doc: ParsedBody): Buffer {
  const bytes = doc.bytes;
  const bom = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0;
  const text = Buffer.from(bytes.buffer, bytes.byteOffset + bom, bytes.byteLength - bom).toString('utf8');
  let value: Loose;
  try {
    value = JSON.parse(text) as Loose;
  } catch (cause) {
    // Python accepts NaN and Infinity; JSON.parse does not, so this profile has no form for them.
    throw new JobhookError('ERR_CANONICAL_UNREPRESENTABLE', 'the javascript profile cannot read this body with JSON.parse', {
      cause,
    });
  }
  return Buffer.from(JSON.stringify(sortKeysDeep(value), null, 2), 'utf8');
}

function sortKeysDeep(v: Loose): Loose {
  if (Array.isArray(v)) return v.map(sortKeysDeep);
  if (v === null || typeof v !== 'object') return v;
  const out: { [key: string]: Loose } = {};
  for (const key of Object.keys(v).sort()) out[key] = sortKeysDeep(v[key]!);
  return out;
}
