import { JobhookError } from '../errors.js';
import { parseBodyUnchecked, type ParseRun } from '../canonical/parse.js';
import type { CanonicalProfile } from '../canonical/profiles.js';
import type { RequestHeaders } from '../http/request-headers.js';
import { recoverDigests } from '../signature/recover-digest.js';
import { verifyBody } from '../signature/verifier.js';
import type { DIAGNOSIS_CAUSES, DiagnosisCause } from '../causes.js';
import { CAUSE_FIX } from './cause-fix.js';
import { pythonFloatForm, reserializationSigns } from './reserialized.js';
import { listHeaders } from '../http/header-list.js';
import { findSignature } from './signature-findings.js';
import { undoCharacterChanges, undoTextChanges } from './transcoding.js';
import { valueToJson } from '../canonical/value-json.js';
import { resolveDiagnoseOptions, type DiagnoseOptions } from './diagnosis-option-checks.js';

/** One delivery to diagnose, as it reached you (or as `captureFailures` wrote it). */
export interface DiagnosisRequest {
  /** HTTP method. Not part of the signature; a webhook is a POST. */
  method?: string;
  /** Request headers (a record, Node's `req.headers`, or a fetch `Headers`). */
  headers: RequestHeaders;
  /**
   * The body bytes exactly as received. A string is taken as its UTF-8 bytes. Undefined when the
   * body was not kept (a capture refused on its headers): a diagnosis then says nothing of the body.
   */
  body: Uint8Array | string | undefined;
}

/** Why a delivery verifies or not, and what to change. */
export interface Diagnosis {
  /** True only for `cause: 'verified'`. */
  verified: boolean;
  /** Why: `verified`, or the first failure found in the order of {@link DIAGNOSIS_CAUSES}. */
  cause: DiagnosisCause;
  /** What happened to this delivery, specifically (names headers, keys, the change found). */
  message: string;
  /** What to change (the same advice for every delivery of a cause). */
  fix: string;
  /** The canonical profile the signature matched (verified, or after undoing the change found). */
  profile?: CanonicalProfile;
  /** Id of the key that made the signature, when one of yours did. */
  keyId?: string;
  /** Machine-readable specifics: `keyIdsTried`, `header`, `shape`, `onceFixed`, `kind`, `code`, `change`, `numbers`, `bigIntegers`. */
  detail?: Record<string, unknown>;
}

/**
 * Says why a delivery's signature fails (or that it verifies): the header causes, `unknown-key`
 * (what the public operation recovers tells "signed by none of your keys" from "signed by yours,
 * over other bytes"), `body-malformed`, `verified`, and for a body one of your keys signed but that
 * does not match, the change that explains it: `body-transcoded` (undoing a charset or Unicode
 * normalization change makes it verify), `body-reserialized` (a heuristic: the body is what
 * `JSON.parse` + `JSON.stringify` make and holds numbers JavaScript writes differently from
 * Python), else `body-modified`.
 *
 * Meant for offline use (`jobhook doctor`, a support tool, a test): it tries up to a dozen candidate
 * bodies, each a full verification. Anyone who once received a signed delivery can make a signature
 * decode, so a receiver must not run this on every unauthenticated request; its log lines carry the
 * cheap causes instead.
 *
 * @example
 * ```ts
 * const d = diagnoseDelivery({ headers: req.headers, body: rawBody }, { publicKeys: readFileSync('service.pem') });
 * if (!d.verified) console.log(`${d.cause}: ${d.message}\n${d.fix}`);
 * ```
 * @throws JobhookError `ERR_KEY_INVALID` / `ERR_OPTION_INVALID` for bad options; never for a bad delivery.
 */
