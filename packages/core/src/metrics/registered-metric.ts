import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { optionError } from '../internal/option-checks.js';

/** Label names of a registered metric; prom-client keeps them on the instance but does not type them. */
function labelNamesOf(metric: object): readonly string[] {
  const names = (metric as { labelNames?: unknown }).labelNames;
  return Array.isArray(names) ? (names as string[]) : [];
}

function sameLabels(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && [...a].sort().join() === [...b].sort().join();
}

type MetricClass = typeof Counter | typeof Histogram | typeof Gauge;

/**
 * The metric `name` of `registry` when it is already there with the same type and labels (a second
 * receiver on the same registry adds to the first one's series); else a new one registered there.
 * prom-client itself throws a bare "already been registered" on a second `new Counter` of a name.
 * @throws JobhookError `ERR_OPTION_INVALID` when the name is taken by a metric of another type or labels.
 */
function registered<C extends MetricClass>(
  kind: C,
  registry: Registry,
  owner: string,
  config: { name: string; help: string; labelNames: readonly string[]; buckets?: number[] },
): InstanceType<C> {
  const existing = registry.getSingleMetric(config.name);
  if (existing === undefined) {
    return new kind({ ...config, labelNames: [...config.labelNames], registers: [registry] }) as InstanceType<C>;
  }
  if (existing instanceof kind && sameLabels(labelNamesOf(existing), config.labelNames)) return existing as InstanceType<C>;
  throw optionError(
    owner,
    `the registry already has a metric named ${config.name} of another type or labels ` +
      `(jobhook's is a ${kind.name} with labels ${config.labelNames.join(', ')}); give another prefix or registry`,
  );
}

/** A counter of `registry`, reused when already registered. @internal */
export function registeredCounter<L extends string>(
  registry: Registry,
  owner: string,
  config: { name: string; help: string; labelNames: readonly L[] },
): Counter<L> {
  return registered(Counter, registry, owner, config) as Counter<L>;
}

/** A histogram of `registry`, reused when already registered (with its own buckets). @internal */
export function registeredHistogram<L extends string>(
  registry: Registry,
  owner: string,
  config: { name: string; help: string; labelNames: readonly L[]; buckets: number[] },
): Histogram<L> {
  return registered(Histogram, registry, owner, config) as Histogram<L>;
}

/** A gauge of `registry`, reused when already registered. @internal */
export function registeredGauge<L extends string>(
  registry: Registry,
  owner: string,
  config: { name: string; help: string; labelNames: readonly L[] },
): Gauge<L> {
  return registered(Gauge, registry, owner, config) as Gauge<L>;
}
