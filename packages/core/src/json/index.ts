/**
 * @jobhook/core/json: JSON read and written exactly as Python's `json` does, for code that handles
 * the service's JSON outside a receiver (the client's results, the sender's payloads): integers of
 * any size, `1.0` kept as written, values spliced in verbatim.
 * @packageDocumentation
 */
export { parseBody } from '../canonical/parse.js';
export type { ParseOptions } from '../canonical/canonical-option-checks.js';
export type { ParsedBody } from '../canonical/tape.js';
export {
  toLosslessValue,
  toValue,
  type BigIntegers,
  type JsonObject,
  type JsonValue,
  type LosslessJsonValue,
  type ToValueOptions,
} from '../canonical/to-value.js';
export { RawJson, rawJson, stringifyJson } from '../canonical/value-json.js';
