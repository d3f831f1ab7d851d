/**
 * How much of a body to read, as an admission gives it (`receiver.precheck(head).admission`): at
 * most `maxBytes`, stopping when `signal` aborts, and held to `declaredBytes` (the `Content-Length`
 * the precheck read) without reading the header again.
 */
export interface BodyLimit {
  readonly maxBytes: number;
  readonly signal?: AbortSignal;
  readonly declaredBytes?: number | undefined;
}
