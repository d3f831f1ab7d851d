import * as crypto from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it, vi } from 'vitest';
import { rawJson, RawJson } from '../../src/json/index.js';
import {
  DEFAULT_RECIPIENT_TAG_MAX_AGE_MS,
  RECIPIENT_TAG_KEY,
  createRecipientTag,
  normalizeRecipientUrl,
  withRecipientTag,
} from '../../src/recipient/index.js';
import { checkRecipientTag, recipientUrlHash, TagMacKey, type RecipientTagCheck } from '../../src/recipient/recipient-tag.js';
import { codeOf } from '../helpers/error-code.js';

// timingSafeEqual is wrapped (still the real one) so a test can see that every MAC goes through it.
vi.mock('node:crypto', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:crypto')>();
  return { ...actual, timingSafeEqual: vi.fn(actual.timingSafeEqual) };
});

const SECRET = 'first-secret-0123456789abcdef';
const OLD_SECRET = 'older-secret-0123456789abcdef';
const OTHER_SECRET = 'another-orgs-secret-0123456789';
const URL_A = 'https://hooks.example.com/webhooks/jobs';
const NOW = Date.UTC(2026, 4, 1, 12, 0, 0);
const HOUR = 3_600_000;
const SKEW = 300_000;

const tagAt = (now: number, secret = SECRET, webhookReceiver = URL_A): string => createRecipientTag({ secret, webhookReceiver, now }).value;

function check(tag: unknown, over: Partial<RecipientTagCheck> = {}): ReturnType<typeof checkRecipientTag> {
  return checkRecipientTag(tag, { secrets: [SECRET], now: NOW, maxAgeMs: DEFAULT_RECIPIENT_TAG_MAX_AGE_MS, clockSkewMs: SKEW, ...over });
}

describe('createRecipientTag', () => {
  it('makes v1.<issued s>.<nonce>.<url hash>.<mac> from the injected clock and random bytes', () => {
    const tag = createRecipientTag({
      secret: SECRET,
      webhookReceiver: URL_A,
      now: NOW + 999,
      randomBytes: (n) => new Uint8Array(n).fill(7),
    });
    expect(tag.key).toBe(RECIPIENT_TAG_KEY);
    expect(tag.issuedAt).toBe(NOW / 1000);
    expect(tag.nonce).toBe(Buffer.alloc(16, 7).toString('base64url'));
    const [version, issued, nonce, urlHash, mac] = tag.value.split('.');
    expect([version, issued, nonce, urlHash]).toEqual(['v1', String(NOW / 1000), tag.nonce, recipientUrlHash(URL_A)]);
    const expected = crypto
      .createHmac('sha256', SECRET)
      .update(`jobhook-recipient-tag\nv1.${NOW / 1000}.${tag.nonce}.${urlHash}`)
      .digest('base64url');
    expect(mac).toBe(expected);
    // The same inputs make the same tag; another nonce another one.
    expect(
      createRecipientTag({ secret: SECRET, webhookReceiver: URL_A, now: NOW, randomBytes: (n) => new Uint8Array(n).fill(7) }).value,
    ).toBe(tag.value);
    expect(tagAt(NOW)).not.toBe(tagAt(NOW));
  });

  it('refuses a short secret, a list of secrets, a non-http URL and a bad clock: ERR_OPTION_INVALID', () => {
    expect(codeOf(() => createRecipientTag({ secret: 'short', webhookReceiver: URL_A }))).toBe('ERR_OPTION_INVALID');
    const list = [SECRET, OLD_SECRET] as unknown as string;
    expect(codeOf(() => createRecipientTag({ secret: list, webhookReceiver: URL_A }))).toBe('ERR_OPTION_INVALID');
    expect(codeOf(() => createRecipientTag({ secret: SECRET, webhookReceiver: 'ftp://x/y' }))).toBe('ERR_OPTION_INVALID');
    expect(codeOf(() => createRecipientTag({ secret: SECRET, webhookReceiver: 'not a url' }))).toBe('ERR_OPTION_INVALID');
    expect(codeOf(() => createRecipientTag({ secret: SECRET, webhookReceiver: URL_A, now: Number.NaN }))).toBe('ERR_OPTION_INVALID');
  });

  it('binds the normalized URL: case of scheme and host, default port and fragment do not matter; path and query do', () => {
    expect(normalizeRecipientUrl('HTTPS://Hooks.Example.COM:443/webhooks/jobs#frag')).toBe(URL_A);
    expect(recipientUrlHash('HTTPS://Hooks.Example.COM:443/webhooks/jobs')).toBe(recipientUrlHash(URL_A));
    expect(recipientUrlHash(`${URL_A}?org=b`)).not.toBe(recipientUrlHash(URL_A));
    expect(recipientUrlHash('https://hooks.example.com/webhooks/Jobs')).not.toBe(recipientUrlHash(URL_A));
  });
});

