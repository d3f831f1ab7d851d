import { randomUUID, type KeyObject } from 'node:crypto';
import { Agent as HttpAgent, request as httpRequest } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { LosslessJsonValue } from '@jobhook/core';
import { loadPrivateKey, signPayload, type BodyStyle, type SignedPayload } from '@jobhook/core/sign';
import { parseBody, toLosslessValue } from '@jobhook/core/json';
import { createRecipientTag, RECIPIENT_TAG_KEY } from '@jobhook/core/recipient';
import { buildTestEvent } from '@jobhook/core/testing';
import { defineCommand, UsageError } from '../command.js';
import { jsonLine, readFileArg, write, type CliIo } from '../io.js';
import { BODY_STYLES, choiceFlag, integerFlag, urlFlag } from './flag-values.js';
import { BREAK_FLAG_ROWS, BREAK_OPTIONS, breakSigned, readBreakFlags } from './send-break.js';
import { createSendProgress, PROGRESS_FLAG_ROWS, PROGRESS_OPTIONS, progressMode } from './send-progress.js';

/** One answer (or its absence) to one delivery, as printed. */
interface DeliveryLine {
  job_id: string | null;
  /** 0 for the first delivery of the event, 1..K for its duplicates. */
  copy: number;
  /** HTTP status; null when no answer came (network error, timeout). */
  status: number | null;
  latency_ms: number;
  /** `error.code` of the answer's body (core's receiver errors), ERR_NETWORK / ERR_TIMEOUT without answer. */
  code: string | null;
  /** `duplicate` of the answer's body, when it says. */
  duplicate: boolean | null;
}

