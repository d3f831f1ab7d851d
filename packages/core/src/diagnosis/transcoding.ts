/**
 * Character-level changes that happen to webhook bodies in real deployments, and how to undo them:
 * UTF-8 bytes decoded as Latin-1 or Windows-1252 and re-encoded (mojibake, once or twice), the body
 * re-encoded in Latin-1 / cp1252 outright, and Unicode normalization (NFC, NFD). Each undo is a
 * candidate body; a candidate the signature covers names the change.
 */

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
