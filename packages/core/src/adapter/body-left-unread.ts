import type { IncomingMessage } from 'node:http';

/**
 * True when a Node request announced a body (`Content-Length` above 0, or `Transfer-Encoding`) that
 * has not arrived in full: answering now leaves it unread, so an adapter closes the connection after
 * the answer (`Connection: close`).
 */
export function bodyLeftUnread(req: IncomingMessage): boolean {
  if (req.complete || req.readableEnded) return false;
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}