export function diagnoseDelivery(request: DiagnosisRequest, options: DiagnoseOptions): Diagnosis {
  const { keyRing, names, profiles, limits } = resolveDiagnoseOptions(options);
  const run: ParseRun = { ...limits, scratch: false };
  const kept = request.body;
  const body = kept === undefined ? Buffer.alloc(0) : typeof kept === 'string' ? Buffer.from(kept, 'utf8') : kept;

  const head = findSignature(request.headers, names, keyRing);
  if (!head.ok) {
    if (head.recovered === undefined) return failure(head.cause, head.message, { detail: { ...head.detail } });
    // The signature is there in another place or dress: say what the delivery would be once it is read right.
    const headers: Record<string, string | string[]> = Object.fromEntries(
      listHeaders(request.headers, [names.signature, names.hashAlgorithm, names.webhook]),
    );
    headers[names.signature.toLowerCase()] = head.recovered;
    const fixed = diagnoseDelivery({ ...request, headers, body }, { ...options, publicKeys: keyRing });
    // Without the body only the key can be told: no guess at what the body would do.
    const onceFixed = kept === undefined && fixed.cause !== 'unknown-key' ? undefined : fixed.cause;
    const then =
      onceFixed === undefined
        ? `read from there, key ${shortId(fixed.keyId ?? '')} decodes the signature; the body was not kept, so whether it verifies cannot be told`
        : fixed.verified
          ? 'read from there, the signature verifies'
          : `read from there, the delivery still fails: ${fixed.cause}`;
    return failure(head.cause, `${head.message}; ${then}`, {
      ...(fixed.keyId === undefined ? {} : { keyId: fixed.keyId }),
      detail: { ...head.detail, ...(onceFixed === undefined ? {} : { onceFixed }) },
    });
  }
  const signature = head.signature;

  const recovered = recoverDigests(signature, keyRing);
  if (recovered.length === 0) {
    const ids = keyRing.keys.map((k) => k.id);
    return failure(
      'unknown-key',
      `the signature decodes under ${ids.length === 1 ? 'the one configured key' : `none of the ${ids.length} configured keys`} (${ids.map(shortId).join(', ')}): the service signed with a key you do not have (a rotation?), or this environment has the wrong key (a test key in production, or the other way round)`,
      { detail: { keyIdsTried: ids } },
    );
  }
  const keyId = recovered[0]!.key.id;

  /** The profile and key under which `bytes` verify, or undefined. */
  const verifies = (bytes: Uint8Array): { profile: CanonicalProfile; keyId: string } | undefined => {
    try {
      const result = verifyBody(bytes, signature, keyRing, profiles, run, 'string');
      return { profile: result.profile, keyId: result.keyId };
    } catch (err) {
      if (err instanceof JobhookError) return undefined;
      throw err;
    }
  };

  try {
    parseBodyUnchecked(body, run);
  } catch (err) {
    if (!(err instanceof JobhookError)) throw err;
    // A body re-encoded in a single-byte charset is not UTF-8: the change explains it better than "malformed".
    const transcoded = findTranscoding(body, verifies);
    if (transcoded !== undefined) return transcoded;
    return malformedBody(body, err, keyId);
  }

  const ok = verifies(body);
  if (ok !== undefined) {
    return {
      verified: true,
      cause: 'verified',
      message: `verified: signed by key ${shortId(ok.keyId)} over the ${ok.profile} canonical form`,
      fix: CAUSE_FIX.verified,
      profile: ok.profile,
      keyId: ok.keyId,
    };
  }
  const transcoded = findTranscoding(body, verifies) ?? findTextChanges(body, verifies);
  if (transcoded !== undefined) return transcoded;

  const signs = reserializationSigns(body);
  if (signs !== undefined) {
    return failure(
      'body-reserialized',
      `signed by key ${shortId(keyId)}, but this body is what JSON.parse + ${signs.layout} make (JavaScript's number forms) and it holds numbers JavaScript writes differently from Python (${signs.numbers.map(asSigned).join(', ')}${signs.bigIntegers > 0 ? `; ${signs.bigIntegers} beyond 2^53, which JavaScript holds as doubles` : ''}): a JSON body parser ran before verification and the payload was re-serialized`,
      { keyId, detail: { numbers: signs.numbers, bigIntegers: signs.bigIntegers, layout: signs.layout } },
    );
  }
  return failure(
    'body-modified',
    `signed by key ${shortId(keyId)}, but not over this body, and no known change (charset, Unicode normalization, re-serialization) explains the difference: the content was changed after signing`,
    { keyId },
  );
}

/**
 * The first change, or pair of changes, to the body's parsed strings whose undo verifies: what
 * {@link findTranscoding} misses when the JSON was also re-serialized on the way (escapes rewritten,
 * so the changed characters are not in the raw bytes) or when two changes came one after the other.
 */
