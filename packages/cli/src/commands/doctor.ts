import { createKeyRing, type WebhookHeaderNames } from '@jobhook/core';
import { diagnoseDelivery, type DiagnoseOptions, type Diagnosis } from '@jobhook/core/diagnosis';
import { defineCommand, toProfile, UsageError } from '../command.js';
import { jsonLine, readFileArg, readInput, write, type CliIo } from '../io.js';
import { doctorBatch } from './doctor-batch.js';
import { readDoctorRequest } from './doctor-request.js';

/** `jobhook doctor`: why a delivery's signature fails, from a request file (or a JSONL batch of them). */
export const doctorCommand = defineCommand({
  name: 'doctor',
  summary: 'Say why a webhook signature fails: missing or renamed header, wrong key, re-serialized or transcoded body, ...',
  synopsis: [
    'doctor --public-key FILE [--public-key FILE ...] --request FILE|- [--json] [--profile NAME ...]\n' +
      '                   [--signature-header NAME] [--hash-algorithm-header NAME]',
    'doctor --public-key FILE [--public-key FILE ...] --batch FILE.jsonl|- [options as above]',
  ],
  flags: [
    ['--public-key FILE', 'the public key(s) your receiver verifies with, PEM; repeat for key rotation'],
    ['--request FILE', 'a request file {"method","headers":{...},"body_b64"} (- is stdin), as captureFailures and record write them'],
    ['--batch FILE', 'JSONL of request objects, each with an "id" (- is stdin); one JSON line per input'],
    ['--json', 'single request: print the diagnosis as one JSON line'],
    ['--profile NAME', "canonical profile to try, as the receiver's profiles; repeatable; default all"],
    ['--signature-header NAME', 'the signature header your receiver reads (default X-Service-Signature)'],
    ['--hash-algorithm-header NAME', 'the hash-algorithm header (default X-Service-Hash-Algorithm)'],
  ],
  notes: [
    'Causes: verified, hash-algorithm, signature-missing, signature-elsewhere, signature-malformed,\n' +
      'unknown-key, body-malformed, body-transcoded, body-reserialized, body-modified (see the core README,\n' +
      '"Why did my webhook fail?"). Without --json: the cause, what happened, and what to change.',
    'Batch: {"id","verified","cause","message","fix",...} per input line, in order; a line that is not a\n' +
      'request object with an id gets {"id","verified":false,"cause":null,"code":"ERR_BATCH_LINE_INVALID","message"}.',
    'Exit 0 when the request verifies, 1 when it does not; a batch exits 0 once every line is answered;\n' +
      '2 for a command-line mistake, an unreadable key or file, or a request file that is not one.',
  ],
  options: {
    'public-key': { type: 'string', multiple: true },
    request: { type: 'string' },
    batch: { type: 'string' },
    json: { type: 'boolean' },
    profile: { type: 'string', multiple: true },
    'signature-header': { type: 'string' },
    'hash-algorithm-header': { type: 'string' },
  },
  maxPositionals: 0,
  async execute(values, _positionals, io: CliIo): Promise<number> {
    const cmd = doctorCommand;
    const keyFiles = values['public-key'] ?? [];
    if (keyFiles.length === 0) throw new UsageError('--public-key FILE is required', cmd);
    if ((values.request === undefined) === (values.batch === undefined)) {
      throw new UsageError('give one of --request FILE or --batch FILE', cmd);
    }
    if (values.batch !== undefined && values.json === true) throw new UsageError('--batch always prints JSON lines; drop --json', cmd);
    const profiles = [...new Set((values.profile ?? []).map((p) => toProfile(cmd, p)))];
    const headerNames: Partial<WebhookHeaderNames> = {
      ...(values['signature-header'] === undefined ? {} : { signature: values['signature-header'] }),
      ...(values['hash-algorithm-header'] === undefined ? {} : { hashAlgorithm: values['hash-algorithm-header'] }),
    };
    // Keys parsed once, before the first request; a bad key stops the run (stderr, exit 2).
    const keys = await Promise.all(keyFiles.map((file) => readFileArg(file, '--public-key')));
    const options: DiagnoseOptions = { publicKeys: createKeyRing(keys), headerNames, ...(profiles.length > 0 ? { profiles } : {}) };
    // Bad header names are a command-line mistake: check them before reading any request.
    diagnoseDelivery({ headers: {}, body: '' }, options);

    if (values.batch !== undefined) return doctorBatch(values.batch, options, io);
    const text = (await readInput(values.request, io, '--request')).toString('utf8');
    let record: unknown;
    try {
      record = JSON.parse(text.replace(/^\uFEFF/, ''));
    } catch {
      record = undefined;
    }
    const request = record === undefined ? 'the request file is not JSON' : readDoctorRequest(record);
    if (typeof request === 'string') {
      await write(io.stderr, `jobhook doctor: ERR_REQUEST_INVALID: ${request}\n`);
      return 2;
    }
    const diagnosis = diagnoseDelivery(request, options);
    const note = request.bodyNote;
    await write(
      io.stdout,
      values.json === true ? jsonLine({ ...diagnosis, ...(note === undefined ? {} : { note }) }) : humanReport(diagnosis, note),
    );
    return diagnosis.verified ? 0 : 1;
  },
});

/** The diagnosis for a reader: the cause, what happened, what to change, and the specifics. */
function humanReport(d: Diagnosis, note: string | undefined): string {
  const lines = [
    `cause: ${d.cause}${d.verified ? '' : ' (the signature does not verify)'}`,
    '',
    `What happened: ${d.message}`,
    '',
    `What to change: ${d.fix}`,
  ];
  const specifics = [
    ...(d.profile === undefined ? [] : [`profile: ${d.profile}`]),
    ...(d.keyId === undefined ? [] : [`key: ${d.keyId}`]),
    ...Object.entries(d.detail ?? {}).map(([k, v]) => `${k}: ${typeof v === 'string' ? v : JSON.stringify(v)}`),
  ];
  if (specifics.length > 0) lines.push('', ...specifics.map((s) => `  ${s}`));
  if (note !== undefined) lines.push('', `Note: ${note}`);
  return `${lines.join('\n')}\n`;
}
