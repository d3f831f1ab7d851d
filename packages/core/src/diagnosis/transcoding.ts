/**
 * Character-level changes that happen to webhook bodies in real deployments, and how to undo them:
 * UTF-8 bytes decoded as Latin-1 or Windows-1252 and re-encoded (mojibake, once or twice), the body
 * re-encoded in Latin-1 / cp1252 outright, and Unicode normalization (NFC, NFD). Each undo is a
 * candidate body; a candidate the signature covers names the change. {@link TEXT_CHANGES} are the
 * same changes as undos of one string, for the parsed strings of a body that was also re-serialized
 * (its escapes rewritten) and for changes that came in twos.
 */
import { parseBodyUnchecked, TRUSTED_INPUT } from '../canonical/parse.js';
import { toLosslessValue, type LosslessJsonValue } from '../canonical/to-value.js';
import { RawJson } from '../canonical/value-json.js';

/** One candidate: the bytes the change would have started from, and what the change was. @internal */
export interface UndoneChange {
  readonly body: Buffer;
  /** e.g. `utf8-read-as-latin1`, `nfd-normalized`. */
  readonly change: string;
  readonly description: string;
}

/**
 * Windows-1252's characters for bytes 0x80–0x9F (the rest of the charset is Latin-1). Written out
 * because Node 20's `TextDecoder('windows-1252')` decodes as Latin-1; the five bytes cp1252 leaves
 * undefined (0x81, 0x8D, 0x8F, 0x90, 0x9D) stand for themselves, as lenient decoders pass them.
 */
const CP1252_HIGH: readonly string[] = [
  '\u20ac',
  '\u0081',
  '\u201a',
  '\u0192',
  '\u201e',
  '\u2026',
  '\u2020',
  '\u2021',
  '\u02c6',
  '\u2030',
  '\u0160',
  '\u2039',
  '\u0152',
  '\u008d',
  '\u017d',
  '\u008f',
  '\u0090',
  '\u2018',
  '\u2019',
  '\u201c',
  '\u201d',
  '\u2022',
  '\u2013',
  '\u2014',
  '\u02dc',
  '\u2122',
  '\u0161',
  '\u203a',
  '\u0153',
  '\u009d',
  '\u017e',
  '\u0178',
];
/** Char → byte for cp1252's 0x80–0x9F. */
const CP1252_BYTE = new Map<string, number>(CP1252_HIGH.map((ch, i) => [ch, 0x80 + i]));

/** The single bytes of `text` in Latin-1 or cp1252, or undefined when a character has none. @internal */
export function singleBytes(text: string, charset: 'latin1' | 'cp1252'): Buffer | undefined {
  const out = Buffer.allocUnsafe(text.length);
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    let byte: number | undefined;
    if (code < 0x80) byte = code;
    else if (charset === 'cp1252') byte = CP1252_BYTE.get(text[i]!) ?? (code >= 0xa0 && code <= 0xff ? code : undefined);
    else byte = code <= 0xff ? code : undefined;
    if (byte === undefined) return undefined;
    out[i] = byte;
  }
  return out;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

function decodeUtf8(bytes: Uint8Array): string | undefined {
  try {
    return utf8.decode(bytes);
  } catch {
    return undefined;
  }
}

/** The text of `bytes` in a single-byte charset (every byte is a character). @internal */
export function decodeSingle(bytes: Uint8Array, charset: 'latin1' | 'cp1252'): string {
  const latin1 = Buffer.from(bytes).toString('latin1');
  return charset === 'latin1' ? latin1 : latin1.replace(/[\x80-\x9f]/g, (ch) => CP1252_HIGH[ch.charCodeAt(0) - 0x80]!);
}

/**
 * The bodies the given one may have been before a character-level change, cheapest first; none
 * equal to the body itself. Bounded: at most nine candidates, each at most as long as the body.
 * @internal
 */
export function undoCharacterChanges(body: Uint8Array): UndoneChange[] {
  const out: UndoneChange[] = [];
  const seen = new Set<string>([Buffer.from(body).toString('latin1')]);
  const add = (candidate: Buffer | undefined, change: string, description: string): void => {
    if (candidate === undefined) return;
    const key = candidate.toString('latin1');
    if (seen.has(key)) return;
    seen.add(key);
    out.push({ body: candidate, change, description });
  };
  const text = decodeUtf8(body);
  if (text === undefined) {
    // Not UTF-8: the whole body may have been re-encoded in a single-byte charset.
    for (const charset of ['latin1', 'cp1252'] as const) {
      add(
        Buffer.from(decodeSingle(body, charset), 'utf8'),
        `reencoded-as-${charset}`,
        `the body was re-encoded from UTF-8 to ${charset === 'latin1' ? 'Latin-1 (ISO-8859-1)' : 'Windows-1252'}`,
      );
    }
    return out;
  }
  if (/[^\x00-\x7f]/.test(text)) {
    for (const charset of ['latin1', 'cp1252'] as const) {
      const once = singleBytes(text, charset);
      const name = charset === 'latin1' ? 'Latin-1' : 'Windows-1252 (cp1252)';
      add(once, `utf8-read-as-${charset}`, `UTF-8 bytes were read as ${name} and written back as UTF-8 (mojibake: "Ã©" for "é")`);
      const onceText = once === undefined ? undefined : decodeUtf8(once);
      const twice = onceText === undefined ? undefined : singleBytes(onceText, charset);
      add(twice, `utf8-read-as-${charset}-twice`, `UTF-8 bytes were read as ${name} and re-encoded twice (double mojibake)`);
    }
    for (const form of ['NFC', 'NFD', 'NFKC'] as const) {
      const normalized: string = text.normalize(form);
      if (normalized !== text) {
        add(
          Buffer.from(normalized, 'utf8'),
          `unicode-normalized-from-${form.toLowerCase()}`,
          `the text was Unicode-normalized on the way (it was ${form} when signed)`,
        );
      }
    }
  }
  return out;
}

