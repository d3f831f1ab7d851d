/**
 * The part of OpenTelemetry's tracing API jobhook calls, written out so that jobhook's types and
 * code never import `@opentelemetry/api` (an optional peer dependency): an OpenTelemetry `Tracer`
 * (`trace.getTracer(name)`) is one, and so is anything else with these methods.
 */

/** A span attribute value jobhook sets. */
export type SpanAttributeValueLike = string | number | boolean;

/** The span options jobhook gives (OpenTelemetry's `SpanOptions`, in part). */
export interface SpanOptionsLike {
  /** OpenTelemetry's `SpanKind`: jobhook's spans are `INTERNAL` (0). */
  kind?: number;
  attributes?: Record<string, SpanAttributeValueLike>;
  /** Epoch milliseconds. */
  startTime?: number;
}

/** The span methods jobhook calls (OpenTelemetry's `Span`, in part). */
export interface SpanLike {
  setAttribute(key: string, value: SpanAttributeValueLike): unknown;
  setStatus(status: { code: number; message?: string }): unknown;
  recordException(exception: Error | string): void;
  end(): void;
}

/**
 * What the receiver's `tracer` option takes: an OpenTelemetry `Tracer`, such as
 * `trace.getTracer('jobhook')` from `@opentelemetry/api`. Only `startActiveSpan` is called: it runs
 * the delivery inside the new span's context, so spans your handler starts are its children.
 *
 * @example
 * ```ts
 * import { trace } from '@opentelemetry/api';
 * createReceiver({ publicKeys, onEvent, tracer: trace.getTracer('jobhook') });
 * ```
 */
export interface TracerLike {
  startActiveSpan<F extends (span: SpanLike) => unknown>(name: string, options: SpanOptionsLike, fn: F): ReturnType<F>;
}
