/**
 * Fixed texts of the attempt error codes: what a deliveries log shows for `error`. Node's own
 * message is never shown there: for an allow-listed internal receiver it names internal addresses
 * and host names (`connect ECONNREFUSED 10.1.2.3:443`, a certificate's `DNS:*.corp.internal`), which
 * the submitter of a job must not be able to read back. The deliverer logs that message instead.
 */
const TEXTS: ReadonlyMap<string, string> = new Map(
  Object.entries({
    timeout: 'the receiver did not answer within the attempt timeout',
    ECONNREFUSED: 'the receiver refused the connection',
    ECONNRESET: 'the connection was reset before the answer arrived',
    EPIPE: 'the connection was closed while the webhook was being sent',
    ECONNABORTED: 'the connection was aborted',
    EHOSTUNREACH: 'the receiver host is unreachable',
    ENETUNREACH: 'the receiver network is unreachable',
    ETIMEDOUT: 'the connection timed out',
    ENOTFOUND: 'the receiver host name does not resolve',
    EAI_AGAIN: 'the receiver host name did not resolve (temporary DNS failure)',
    ssrf_refused:
      'the receiver URL was refused by the SSRF guard (it is, or resolves to, an address or name not allowed); nothing was sent',
    payload_invalid: 'the webhook payload could not be built or signed (for example over the canonical size limit); nothing was sent',
    internal_error: 'the sender could not make this attempt (an internal error; see the service log)',
    redirect_not_followed: 'the receiver answered with a redirect (3xx), which is not followed',
    unexpected_status: 'the receiver answered with a status outside 200 to 599',
    network_error: 'the connection failed',
  }),
);

/**
 * The fixed text of attempt error code `error` (null for null): one text per code, the same for
 * every attempt, never a message that may carry an address or a host name. A TLS or certificate
 * code (`CERT_HAS_EXPIRED`, `ERR_TLS_CERT_ALTNAME_INVALID`, …), an HTTP parse code (`HPE_…`) and
 * any other code get a text per kind.
 *
 * @example
 * ```ts
 * attemptErrorText('ECONNREFUSED'); // 'the receiver refused the connection'
 * ```
 */
export function attemptErrorText(error: string | null): string | null {
  if (error === null) return null;
  const fixed = TEXTS.get(error);
  if (fixed !== undefined) return fixed;
  if (/CERT|TLS|SSL/.test(error)) return 'the TLS handshake with the receiver failed (its certificate or TLS setup was not accepted)';
  if (error.startsWith('HPE_')) return "the receiver's answer was not valid HTTP";
  return 'the connection to the receiver failed';
}
