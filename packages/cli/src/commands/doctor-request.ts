import type { RequestHeaders } from '@jobhook/core';

/** Standard or URL-safe base64, padded or not. */
const BASE64 = /^[A-Za-z0-9+/_-]*={0,2}$/;

/**
 * A request file (`captureFailures` and `record` write them): `{"method","headers":{…},"body_b64"}`,
 * other members (`captured_at`, `arrived_at`, the answer) ignored.
 */
export interface DoctorRequest {
  method: string;
  headers: RequestHeaders;
  /** The body; undefined when the file holds none (then the diagnosis says nothing of it). */
  body: Buffer | undefined;
  /** Why the body is not there, when a capture left it out (`body_read: false`, `body_omitted`). */
  bodyNote: string | undefined;
}

/**
 * Reads one request object; a string says what is wrong with it.
 * @param record the parsed JSON of a request file or batch line.
 */
export function readDoctorRequest(record: unknown): DoctorRequest | string {
  if (typeof record !== 'object' || record === null || Array.isArray(record))
    return 'a request must be a JSON object {"method","headers","body_b64"}';
  const { method = 'POST', headers, body_b64: bodyB64, body_read: bodyRead, body_omitted: bodyOmitted } = record as Record<string, unknown>;
  if (typeof method !== 'string') return '"method" must be a string';
  if (typeof headers !== 'object' || headers === null || Array.isArray(headers))
    return '"headers" must be an object of header names to values';
  for (const [name, value] of Object.entries(headers)) {
    const ok = typeof value === 'string' || (Array.isArray(value) && value.every((v) => typeof v === 'string'));
    if (!ok) return `header ${JSON.stringify(name)} must be a string or an array of strings`;
  }
  if (typeof bodyB64 !== 'string' || !BASE64.test(bodyB64) || bodyB64.replace(/=+$/, '').length % 4 === 1) {
    return '"body_b64" must be the body in base64';
  }
  const bodyNote =
    bodyRead === false
      ? 'the capture has no body: the request was refused on its headers before the body was read'
      : typeof bodyOmitted === 'number'
        ? `the capture left out the body (${bodyOmitted} bytes, over maxBodyBytes of captureFailures or record)`
        : undefined;
  const body = bodyNote === undefined ? Buffer.from(bodyB64, 'base64') : undefined;
  return { method, headers: headers as RequestHeaders, body, bodyNote };
}
