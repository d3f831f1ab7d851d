import type { IncomingMessage } from 'node:http';
import { JobhookError } from '../errors.js';
import type { Admission, Receiver, ReceiverResponse, RequestHead } from '../receiver/receiver-types.js';
import { bodyLeftUnread } from './body-left-unread.js';
import { readNodeBody } from './read-node-body.js';
import { createReceiveFlow, type ReceiveIo } from './receive-flow.js';

/**
 * What a body parser mounted before the adapter left: the bytes it kept, `undefined` when it left
 * the stream unread (the adapter reads it), or the error to answer with when it consumed the
 * stream and kept nothing (`bodyAlreadyParsedError`).
 */
export type KeptBody = Uint8Array | string | JobhookError | undefined;

/**
 * The body half of a {@link ReceiveIo} for a Node server (Express, Koa, `node:http`): the bytes a
 * body parser mounted before kept (`keptBody`, asked only once the head is admitted), else the
 * request's own stream read under the admission (`readNodeBody`); and whether an answer leaves an
 * announced body unread (`bodyLeftUnread`).
 *
 * @param nodeRequest the `IncomingMessage` of a request as the framework hands it over.
 * @param keptBody the framework's side: see {@link KeptBody}.
 */
export function nodeBodyIo<Req, Ctx>(
  nodeRequest: (request: Req) => IncomingMessage,
  keptBody: (request: Req, context: Ctx) => KeptBody,
): Pick<ReceiveIo<Req, Ctx, unknown>, 'readBody' | 'bodyLeftUnread'> {
  return {
    readBody(request: Req, admission: Admission, context: Ctx): Promise<Uint8Array | string> | Uint8Array | string {
      const kept = keptBody(request, context);
      if (kept instanceof JobhookError) throw kept;
      return kept ?? readNodeBody(nodeRequest(request), admission);
    },
    bodyLeftUnread: (request: Req): boolean => bodyLeftUnread(nodeRequest(request)),
  };
}

/** What {@link receiveNodeRequest} is given beside the request. */
interface NodeRequestParts {
  readonly head: RequestHead;
  readonly keptBody: () => KeptBody;
}

/** The flow's runtime side for {@link receiveNodeRequest}: the head and kept body as given, the answer handed back unwritten. */
const GIVEN_PARTS: ReceiveIo<IncomingMessage, NodeRequestParts, ReceiverResponse> = {
  head: (_req, parts) => parts.head,
  ...nodeBodyIo<IncomingMessage, NodeRequestParts>(
    (req) => req,
    (_req, parts) => parts.keptBody(),
  ),
  respond: (answer) => answer,
};

/**
 * One webhook request through a Node server: the receive flow ({@link createReceiveFlow}) with the
 * head and kept body given. `receiver.precheck` on the head (a refused request's body is never read,
 * and an announced one left unread gets `Connection: close`), then the body the framework kept
 * (`keptBody`, asked only once the signature decoded) or read from `req` under the admission's
 * `maxBytes` and deadline, then the admission's `receive`. Never rejects; write the answer it gives.
 *
 * @param head the method and headers as the framework has them.
 * @param keptBody the framework's side: see {@link KeptBody}.
 * @example
 * ```ts
 * const answer = await receiveNodeRequest(receiver, req, { method: req.method, headers: req.headers }, () => undefined);
 * res.writeHead(answer.status, answer.headers).end(answer.body);
 * ```
 */
export function receiveNodeRequest(
  receiver: Receiver,
  req: IncomingMessage,
  head: RequestHead,
  keptBody: () => KeptBody,
): Promise<ReceiverResponse> {
  // A flow per call: the receiver is an argument here, and a flow is four closures.
  return createReceiveFlow(receiver, GIVEN_PARTS).run(req, { head, keptBody });
}