describe('checkRecipientTag', () => {
  it('accepts a fresh tag made with the secret', () => {
    const tag = createRecipientTag({ secret: SECRET, webhookReceiver: URL_A, now: NOW - HOUR });
    expect(check(tag.value)).toEqual({ ok: true, nonce: tag.nonce, issuedAt: tag.issuedAt });
  });

  it('accepts a tag of either secret of a rotation, and tries every secret with timingSafeEqual', () => {
    const spy = vi.mocked(crypto.timingSafeEqual);
    const secrets = [SECRET, OLD_SECRET];
    spy.mockClear();
    expect(check(tagAt(NOW, SECRET), { secrets }).ok).toBe(true);
    // No early exit on the first match: the time taken does not say which secret matched.
    expect(spy).toHaveBeenCalledTimes(2);
    spy.mockClear();
    expect(check(tagAt(NOW, OLD_SECRET), { secrets }).ok).toBe(true);
    expect(spy).toHaveBeenCalledTimes(2);
    spy.mockClear();
    expect(check(tagAt(NOW, OTHER_SECRET), { secrets })).toMatchObject({ ok: false, cause: 'mac' });
    expect(spy).toHaveBeenCalledTimes(2);
    for (const [a, b] of spy.mock.calls) expect([(a as Buffer).length, (b as Buffer).length]).toEqual([32, 32]);
  });

  it('refuses a tag made with another secret (cause mac), and the old secret once it left the list', () => {
    expect(check(tagAt(NOW, OTHER_SECRET))).toMatchObject({ ok: false, cause: 'mac' });
    expect(check(tagAt(NOW, OLD_SECRET))).toMatchObject({ ok: false, cause: 'mac' });
  });

  it('refuses a tag whose fields were changed after it was made (cause mac)', () => {
    const tag = tagAt(NOW);
    const [v, issued, nonce, urlHash, mac] = tag.split('.') as [string, string, string, string, string];
    // A later issue time would stretch a copied tag's life; another URL hash would move it.
    expect(check([v, String(Number(issued) + 3600), nonce, urlHash, mac].join('.'))).toMatchObject({ ok: false, cause: 'mac' });
    const otherHash = recipientUrlHash('https://b.example.com/hooks');
    expect(check([v, issued, nonce, otherHash, mac].join('.'))).toMatchObject({ ok: false, cause: 'mac' });
    const flipped = nonce.startsWith('A') ? `B${nonce.slice(1)}` : `A${nonce.slice(1)}`;
    expect(check([v, issued, flipped, urlHash, mac].join('.'))).toMatchObject({ ok: false, cause: 'mac' });
  });

  it('refuses an expired tag: older than maxAgeMs + clockSkewMs', () => {
    const maxAgeMs = DEFAULT_RECIPIENT_TAG_MAX_AGE_MS;
    expect(DEFAULT_RECIPIENT_TAG_MAX_AGE_MS).toBe(6 * HOUR);
    expect(check(tagAt(NOW - maxAgeMs - SKEW)).ok).toBe(true);
    expect(check(tagAt(NOW - maxAgeMs - SKEW - 1000))).toMatchObject({ ok: false, cause: 'expired' });
    expect(check(tagAt(NOW - 60_000), { maxAgeMs: 1000, clockSkewMs: 0 })).toMatchObject({ ok: false, cause: 'expired' });
  });

  it('refuses a tag from the future beyond clockSkewMs', () => {
    expect(check(tagAt(NOW + SKEW)).ok).toBe(true);
    expect(check(tagAt(NOW + SKEW + 1000))).toMatchObject({ ok: false, cause: 'future' });
  });

  it('refuses a tag made for another URL when the receiver knows its URLs (cause url), and takes any of them', () => {
    const urlHashes = new Set([recipientUrlHash(URL_A), recipientUrlHash('https://backup.example.com/jobs')]);
    expect(check(tagAt(NOW, SECRET, 'https://staging.example.com/webhooks/jobs'), { urlHashes })).toMatchObject({
      ok: false,
      cause: 'url',
    });
    expect(check(tagAt(NOW, SECRET, 'HTTPS://HOOKS.example.com/webhooks/jobs'), { urlHashes }).ok).toBe(true);
    expect(check(tagAt(NOW, SECRET, 'https://backup.example.com/jobs'), { urlHashes }).ok).toBe(true);
    // Without URLs the URL is not checked: a copied tag is bounded by its age only.
    expect(check(tagAt(NOW, SECRET, 'https://staging.example.com/webhooks/jobs')).ok).toBe(true);
  });

  it('tells missing from malformed', () => {
    expect(check(undefined)).toEqual({ ok: false, cause: 'missing' });
    const tag = tagAt(NOW);
    const malformed: unknown[] = [
      null,
      42,
      { tag },
      '',
      `v2${tag.slice(2)}`,
      `${tag}.`,
      `${tag}A`,
      tag.slice(0, -1),
      ` ${tag}`,
      tag.replace('.', '..'),
      `${tag.slice(0, -1)}=`,
      'x'.repeat(100_000),
    ];
    for (const value of malformed) expect(check(value), String(value).slice(0, 40)).toMatchObject({ ok: false, cause: 'malformed' });
    // The MAC's base64url has 2 spare bits: a text with them set decodes to the same bytes, and is refused.
    const last = tag.at(-1)!;
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const sameBytes = alphabet[alphabet.indexOf(last) | 1]!;
    if (sameBytes !== last) expect(check(`${tag.slice(0, -1)}${sameBytes}`)).toMatchObject({ ok: false, cause: 'malformed' });
  });
});

