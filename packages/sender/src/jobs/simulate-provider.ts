import { createHash } from 'node:crypto';
import { parseBody, rawJson, stringifyJson, toValue } from '@jobhook/core/json';
import { formatInstant } from '../accounts/date-time.js';
import { jobPrice } from '../accounts/pricing.js';
import type { JobError, JobRecord, JobResult } from './job-record.js';

/** `error_code` of a simulated failure when `input.simulate.error_code` is not given. */
export const DEFAULT_ERROR_CODE = 'provider_error';

const WORDS = [
  'invoice',
  'total',
  'amount',
  'due',
  'date',
  'customer',
  'order',
  'number',
  'shipping',
  'address',
  'payment',
  'received',
  'thank',
  'you',
  'please',
  'contact',
  'support',
  'account',
  'balance',
  'item',
  'quantity',
  'price',
  'tax',
  'subtotal',
  'reference',
  'meeting',
  'agenda',
  'notes',
  'project',
  'status',
  'report',
  'summary',
] as const;

/** An endless stream of bytes from a seed: SHA-256 of the seed, then of the seed and a counter. */
function byteStream(seed: string): () => number {
  let block = createHash('sha256').update(seed).digest();
  let counter = 0;
  let i = 0;
  return () => {
    if (i === block.length) {
      counter += 1;
      block = createHash('sha256').update(seed).update(String(counter)).digest();
      i = 0;
    }
    return block[i++] as number;
  };
}

function words(next: () => number, min: number, max: number): string[] {
  const count = min + (next() % (max - min + 1));
  return Array.from({ length: count }, () => WORDS[next() % WORDS.length] as string);
}

function sentence(next: () => number, min: number, max: number): string {
  const text = words(next, min, max).join(' ');
  return `${text.charAt(0).toUpperCase()}${text.slice(1)}.`;
}

/** True for the features whose output is a transcript. */
function isSpeechToText(job: JobRecord): boolean {
  return job.feature === 'audio' && job.subfeature.startsWith('speech_to_text');
}

function simulatedOutput(job: JobRecord, next: () => number): Record<string, unknown> {
  if (job.feature === 'ocr') {
    const pageCount = 1 + (next() % 3);
    const pages = Array.from({ length: pageCount }, (_, p) => ({ page: p + 1, text: sentence(next, 6, 12) }));
    return { raw_text: pages.map((p) => p.text).join('\n'), pages };
  }
  if (isSpeechToText(job)) {
    // The input as submitted, read for its language only: never canonicalized, so no canonical
    // bound (core's default would refuse a deeply nested input member, and fail the job).
    const input = toValue(
      parseBody(Buffer.from(job.inputJson, 'utf8'), { maxBodyBytes: Number.MAX_SAFE_INTEGER, maxCanonicalBytes: Number.MAX_SAFE_INTEGER }),
    ) as Record<string, unknown>;
    const language = typeof input.language === 'string' ? input.language : 'en';
    const speakers = 1 + (next() % 3);
    const entries: Record<string, unknown>[] = [];
    let timeMs = 0;
    const segmentCount = 2 + (next() % 4);
    for (let s = 0; s < segmentCount; s++) {
      const segment = sentence(next, 3, 8);
      const durationMs = 400 * segment.split(' ').length;
      entries.push({
        segment,
        start_time: timeMs / 1000,
        end_time: (timeMs + durationMs) / 1000,
        speaker: 1 + (s % speakers),
        confidence: (80 + (next() % 20)) / 100,
      });
      timeMs += durationMs;
    }
    return {
      text: entries.map((e) => e.segment).join(' '),
      language,
      diarization: { total_speakers: Math.min(speakers, segmentCount), entries },
    };
  }
  return { result: sentence(next, 5, 15) };
}

/**
 * The final result of a simulated job, deterministic: the output comes from a SHA-256 of the model
 * and the exact input text, so the same submission always gives the same output (the job id does not
 * enter it). Shapes: `ocr/*` → `{ raw_text, pages: [{ page, text }] }`; `audio/speech_to_text*` →
 * `{ text, language, diarization: { total_speakers, entries: [{ segment, start_time, end_time, speaker, confidence }] } }`;
 * anything else → `{ result }`. `input.simulate.output` replaces the output verbatim;
 * `input.simulate.outcome: "fail"` gives `error: { message, error_code }` (`error_code` from
 * `simulate.error_code`, default {@link DEFAULT_ERROR_CODE}). `original_response` is a simulated raw
 * provider answer wrapping the same output or error; `cost` is the feature's price.
 */
export function simulateResult(job: JobRecord, finishedAt: Date): JobResult {
  const seed = `${job.feature}/${job.subfeature}/${job.provider}/${job.model ?? ''}\n${job.inputJson}`;
  const next = byteStream(seed);
  const responseId = `sim_${createHash('sha256').update(job.jobId).digest('hex').slice(0, 24)}`;
  const base = {
    id: responseId,
    object: 'provider.response',
    provider: job.provider,
    model: job.model,
    created: Math.floor(finishedAt.getTime() / 1000),
  };
  const finishedAtText = formatInstant(finishedAt);
  const cost = jobPrice(job.feature);
  if (job.simulate.outcome === 'fail') {
    const code = job.simulate.errorCode ?? DEFAULT_ERROR_CODE;
    const error: JobError = { message: `simulated failure of provider ${job.provider}: ${code}`, error_code: code };
    return {
      status: 'fail',
      finishedAt: finishedAtText,
      outputJson: null,
      error,
      originalResponseJson: stringifyJson({ ...base, status: 'failed', error: { code, message: error.message } }),
      cost,
    };
  }
  const outputJson = job.simulate.outputJson ?? stringifyJson(simulatedOutput(job, next));
  return {
    status: 'success',
    finishedAt: finishedAtText,
    outputJson,
    error: null,
    originalResponseJson: stringifyJson({ ...base, status: 'succeeded', result: rawJson(outputJson) }),
    cost,
  };
}
