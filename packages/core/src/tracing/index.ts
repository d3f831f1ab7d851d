/**
 * `@jobhook/core/tracing`: the names of the OpenTelemetry spans a receiver given a `tracer` makes,
 * and the tracer type it takes. jobhook never imports `@opentelemetry/api` (an optional peer
 * dependency): give the receiver your `Tracer`, and without one there are no spans at all.
 *
 * @example
 * ```ts
 * import { trace } from '@opentelemetry/api';
 * import { createReceiver } from '@jobhook/core';
 * const receiver = createReceiver({ publicKeys, onEvent, tracer: trace.getTracer('jobhook') });
 * ```
 * @packageDocumentation
 */
export { SPAN_ATTRIBUTES, SPAN_NAMES } from './span-names.js';
export type { SpanAttributeValueLike, SpanLike, SpanOptionsLike, TracerLike } from './tracer-like.js';