/** `jobhook send`: load-test or smoke-test a webhook receiver with signed events, duplicates included. */
export const sendCommand = defineCommand({
  name: 'send',
  summary: 'POST signed async_job_completed webhooks (and duplicates) to a receiver; report every answer.',
  synopsis: [
    'send --url URL --private-key FILE [--status success|fail | --payload FILE] [--count N] [--duplicates K]\n' +
      '                 [--concurrency C] [--body-style STYLE] [--timeout-ms MS] [--recipient-secret SECRET [--recipient-url URL]]',
  ],
  flags: [
    ['--url URL', 'the receiver (http:// or https://)'],
    ['--private-key FILE', "RSA private key, PEM (PKCS#8 or PKCS#1), matching the receiver's public key"],
    ['--status S', 'success (default) or fail: the kind of test event built'],
    ['--payload FILE', 'a JSON event sent instead of built ones (not validated; numbers kept exactly)'],
    ['--count N', 'distinct events, each with its own job_id (default 1)'],
    ['--duplicates K', 'extra deliveries of each event: same body, same signature (default 0)'],
    ['--concurrency C', 'events in flight at once (default 10)'],
    ['--body-style STYLE', 'body layout: python (default, as the service), canonical or compact'],
    ['--timeout-ms MS', "time allowed for each answer (default 30000, the service's)"],
    ['--recipient-secret SECRET', "tag each event's user_parameters with SECRET, the receiver's recipientSecret (shows in ps)"],
    ['--recipient-url URL', 'the webhook URL the tag names (default --url): the receiver checks it against its recipientUrl'],
    ...BREAK_FLAG_ROWS,
    ...PROGRESS_FLAG_ROWS,
  ],
  notes: [
    'Prints one JSON line per delivery, as answers come:\n' +
      '  {"job_id","copy","status","latency_ms","code","duplicate"}\n' +
      'then {"summary":{"url","events","deliveries","ok","by_status","p50_ms","p95_ms","max_ms","elapsed_ms"}}.\n' +
      "code is the error code of the answer's body, or ERR_NETWORK / ERR_TIMEOUT (status null) without answer.",
    'The copies of one event go one after the other (a redelivery follows the previous answer), events in\n' +
      "parallel. With --payload and --count > 1, the first event keeps the file's job_id and the others get a\n" +
      'fresh one each. Nothing is retried.',
    'With --break every delivery is broken that way (a receiver should refuse each: 4xx, so exit 1).',
    'Exit 0 when every answer is 2xx, 1 otherwise; 2 for a command-line mistake or an unusable key or payload.',
  ],
  options: {
    url: { type: 'string' },
    'private-key': { type: 'string' },
    status: { type: 'string' },
    payload: { type: 'string' },
    count: { type: 'string' },
    duplicates: { type: 'string' },
    concurrency: { type: 'string' },
    'body-style': { type: 'string' },
    'timeout-ms': { type: 'string' },
    'recipient-secret': { type: 'string' },
    'recipient-url': { type: 'string' },
    ...BREAK_OPTIONS,
    ...PROGRESS_OPTIONS,
  },
  maxPositionals: 0,
  async execute(values, _positionals, io: CliIo): Promise<number> {
    const cmd = sendCommand;
    if (values.url === undefined) throw new UsageError('--url URL is required', cmd);
    const url = urlFlag(cmd, '--url', values.url);
    const keyFile = values['private-key'];
    if (keyFile === undefined) throw new UsageError('--private-key FILE is required', cmd);
    if (values.payload !== undefined && values.status !== undefined) {
      throw new UsageError('--payload and --status cannot be combined', cmd);
    }
    const status = choiceFlag(cmd, '--status', values.status, ['success', 'fail'] as const, 'success');
    const count = integerFlag(cmd, '--count', values.count, { min: 1, max: 10_000_000, fallback: 1 });
    const duplicates = integerFlag(cmd, '--duplicates', values.duplicates, { min: 0, max: 10_000, fallback: 0 });
    const concurrency = integerFlag(cmd, '--concurrency', values.concurrency, { min: 1, max: 10_000, fallback: 10 });
    const bodyStyle = choiceFlag(cmd, '--body-style', values['body-style'], BODY_STYLES, 'python');
    const timeoutMs = integerFlag(cmd, '--timeout-ms', values['timeout-ms'], { min: 1, max: 3_600_000, fallback: 30_000 });
    const breakPlan = readBreakFlags(cmd, values.break, values['break-variant']);

    const tag = recipientTagger(values['recipient-secret'], values['recipient-url'], url);

    const key = loadPrivateKey(await readFileArg(keyFile, '--private-key'));
    const template = values.payload === undefined ? undefined : await readPayload(values.payload);
    const intactAt = (index: number): Signed =>
      template === undefined
        ? signed(tag === undefined ? buildTestEvent({ status }) : tag(buildTestEvent({ status })), key, bodyStyle)
        : signedFromTemplate(template, index, key, bodyStyle, tag);
    const eventAt = breakPlan === undefined ? intactAt : (index: number): Signed => breakSigned(intactAt(index), breakPlan, key, bodyStyle);
    if (breakPlan !== undefined) await write(io.stderr, `jobhook send: every delivery broken: ${breakPlan.cause} (${breakPlan.name})\n`);

    const latencies: number[] = [];
    const byStatus: Record<string, number> = {};
    let ok = 0;
    let networkErrorShown = false;
    const hintsShown = new Set<number | null>();
    let next = 0;
    const to = target(url, Math.min(concurrency, count));
    const progress = createSendProgress({
      stderr: io.stderr,
      mode: progressMode(values.progress, values['no-progress'], io.stderr),
      total: count * (1 + duplicates),
    });
    const started = performance.now();

    async function deliver(event: Signed, copy: number): Promise<void> {
      progress.started();
      const line = await post(to, event, copy, timeoutMs);
      progress.finished(line.latency_ms, line.status !== null && line.status >= 200 && line.status <= 299);
      latencies.push(line.latency_ms);
      const bucket = line.status === null ? (line.code ?? 'none') : String(line.status);
      byStatus[bucket] = (byStatus[bucket] ?? 0) + 1;
      if (line.status !== null && line.status >= 200 && line.status <= 299) ok++;
      if (line.status === null && !networkErrorShown && line.error !== undefined) {
        networkErrorShown = true;
        await write(io.stderr, `jobhook send: ${line.code}: ${line.error}\n`);
      }
      const hint = line.status === null || line.code !== null ? undefined : answerHint(line.status, url);
      if (hint !== undefined && !hintsShown.has(line.status)) {
        hintsShown.add(line.status);
        await write(io.stderr, `jobhook send: ${hint}\n`);
      }
      const { error: _error, ...printed } = line;
      await write(io.stdout, jsonLine(printed));
    }

    async function worker(): Promise<void> {
      while (next < count) {
        const event = eventAt(next++);
        for (let copy = 0; copy <= duplicates; copy++) await deliver(event, copy);
      }
    }
    try {
      await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker));
    } finally {
      to.agent.destroy();
    }
    await progress.end();

    const deliveries = count * (1 + duplicates);
    const sorted = latencies.sort((a, b) => a - b);
    const summary = {
      url: url.href,
      events: count,
      deliveries,
      ok,
      by_status: byStatus,
      p50_ms: percentile(sorted, 50),
      p95_ms: percentile(sorted, 95),
      max_ms: sorted.at(-1) ?? 0,
      elapsed_ms: round(performance.now() - started),
    };
    await write(io.stdout, `${JSON.stringify({ summary })}\n`);
    return ok === deliveries ? 0 : 1;
  },
});