describe('withRecipientTag', () => {
  const tag = createRecipientTag({ secret: SECRET, webhookReceiver: URL_A, now: NOW });

  it('makes an object of absent parameters, and adds the member to an object', () => {
    expect(withRecipientTag(undefined, tag)).toEqual({ [RECIPIENT_TAG_KEY]: tag.value });
    expect(withRecipientTag(null, tag)).toEqual({ [RECIPIENT_TAG_KEY]: tag.value });
    const params = { order_id: 'A-1001', amount: rawJson('10.50') };
    const tagged = withRecipientTag(params, tag) as Record<string, unknown>;
    expect(tagged).toEqual({ order_id: 'A-1001', amount: params.amount, [RECIPIENT_TAG_KEY]: tag.value });
    expect(params).not.toHaveProperty(RECIPIENT_TAG_KEY); // the caller's object is not changed
  });

  it("splices the member into a RawJson's text, every byte of the caller's text kept", () => {
    const text = '{ "amount": 1.0, "n": 123456789012345678901234567890, "s": "caf\\u00e9", "nested": {"a": []} }\n';
    const tagged = withRecipientTag(rawJson(text), tag);
    expect(tagged).toBeInstanceOf(RawJson);
    const out = (tagged as RawJson).text;
    const close = text.lastIndexOf('}');
    expect(out).toBe(`${text.slice(0, close)},"${RECIPIENT_TAG_KEY}":"${tag.value}"${text.slice(close)}`);
    expect((withRecipientTag(rawJson(' { \t} '), tag) as RawJson).text).toBe(` { \t"${RECIPIENT_TAG_KEY}":"${tag.value}"} `);
  });

  it('refuses parameters that already hold the key (ERR_RECIPIENT_KEY_TAKEN), duplicates and RawJson included', () => {
    expect(codeOf(() => withRecipientTag({ [RECIPIENT_TAG_KEY]: 'mine' }, tag))).toBe('ERR_RECIPIENT_KEY_TAKEN');
    expect(codeOf(() => withRecipientTag(rawJson(`{"${RECIPIENT_TAG_KEY}": "mine"}`), tag))).toBe('ERR_RECIPIENT_KEY_TAKEN');
    // Python's json keeps the LAST duplicate: an appended tag would decide which value the service echoes.
    const dup = `{"${RECIPIENT_TAG_KEY}": 1, "x": 2, "${RECIPIENT_TAG_KEY}": 3}`;
    expect(codeOf(() => withRecipientTag(rawJson(dup), tag))).toBe('ERR_RECIPIENT_KEY_TAKEN');
    // Escaped spelling of the same key.
    expect(codeOf(() => withRecipientTag(rawJson('{"jobhook\\u005frecipient": 1}'), tag))).toBe('ERR_RECIPIENT_KEY_TAKEN');
  });

  it('refuses parameters that are not an object: ERR_OPTION_INVALID', () => {
    for (const params of [rawJson('[1]'), rawJson('"x"'), rawJson('1.5'), [1], 'text', 3]) {
      expect(codeOf(() => withRecipientTag(params, tag))).toBe('ERR_OPTION_INVALID');
    }
  });
});

describe('TagMacKey (the receiver’s precomputed HMAC)', () => {
  it('makes the bytes createHmac makes, for secrets shorter and longer than a SHA-256 block, beyond ASCII, and any text (longer than a tag too)', () => {
    fc.assert(
      fc.property(
        fc.string({ minLength: 16, maxLength: 200, unit: 'binary' }),
        fc.oneof(fc.stringMatching(/^[A-Za-z0-9._-]{0,300}$/), fc.string({ maxLength: 200, unit: 'binary' })),
        (secret, signed) => {
          const expected = crypto.createHmac('sha256', secret).update('jobhook-recipient-tag\n').update(signed, 'utf8').digest();
          expect(new TagMacKey(secret).mac(signed).equals(expected)).toBe(true);
        },
      ),
      { numRuns: 2_000 },
    );
  });

  it('gives each call its own answer (its buffers are reused: a longer text before does not leak into a shorter one)', () => {
    const key = new TagMacKey(SECRET);
    const long = key.mac('v1.1.aaaaaaaaaaaaaaaaaaaaaa.bbbbbbbbbbbbbbbbbbbbbb');
    const short = key.mac('v1.1');
    expect(short.equals(crypto.createHmac('sha256', SECRET).update('jobhook-recipient-tag\nv1.1').digest())).toBe(true);
    expect(long.equals(short)).toBe(false);
  });
});
