import type { DiagnosisCause } from '../causes.js';

/** What to change for each cause: the advice printed under the specific message. @internal */
export const CAUSE_FIX: Readonly<Record<DiagnosisCause, string>> = Object.freeze({
  verified: 'Nothing: this delivery verifies. If your endpoint refused it, compare the bytes and headers it read with these.',
  'signature-missing':
    'Make sure the request reaching your code still carries the signature header: check proxies, load balancers and API gateways that drop unknown headers, and the header name your code reads.',
  'signature-elsewhere':
    'Read the header named above (set headerNames.signature to it), or make the proxy that renamed it forward the original name.',
  'signature-malformed':
    'Pass the header value through untouched: no prefix, no re-encoding (base64), no splitting or truncation; a 64-hex value is a digest, not the signature.',
  'hash-algorithm':
    'The service signs with SHA256 only: something between it and you rewrote the hash-algorithm header, or the request is not from the service.',
  'unknown-key':
    'Configure the public key the service signs with (ask support for the current one; during a rotation configure both). A test key in production, or production keys in a test, also land here.',
  'body-malformed':
    'Hand the verifier the exact bytes of the request body: a truncated read, an HTML error page from a proxy, or a body decoded and re-encoded in another charset cannot verify.',
  'body-reserialized':
    'Verify the raw body bytes, before any JSON body parser runs: mount the webhook route before express.json() / bodyParser, or capture the raw body (captureRawBody), and never JSON.stringify a parsed payload to verify it.',
  'body-transcoded':
    'Read the body as bytes, not as text: a layer decoded UTF-8 in another charset (Latin-1, cp1252) or normalized Unicode and re-encoded it. Turn that conversion off for the webhook route.',
  'body-modified':
    'The content differs from what the service signed: find what edits the body on its way (middleware, a proxy that injects fields, a test fixture edited by hand), or treat the request as forged.',
});
