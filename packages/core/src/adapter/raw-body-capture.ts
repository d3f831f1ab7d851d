import { JobhookError } from '../errors.js';

const RAW_BODY = Symbol.for('jobhook.rawBody');

/**
 * A `verify` hook for body parsers built on body-parser (`express.json({ verify: captureRawBody })`,
 * `bodyParser.json({ verify })`): keeps the exact bytes on the request so the jobhook middleware can
 * verify them after the parser ran.
 */
export function captureRawBody(req: object, _res: unknown, buf: Uint8Array): void {
  (req as { [RAW_BODY]?: Uint8Array })[RAW_BODY] = buf;
}

/** The bytes {@link captureRawBody} kept for this request, if any. */
export function capturedRawBody(req: object): Uint8Array | undefined {
  return (req as { [RAW_BODY]?: Uint8Array })[RAW_BODY];
}

/**
 * The error for a request whose body a JSON parser already consumed without keeping the bytes:
 * verifying a re-serialized object would fail (or, worse, be faked), so the setup must change.
 */
export function bodyAlreadyParsedError(adapter: string, fix: string): JobhookError {
  return new JobhookError(
    'ERR_BODY_ALREADY_PARSED',
    `${adapter}: a JSON body parser consumed the webhook body before jobhook could read its bytes; ${fix}`,
  );
}