function findTextChanges(
  body: Uint8Array,
  verifies: (bytes: Uint8Array) => { profile: CanonicalProfile; keyId: string } | undefined,
): Diagnosis | undefined {
  for (const candidate of undoTextChanges(body) ?? []) {
    const ok = verifies(Buffer.from(valueToJson(candidate.value), 'utf8'));
    if (ok === undefined) continue;
    const { changes } = candidate;
    const what =
      changes.length === 1
        ? `${changes[0]!.description}, and the JSON was re-serialized too (its escapes or layout rewritten)`
        : `${changes.map((c) => c.description).join(', then ')}`;
    return failure(
      'body-transcoded',
      `signed by key ${shortId(ok.keyId)} over this body before these changes: ${what}; undoing them makes the signature verify`,
      {
        keyId: ok.keyId,
        profile: ok.profile,
        detail: { change: changes.map((c) => c.change).join('+'), changes: changes.map((c) => c.change) },
      },
    );
  }
  return undefined;
}

/** The first undone character change under which the body verifies, as a diagnosis. */
function findTranscoding(
  body: Uint8Array,
  verifies: (bytes: Uint8Array) => { profile: CanonicalProfile; keyId: string } | undefined,
): Diagnosis | undefined {
  for (const candidate of undoCharacterChanges(body)) {
    const ok = verifies(candidate.body);
    if (ok === undefined) continue;
    return failure(
      'body-transcoded',
      `signed by key ${shortId(ok.keyId)} over this body before a character-level change: ${candidate.description}; undoing it makes the signature verify`,
      { keyId: ok.keyId, profile: ok.profile, detail: { change: candidate.change } },
    );
  }
  return undefined;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** What is wrong with a body that does not parse, in the words a support question needs. */
function malformedBody(body: Uint8Array, err: JobhookError, keyId: string): Diagnosis {
  const head = Buffer.from(body.subarray(0, 512)).toString('latin1').trimStart();
  let kind: string;
  let text: string;
  let isUtf8 = true;
  try {
    utf8.decode(body);
  } catch {
    isUtf8 = false;
  }
  const offset = err.detail?.['offset'];
  if (head.trim() === '') {
    kind = 'empty';
    text = 'the body is empty: it was not read (a middleware consumed the stream?) or not sent';
  } else if (head.startsWith('<')) {
    kind = 'html';
    text = "the body is HTML, not JSON: an error or login page of a proxy or gateway, not the service's delivery";
  } else if (!isUtf8) {
    kind = 'not-utf8';
    text = 'the body is not UTF-8: it was decoded or re-encoded in another charset on the way';
  } else if (err.code === 'ERR_BODY_NOT_OBJECT') {
    kind = 'not-object';
    text = 'the body is JSON but not an object: the service sends one JSON object';
  } else if (typeof offset === 'number' && offset >= body.length) {
    kind = 'truncated';
    text = `the body ends in the middle of its JSON (${body.length} bytes): it was cut short (a size limit, a partial read)`;
  } else if (/^[\w.%-]+=/.test(head)) {
    kind = 'form-encoded';
    text = 'the body is form-encoded, not JSON: something re-encoded it';
  } else {
    kind = 'not-json';
    text = 'the body is not JSON';
  }
  return failure('body-malformed', `${text} (${err.code}: ${err.message})`, { keyId, detail: { kind, code: err.code } });
}

function failure(
  cause: Exclude<DiagnosisCause, 'verified'>,
  message: string,
  extra: { keyId?: string; profile?: CanonicalProfile; detail?: Record<string, unknown> } = {},
): Diagnosis {
  return { verified: false, cause, message, fix: CAUSE_FIX[cause], ...extra };
}

/** A number of a re-serialized body as written there, with the form a Python float of its value takes (`1` → `1, a float 1.0?`). */
function asSigned(lexeme: string): string {
  const float = pythonFloatForm(lexeme);
  return float === undefined ? lexeme : `${lexeme} (Python writes the float ${float})`;
}

/** A key id as messages show it: its first 12 hex digits. */
function shortId(id: string): string {
  return id.slice(0, 12);
}
