import type { Admission, Precheck, Receiver, ReceiverResponse, RequestHead } from '../receiver/receiver-types.js';
import { bodyReadError } from './body-read-error.js';
import { internalAnswer } from './internal-answer.js';

/**
 * What one runtime gives the receive flow, and all it gives: how to read the head, how to read the
 * body, how to write the answer. `Req` is the request as the runtime hands it over (Node's
 * `IncomingMessage`, a Koa context, a Fetch `Request`, a Fastify request); `Ctx` what comes beside it
 * (Express's `res`, Fastify's `reply`, a Fetch handler's platform arguments; `void` when nothing
 * does); `Out` what writing the answer gives back (`void`, a `Response`, a `FastifyReply`).
 */
export interface ReceiveIo<Req, Ctx, Out> {
  /** The method, headers and client address (honouring the framework's proxy setting): all the head stage reads. */
  head(request: Req, context: Ctx): RequestHead;
  /**
   * The body, read under the admission: at most `maxBytes`, each chunk charged as it arrives,
   * stopped at its deadline (`readNodeBody` and `readCappedBody` do all three when given the
   * admission). What it throws is the body's refusal, mapped by `bodyReadError`.
   */
  readBody(request: Req, admission: Admission, context: Ctx): Promise<Uint8Array | string> | Uint8Array | string;
  /**
   * True when the request announced a body that is not read in full: a refusal then closes the
   * connection (`Connection: close`), since the rest of the body is never read. Absent: never (a
   * Fetch `Response` has no connection of its own).
   */
  bodyLeftUnread?(request: Req): boolean;
  /** Writes the answer (or makes the runtime's response of it). */
  respond(answer: ReceiverResponse, request: Req, context: Ctx): Out;
}

/**
 * One runtime's receive flow: head → body → receive → answer. A middleware runs it whole
 * (`run`); a framework that runs the stages from hooks of its own (Fastify: `onRequest`, its body
 * parser, the handler, the error handler) calls them one by one. No stage throws (a receiver that
 * throws is answered 500 `ERR_INTERNAL`); only `respond` can.
 */
export interface ReceiveFlow<Req, Ctx, Out> {
  /** Every stage in order, the answer written: `precheck`, then `receiveBody` or the refusal. */
  run(request: Req, context: Ctx): Promise<Out>;
  /**
   * The head stage: `receiver.precheck` on `io.head`, before a byte of the body is read. A
   * refusal comes back with `Connection: close` when it leaves an announced body unread.
   */
  precheck(request: Req, context: Ctx): Precheck;
  /** The body and receive stages, the answer written: `io.readBody` under the admission, then `admission.receive`, or `refuseBody`. */
  receiveBody(request: Req, admission: Admission, context: Ctx): Promise<Out>;
  /**
   * The answer for a body that was not read whole (`error` as a reader threw it: over the limit,
   * aborted, timed out, a charge refused, consumed by a body parser), with `Connection: close`
   * when its rest is left unread. Not written: for a framework whose own error path writes it.
   */
  refuseBody(request: Req, admission: Admission, error: unknown): ReceiverResponse;
}

/**
 * The receive flow written once for every runtime (as octokit's `createMiddleware({ getRequestHeader,
 * getPayload, handleResponse })`): the adapters give only what differs, how to read the head and
 * the body and how to write the answer. Every check lives in the receiver; the flow decides only
 * the order (no body read before the head is admitted) and that every failure is an answer.
 *
 * @example
 * ```ts
 * const flow = createReceiveFlow(receiver, {
 *   head: (req) => ({ method: req.method ?? 'GET', headers: req.headers, clientAddress: req.socket.remoteAddress }),
 *   readBody: (req, admission) => readNodeBody(req, admission),
 *   bodyLeftUnread,
 *   respond: (answer, _req, res: ServerResponse) => void res.writeHead(answer.status, answer.headers).end(answer.body),
 * });
 * createServer((req, res) => void flow.run(req, res).catch(() => res.destroy()));
 * ```
 */
export function createReceiveFlow<Req, Ctx, Out>(receiver: Receiver, io: ReceiveIo<Req, Ctx, Out>): ReceiveFlow<Req, Ctx, Out> {
  function precheck(request: Req, context: Ctx): Precheck {
    let checked: Precheck;
    try {
      checked = receiver.precheck(io.head(request, context));
    } catch (err) {
      return { refusal: internalAnswer(err) };
    }
    if (checked.refusal !== undefined) closingIfUnread(checked.refusal, request);
    return checked;
  }

  async function receiveBody(request: Req, admission: Admission, context: Ctx): Promise<Out> {
    let rawBody: Uint8Array | string;
    try {
      rawBody = await io.readBody(request, admission, context);
    } catch (err) {
      return io.respond(refuseBody(request, admission, err), request, context);
    }
    let answer: ReceiverResponse;
    try {
      answer = await admission.receive(rawBody);
    } catch (err) {
      answer = internalAnswer(err);
    }
    return io.respond(answer, request, context);
  }

  function refuseBody(request: Req, admission: Admission, error: unknown): ReceiverResponse {
    try {
      return closingIfUnread(admission.refuse(bodyReadError(error, admission.maxBytes)), request);
    } catch (err) {
      return internalAnswer(err);
    }
  }

  function closingIfUnread(answer: ReceiverResponse, request: Req): ReceiverResponse {
    if (io.bodyLeftUnread?.(request) === true) answer.headers['connection'] = 'close';
    return answer;
  }

  return {
    async run(request, context) {
      const { refusal, admission } = precheck(request, context);
      if (refusal !== undefined) return io.respond(refusal, request, context);
      return receiveBody(request, admission, context);
    },
    precheck,
    receiveBody,
    refuseBody,
  };
}
