// The fault plan of the chaos suite: which webhook requests the proxy breaks, decided per job from a
// seed (reproducible), plus the proxy-side log of what happened to each job's requests.
import type { Fault, FaultPlan, ProxyExchange } from './fault-proxy.js';
import { seededRandom } from './fault-proxy.js';

/** Rates of the faults injected on a job's first request (the rest is forwarded). */
export interface ChaosFaultRates {
  /** Share of jobs whose first request the proxy answers 500. Default 0.10. */
  error500: number;
  /** Share of jobs whose first request the proxy holds past the sender's attempt timeout. Default 0.05. */
  hang: number;
  /** Share of jobs whose first request the proxy answers with a TCP reset. Default 0.05. */
  reset: number;
  /** Of the jobs faulted on their first request, the share faulted on their second too. Default 0.25. */
  second: number;
}

/** Default {@link ChaosFaultRates}: 20 % of jobs faulted once, a quarter of those twice. */
export const DEFAULT_CHAOS_RATES: Readonly<ChaosFaultRates> = Object.freeze({ error500: 0.1, hang: 0.05, reset: 0.05, second: 0.25 });

/** At most this many planned faults per job: with 3 retries (4 attempts) one more failure, e.g. a receiver killed mid-request, still leaves an attempt. */
export const MAX_PLANNED_FAULTS = 2;

/** One request of a job as the proxy saw it. */
export interface Sighting {
  fault: Fault;
  /** 500, the receiver's status, 502; absent for hang and reset. */
  statusCode?: number;
  /** The receiver said it had handled the job already (`"duplicate":true`). */
  duplicate?: boolean;
  /** Forwarding failed (ECONNRESET, …). */
  error?: string;
  target?: string;
}

/** The plan handed to the proxy, and what it saw. */
export interface ChaosPlan {
  /** Give to `startFaultProxy({ plan })`. */
  readonly plan: FaultPlan;
  /** Give to `startFaultProxy({ onExchange })`. */
  readonly onExchange: (exchange: ProxyExchange) => void;
  /** The faults planned for the job with this plan key (the submission's sequence number), first request first. */
  faultsOf(key: number | string): readonly Fault[];
  /** Requests seen per job_id, in order. */
  readonly sightings: ReadonlyMap<string, readonly Sighting[]>;
  /** Webhook requests whose body carried no job_id (should stay 0). */
  readonly unreadable: number;
}

/** What the plan reads from a webhook body. */
interface BodyKeys {
  jobId: string;
  /** `user_parameters.chaos_seq` when the submission set it: the plan key, stable across runs. */
  seq: number | undefined;
}

function readBody(body: Buffer): BodyKeys | undefined {
  try {
    const payload = JSON.parse(body.toString('utf8')) as { job_id?: unknown; user_parameters?: { chaos_seq?: unknown } };
    if (typeof payload.job_id !== 'string') return undefined;
    const seq = payload.user_parameters?.chaos_seq;
    return { jobId: payload.job_id, seq: typeof seq === 'number' ? seq : undefined };
  } catch {
    return undefined;
  }
}

/** FNV-1a of the text: a 32-bit seed per job. */
function hash32(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

/**
 * A per-job fault plan: the job's faults depend only on `seed` and the job's key (the submission's
 * `user_webhook_parameters.chaos_seq`, else its job_id), so a run is reproducible; the n-th request
 * the proxy sees of a job gets the n-th planned fault, later ones are forwarded. At most
 * {@link MAX_PLANNED_FAULTS} faults per job, so every job stays within the sender's retry budget.
 *
 * @example
 * ```ts
 * const chaos = createChaosPlan({ seed: 42 });
 * const proxy = await startFaultProxy({ targets, plan: chaos.plan, onExchange: chaos.onExchange });
 * ```
 */
export function createChaosPlan(options: { seed: number; rates?: Partial<ChaosFaultRates> }): ChaosPlan {
  const rates = { ...DEFAULT_CHAOS_RATES, ...options.rates };
  const firstRate = rates.error500 + rates.hang + rates.reset;
  if (!(firstRate >= 0 && firstRate <= 1) || !(rates.second >= 0 && rates.second <= 1)) {
    throw new Error(`createChaosPlan: rates must be shares in [0, 1] summing to at most 1, got ${JSON.stringify(rates)}`);
  }
  const planned = new Map<string, Fault[]>();
  const seen = new Map<string, number>();
  const sightings = new Map<string, Sighting[]>();
  let unreadable = 0;

  const pick = (r: number): Fault => {
    if (r < rates.error500) return 'error500';
    if (r < rates.error500 + rates.hang) return 'hang';
    if (r < firstRate) return 'reset';
    return 'forward';
  };

  function faultsOf(key: number | string): Fault[] {
    const name = String(key);
    let faults = planned.get(name);
    if (faults === undefined) {
      const random = seededRandom(hash32(`${options.seed}:${name}`));
      const first = pick(random());
      faults = [];
      if (first !== 'forward') {
        faults.push(first);
        // The second fault's kind is drawn among the three in the same proportions.
        if (random() < rates.second) faults.push(pick(random() * firstRate));
      }
      planned.set(name, faults);
    }
    return faults;
  }

  return {
    plan(_n, _req, body) {
      const keys = readBody(body);
      if (keys === undefined) {
        unreadable++;
        return 'forward';
      }
      const count = seen.get(keys.jobId) ?? 0;
      seen.set(keys.jobId, count + 1);
      return faultsOf(keys.seq ?? keys.jobId)[count] ?? 'forward';
    },
    onExchange(exchange) {
      const keys = readBody(exchange.body);
      if (keys === undefined) return;
      const sighting: Sighting = { fault: exchange.fault };
      if (exchange.statusCode !== undefined) sighting.statusCode = exchange.statusCode;
      if (exchange.error !== undefined) sighting.error = exchange.error;
      if (exchange.target !== undefined) sighting.target = exchange.target;
      if (exchange.answer !== undefined && /"duplicate"\s*:\s*true/.test(exchange.answer)) sighting.duplicate = true;
      let list = sightings.get(keys.jobId);
      if (list === undefined) sightings.set(keys.jobId, (list = []));
      list.push(sighting);
    },
    faultsOf,
    sightings,
    get unreadable() {
      return unreadable;
    },
  };
}