/** A change to the text of a body's strings, and its undo (`undefined` when it cannot have happened). @internal */
export interface TextChange {
  readonly change: string;
  readonly description: string;
  undo(text: string): string | undefined;
}

/** Mojibake undone on one string: its characters as single bytes, read back as UTF-8. */
function undoMojibake(text: string, charset: 'latin1' | 'cp1252'): string | undefined {
  if (!/[^\x00-\x7f]/.test(text)) return text;
  const bytes = singleBytes(text, charset);
  return bytes === undefined ? undefined : decodeUtf8(bytes);
}

/** The string-level changes, in the order they are tried. @internal */
export const TEXT_CHANGES: readonly TextChange[] = [
  {
    change: 'utf8-read-as-latin1',
    description: 'UTF-8 bytes were read as Latin-1 and written back as UTF-8 (mojibake)',
    undo: (t) => undoMojibake(t, 'latin1'),
  },
  {
    change: 'utf8-read-as-cp1252',
    description: 'UTF-8 bytes were read as Windows-1252 and written back as UTF-8 (mojibake)',
    undo: (t) => undoMojibake(t, 'cp1252'),
  },
  {
    change: 'unicode-normalized-from-nfc',
    description: 'the text was Unicode-normalized (it was NFC when signed)',
    undo: (t) => t.normalize('NFC'),
  },
  {
    change: 'unicode-normalized-from-nfd',
    description: 'the text was Unicode-normalized (it was NFD when signed)',
    undo: (t) => t.normalize('NFD'),
  },
  {
    change: 'unicode-normalized-from-nfkc',
    description: 'the text was Unicode-normalized (it was NFKC when signed)',
    undo: (t) => t.normalize('NFKC'),
  },
];

/** One parsed-string candidate: the value with a sequence of changes undone, and which. @internal */
export interface UndoneTextChanges {
  readonly value: LosslessJsonValue;
  /** The changes in the order they happened (undone in reverse). */
  readonly changes: readonly TextChange[];
}

/** At most this many string-level candidates per body (singles and pairs of {@link TEXT_CHANGES}). */
export const MAX_TEXT_CANDIDATES = 30;

/**
 * Candidates for a body whose strings were changed and whose JSON may also have been re-serialized:
 * every string (keys and values) of its parsed value with one change undone, then with two (the later
 * change undone first), skipping undos that change nothing. Bounded by {@link MAX_TEXT_CANDIDATES}.
 * `undefined` when the body does not parse.
 * @internal
 */
export function undoTextChanges(body: Uint8Array): UndoneTextChanges[] | undefined {
  let value: LosslessJsonValue;
  try {
    value = toLosslessValue(parseBodyUnchecked(body, TRUSTED_INPUT));
  } catch {
    return undefined;
  }
  const out: UndoneTextChanges[] = [];
  const singles: UndoneTextChanges[] = [];
  for (const change of TEXT_CHANGES) {
    const undone = mapStrings(value, change.undo);
    if (undone !== undefined) singles.push({ value: undone, changes: [change] });
  }
  out.push(...singles);
  for (const later of singles) {
    for (const earlier of TEXT_CHANGES) {
      if (out.length >= MAX_TEXT_CANDIDATES) return out;
      const undone = mapStrings(later.value, earlier.undo);
      if (undone !== undefined) out.push({ value: undone, changes: [earlier, ...later.changes] });
    }
  }
  return out;
}

/** `value` with `undo` applied to every string and key; `undefined` when nothing changed or an undo failed. */
function mapStrings(value: LosslessJsonValue, undo: (text: string) => string | undefined): LosslessJsonValue | undefined {
  let changed = false;
  let failed = false;
  const walk = (v: LosslessJsonValue): LosslessJsonValue => {
    if (failed) return v;
    if (typeof v === 'string') {
      const u = undo(v);
      if (u === undefined) {
        failed = true;
        return v;
      }
      if (u !== v) changed = true;
      return u;
    }
    if (v === null || typeof v !== 'object' || v instanceof RawJson) return v;
    if (Array.isArray(v)) return v.map(walk);
    const out: { [key: string]: LosslessJsonValue } = {};
    for (const [key, item] of Object.entries(v)) {
      const k = walk(key) as string;
      Object.defineProperty(out, k, { value: walk(item), enumerable: true, writable: true, configurable: true });
    }
    return out;
  };
  const result = walk(value);
  return failed || !changed ? undefined : result;
}
