import type { IncomingMessage } from 'node:http';
import { JobhookError } from '../errors.js';
import type { Receiver, ReceiverResponse, RequestHead } from '../receiver/receiver-types.js';
import { bodyLeftUnread } from './body-left-unread.js';
import { bodyReadError } from './body-read-error.js';
import { internalAnswer } from './internal-answer.js';
import { readNodeBody } from './read-node-body.js';

/**
 * What a body parser mounted before the adapter left: the bytes it kept, `undefined` when it left
 * the stream unread (the adapter reads it), or the error to answer with when it consumed the
 * stream and kept nothing (`bodyAlreadyParsedError`).
 */
export type KeptBody = Uint8Array | string | JobhookError | undefined;

/**
 * One webhook request through a Node server adapter (Express, Koa): `receiver.precheck` on the head
 * (a refused request's body is never read, and an announced one left unread gets `Connection:
 * close`), then the body the framework kept (`keptBody`, asked only once the signature decoded) or
 * read from `req` under the admission's `maxBytes` and deadline, then the admission's `receive`.
 * Never rejects; write the answer it gives.
 *
 * @param head the method and headers as the framework has them.
 * @param keptBody the framework's side: see {@link KeptBody}.
 * @example
 * ```ts
 * const answer = await receiveNodeRequest(receiver, req, { method: req.method, headers: req.headers }, () => undefined);
 * res.writeHead(answer.status, answer.headers).end(answer.body);
 * ```
 */
export async function receiveNodeRequest(
  receiver: Receiver,
  req: IncomingMessage,
  head: RequestHead,
  keptBody: () => KeptBody,
): Promise<ReceiverResponse> {
  try {
    return await receive(receiver, req, head, keptBody);
  } catch (err) {
    return internalAnswer(err);
  }
}

async function receive(receiver: Receiver, req: IncomingMessage, head: RequestHead, keptBody: () => KeptBody): Promise<ReceiverResponse> {
  const { refusal, admission } = receiver.precheck(head);
  if (refusal !== undefined) return closingIfUnread(refusal, req);
  let rawBody: Uint8Array | string;
  try {
    const kept = keptBody();
    if (kept instanceof JobhookError) throw kept;
    rawBody = kept ?? (await readNodeBody(req, admission));
  } catch (err) {
    return closingIfUnread(admission.refuse(bodyReadError(err, admission.maxBytes)), req);
  }
  return admission.receive(rawBody);
}

/** The answer, with `Connection: close` when the request's body is left unread (the rest of it is not read). */
function closingIfUnread(answer: ReceiverResponse, req: IncomingMessage): ReceiverResponse {
  if (bodyLeftUnread(req)) answer.headers['connection'] = 'close';
  return answer;
}