/** A signed event ready to POST, with its job_id for the report. */
interface Signed {
  jobId: string | null;
  payload: SignedPayload;
}

function signed(event: { job_id?: unknown }, key: KeyObject, bodyStyle: BodyStyle): Signed {
  return {
    jobId: typeof event.job_id === 'string' ? event.job_id : null,
    payload: signPayload(event, key, { bodyStyle }),
  };
}

/** Adds a fresh recipient tag to an event's `user_parameters` (other members kept; a tag already there replaced). */
type Tagger = <E extends object>(event: E) => E;

/** The tagger of `--recipient-secret` / `--recipient-url`, or undefined without a secret. */
function recipientTagger(secret: string | undefined, recipientUrl: string | undefined, url: URL): Tagger | undefined {
  const cmd = sendCommand;
  if (secret === undefined) {
    if (recipientUrl !== undefined) throw new UsageError('--recipient-url needs --recipient-secret', cmd);
    return undefined;
  }
  const webhookReceiver = recipientUrl === undefined ? url.href : urlFlag(cmd, '--recipient-url', recipientUrl).href;
  try {
    createRecipientTag({ secret, webhookReceiver });
  } catch {
    throw new UsageError("--recipient-secret must be at least 16 bytes (the receiver's recipientSecret)", cmd);
  }
  return (event) => {
    const params = (event as { user_parameters?: unknown }).user_parameters;
    const own = typeof params === 'object' && params !== null && !Array.isArray(params) ? params : {};
    const value = createRecipientTag({ secret, webhookReceiver }).value;
    return { ...event, user_parameters: { ...own, [RECIPIENT_TAG_KEY]: value } };
  };
}

/** The file's event: the first one as is (tagged when asked, so signed anew), the others with a fresh job_id. */
function signedFromTemplate(
  template: { bytes: Buffer; value: Record<string, LosslessJsonValue> },
  index: number,
  key: KeyObject,
  bodyStyle: BodyStyle,
  tag: Tagger | undefined,
): Signed {
  if (index === 0) {
    const jobId = template.value['job_id'];
    if (tag !== undefined) return signed(tag({ ...template.value }), key, bodyStyle);
    return { jobId: typeof jobId === 'string' ? jobId : null, payload: signPayload(template.bytes, key, { bodyStyle }) };
  }
  const event = { ...template.value, job_id: randomUUID() };
  return signed(tag?.(event) ?? event, key, bodyStyle);
}

/** Reads --payload: one JSON object, numbers kept exactly (floats as written, big integers). */
async function readPayload(file: string): Promise<{ bytes: Buffer; value: Record<string, LosslessJsonValue> }> {
  const bytes = await readFileArg(file, '--payload');
  const value = toLosslessValue(parseBody(bytes, { maxBodyBytes: 64 * 1024 * 1024 }));
  return { bytes, value: value as Record<string, LosslessJsonValue> };
}

/** One POST; never throws: a missing answer is a line too. */
async function post(target: Target, event: Signed, copy: number, timeoutMs: number): Promise<DeliveryLine & { error?: string }> {
  const started = performance.now();
  const base = { job_id: event.jobId, copy };
  try {
    const { status, text } = await request(target, event.payload, timeoutMs);
    const { code, duplicate } = answerFields(text);
    return { ...base, status, latency_ms: round(performance.now() - started), code, duplicate };
  } catch (err) {
    const timedOut = (err as { code?: unknown }).code === 'ERR_TIMEOUT';
    return {
      ...base,
      status: null,
      latency_ms: round(performance.now() - started),
      code: timedOut ? 'ERR_TIMEOUT' : 'ERR_NETWORK',
      duplicate: null,
      error: (err as Error).message,
    };
  }
}

