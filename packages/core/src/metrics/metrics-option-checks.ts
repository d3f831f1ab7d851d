import { register as globalRegistry, type Registry } from 'prom-client';
import { checkMethods, checkObject, describeValue, optionError } from '../internal/option-checks.js';

// Every option of createReceiverMetrics and createReconcilerMetrics (registry, prefix, buckets) is
// checked here, so both refuse a mistake in the same words. The option types and their defaults
// live here too, with their checks; the metric files only read the resolved values.

/** Default {@link ReceiverMetricsOptions.prefix}. */
export const DEFAULT_METRICS_PREFIX = 'jobhook_';

/**
 * Default {@link ReceiverMetricsOptions.buckets}, in seconds: a rejection takes microseconds, a
 * handler up to `handlerTimeoutMs` (25 s by default), so from 1 ms to 30 s.
 */
export const DEFAULT_DURATION_BUCKETS: readonly number[] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 25, 30];

/** Options of `createReceiverMetrics`. */
export interface ReceiverMetricsOptions {
  /** Where the metrics are registered. Default prom-client's global `register`. */
  registry?: Registry;
  /** Start of every metric name. Default `'jobhook_'`. */
  prefix?: string;
  /** Upper bounds (seconds) of the duration histogram. Default {@link DEFAULT_DURATION_BUCKETS}. */
  buckets?: readonly number[];
}

/** Options of `createReconcilerMetrics`. */
export interface ReconcilerMetricsOptions {
  /** Where the metrics are registered. Default prom-client's global `register`. */
  registry?: Registry;
  /** Start of every metric name. Default `'jobhook_'`. */
  prefix?: string;
}

/** {@link ReconcilerMetricsOptions} checked and filled in. @internal */
export interface ResolvedMetricsOptions {
  readonly registry: Registry;
  readonly prefix: string;
}

/** {@link ReceiverMetricsOptions} checked and filled in. @internal */
export interface ResolvedReceiverMetricsOptions extends ResolvedMetricsOptions {
  /** A copy: prom-client keeps the array it is given. */
  readonly buckets: number[];
}

/** Prometheus metric name rule (the prefix is checked with it too). */
const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;

/**
 * Returns `prefix` when it can start a Prometheus metric name ('' allowed), else throws
 * `ERR_OPTION_INVALID`: a name prom-client refuses would fail later, with its own words.
 */
function checkPrefix(owner: string, prefix: unknown): string {
  if (typeof prefix !== 'string' || (prefix !== '' && !METRIC_NAME.test(prefix))) {
    throw optionError(owner, `prefix must match ${String(METRIC_NAME)} (or be ''), got ${describeValue(prefix)}`);
  }
  return prefix;
}

/** The options every metrics factory shares: `registry` (what prom-client needs of one) and `prefix`. */
function resolveMetricsOptions(owner: string, options: unknown): ResolvedMetricsOptions {
  checkObject(owner, 'options', options);
  const { registry = globalRegistry, prefix = DEFAULT_METRICS_PREFIX } = options as { registry?: unknown; prefix?: unknown };
  return {
    registry: checkMethods<Registry>(owner, 'registry', registry, ['getSingleMetric'], 'a prom-client Registry'),
    prefix: checkPrefix(owner, prefix),
  };
}

/** A histogram's upper bounds: a non-empty list, each a positive finite number above the one before. */
function checkBuckets(owner: string, buckets: unknown): number[] {
  const what = 'buckets must be increasing positive finite numbers (seconds)';
  if (!Array.isArray(buckets)) throw optionError(owner, `${what}, got ${describeValue(buckets)}`);
  if (buckets.length === 0) throw optionError(owner, `${what}, got an empty array`);
  const bad = buckets.findIndex(
    (b: unknown, i) => typeof b !== 'number' || !Number.isFinite(b) || b <= 0 || (i > 0 && b <= (buckets[i - 1] as number)),
  );
  if (bad >= 0) throw optionError(owner, `${what}, got ${describeValue(buckets[bad])} at buckets[${bad}]`);
  return [...(buckets as number[])];
}

/**
 * Checks `createReceiverMetrics`'s options and fills in the defaults.
 * @throws JobhookError `ERR_OPTION_INVALID` naming the option.
 * @internal
 */
export function resolveReceiverMetricsOptions(options: unknown): ResolvedReceiverMetricsOptions {
  const owner = 'createReceiverMetrics';
  const resolved = resolveMetricsOptions(owner, options);
  const { buckets = DEFAULT_DURATION_BUCKETS } = options as ReceiverMetricsOptions;
  return { ...resolved, buckets: checkBuckets(owner, buckets) };
}

/**
 * Checks `createReconcilerMetrics`'s options and fills in the defaults.
 * @throws JobhookError `ERR_OPTION_INVALID` naming the option.
 * @internal
 */
export function resolveReconcilerMetricsOptions(options: unknown): ResolvedMetricsOptions {
  return resolveMetricsOptions('createReconcilerMetrics', options);
}
