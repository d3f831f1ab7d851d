import { createVerifier, type CanonicalProfile, type Verifier } from '@jobhook/core';
import { defineCommand, toProfile, UsageError } from '../command.js';
import { describeError } from '../errors.js';
import { jsonLine, readFileArg, readInput, write, type CliIo } from '../io.js';
import { jobIdOf, verifyBatch } from './verify-batch.js';

/** `jobhook verify`: one body, or a JSONL batch through one verifier. */
export const verifyCommand = defineCommand({
  name: 'verify',
  summary: 'Verify webhook signatures: one body (stdin or --body), or a JSONL batch.',
  synopsis: [
    'verify --public-key FILE [--public-key FILE ...] [--profile NAME ...] --signature HEX [--body FILE]',
    'verify --public-key FILE [--public-key FILE ...] [--profile NAME ...] --batch FILE.jsonl|-',
  ],
  flags: [
    ['--public-key FILE', 'service public key, PEM (PKCS#1 or SPKI); repeat for key rotation'],
    ['--profile NAME', 'canonical profile to try (python, python-ascii, orjson, javascript); repeatable; default all'],
    ['--signature HEX', 'the signature header value; an empty value is ERR_SIGNATURE_MISSING'],
    ['--body FILE', 'the exact body bytes (default: stdin; - is stdin)'],
    ['--batch FILE', 'JSONL of {"id","body_b64","signature"} (- is stdin); one result line per input'],
  ],
  notes: [
    'Single: prints {"ok":true,"job_id":...,"profile":...,"key":...} or {"ok":false,"code":...,"message":...};\n' +
      'The message of ERR_SIGNATURE_INVALID says how `jobhook doctor` finds the cause.\n' +
      'Exit 0 valid, 1 invalid signature (ERR_SIGNATURE_*), 2 malformed input or any other failure.',
    'Batch: prints {"id","ok","code","profile","job_id"} per input line, in order; a line that is not\n' +
      'JSON or lacks a field gets code ERR_BATCH_LINE_INVALID. Exit 0 once every line is processed.',
  ],
  options: {
    'public-key': { type: 'string', multiple: true },
    profile: { type: 'string', multiple: true },
    signature: { type: 'string' },
    body: { type: 'string' },
    batch: { type: 'string' },
  },
  maxPositionals: 0,
  async execute(values, _positionals, io: CliIo): Promise<number> {
    const keyFiles = values['public-key'] ?? [];
    if (keyFiles.length === 0) throw new UsageError('--public-key FILE is required', verifyCommand);
    const profiles = [...new Set((values.profile ?? []).map((p) => toProfile(verifyCommand, p)))];

    if (values.batch !== undefined) {
      if (values.signature !== undefined || values.body !== undefined) {
        throw new UsageError('--batch cannot be combined with --signature or --body', verifyCommand);
      }
      // Keys are parsed once here, before the first line; a bad key aborts the batch (stderr, exit 2).
      return verifyBatch(await loadVerifier(keyFiles, profiles), values.batch, io);
    }
    if (values.signature === undefined) {
      throw new UsageError('--signature HEX is required (or --batch FILE)', verifyCommand);
    }
    return verifyOne(keyFiles, profiles, values.signature, values.body, io);
  },
});

/** What a failed verification adds: where to find out why. */
const DOCTOR_HINT =
  'to find out why (a body re-serialized by a JSON parser, re-encoded or changed on the way, or another key), run ' +
  '`jobhook doctor --public-key FILE --request FILE` on the request as received ({"headers":{...},"body_b64"})';

/** Reads the key files and builds the one verifier a run uses. */
async function loadVerifier(keyFiles: readonly string[], profiles: readonly CanonicalProfile[]): Promise<Verifier> {
  const keys = await Promise.all(keyFiles.map((file) => readFileArg(file, '--public-key')));
  return createVerifier({ publicKeys: keys, ...(profiles.length > 0 ? { profiles } : {}) });
}

/** Single mode: every failure after the command line is valid becomes the JSON line. */
async function verifyOne(
  keyFiles: readonly string[],
  profiles: readonly CanonicalProfile[],
  signature: string,
  bodyFile: string | undefined,
  io: CliIo,
): Promise<number> {
  let line: string;
  let exitCode: number;
  try {
    const verifier = await loadVerifier(keyFiles, profiles);
    const result = verifier.verify({ body: await readInput(bodyFile, io, '--body'), signature });
    line = jsonLine({ ok: true, job_id: jobIdOf(result.payload), profile: result.profile, key: result.keyId });
    exitCode = 0;
  } catch (err) {
    const { code, message } = describeError(err);
    // The doctor tells which change broke a signature (a re-serialized body, another key, ...).
    line = jsonLine({ ok: false, code, message: code === 'ERR_SIGNATURE_INVALID' ? `${message}; ${DOCTOR_HINT}` : message });
    exitCode = code.startsWith('ERR_SIGNATURE_') ? 1 : 2;
  }
  await write(io.stdout, line);
  return exitCode;
}