/** Where to POST, with one keep-alive agent for the run (node:http rather than fetch: no blocked ports). */
interface Target {
  url: URL;
  agent: HttpAgent;
  request: typeof httpRequest;
}

function target(url: URL, concurrency: number): Target {
  const secure = url.protocol === 'https:';
  const options = { keepAlive: true, maxSockets: concurrency };
  return {
    url,
    agent: secure ? new HttpsAgent(options) : new HttpAgent(options),
    request: secure ? httpsRequest : httpRequest,
  };
}

/** How much of each answer `send` keeps (to read its error code and duplicate flag). */
const MAX_ANSWER_BYTES = 64 * 1024;

/** POSTs the signed body; resolves with the status and the answer text (its first 64 KiB) once the body is read. */
function request(target: Target, payload: SignedPayload, timeoutMs: number): Promise<{ status: number; text: string }> {
  return new Promise((resolvePromise, reject) => {
    let settled = false;
    const settle = (err: Error | undefined, answer?: { status: number; text: string }): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (err !== undefined) reject(err);
      else resolvePromise(answer!);
    };
    const req = target.request(target.url, {
      method: 'POST',
      agent: target.agent,
      headers: { ...payload.headers, 'User-Agent': 'jobhook-send', 'Content-Length': String(payload.body.length) },
    });
    const timer = setTimeout(() => {
      const err = Object.assign(new Error(`no answer within ${timeoutMs} ms`), { code: 'ERR_TIMEOUT' });
      settle(err);
      req.destroy(err);
    }, timeoutMs);
    req.on('error', (err) => settle(err));
    req.on('response', (res) => {
      // Only the start of an answer is read for its code: a receiver answering gigabytes, or
      // endlessly, must not grow this process nor hold it. Past the cap the answer is taken as it is
      // and the connection dropped.
      const chunks: Buffer[] = [];
      let kept = 0;
      res.on('data', (c: Buffer) => {
        chunks.push(c.subarray(0, MAX_ANSWER_BYTES - kept));
        kept += Math.min(c.length, MAX_ANSWER_BYTES - kept);
        if (kept < MAX_ANSWER_BYTES) return;
        settle(undefined, { status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') });
        res.destroy();
      });
      res.on('error', (err) => settle(err));
      res.on('end', () => settle(undefined, { status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
      res.on('close', () => settle(new Error('the connection closed before the answer ended')));
    });
    req.end(payload.body);
  });
}

/** The error code and duplicate flag of a receiver's JSON answer (core's shapes), when present. */
function answerFields(text: string): { code: string | null; duplicate: boolean | null } {
  try {
    const body = JSON.parse(text) as { error?: { code?: unknown }; code?: unknown; duplicate?: unknown } | null;
    const code = body?.error?.code ?? body?.code;
    return {
      code: typeof code === 'string' ? code : null,
      duplicate: typeof body?.duplicate === 'boolean' ? body.duplicate : null,
    };
  } catch {
    return { code: null, duplicate: null };
  }
}

/** Nearest-rank percentile of sorted values. */
function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

function round(ms: number): number {
  return Math.round(ms * 10) / 10;
}

/**
 * What an answer without a jobhook error code usually means: a jobhook receiver always names its
 * refusals, so a bare 404 or 405 came from something else at that URL (a router, a proxy).
 */
export function answerHint(status: number, url: URL): string | undefined {
  if (status === 404) {
    return (
      `404 from ${url.href} with no jobhook error code: nothing handles webhooks at the path ${url.pathname}. ` +
      'Check the path the receiver is mounted on (the examples use /webhooks/jobs), and that a proxy in front forwards it.'
    );
  }
  if (status === 405) {
    return `405 from ${url.href} with no jobhook error code: a route is there but not for POST; the receiver is probably mounted at another path or method.`;
  }
  return undefined;
}
