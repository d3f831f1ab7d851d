import { once } from 'node:events';
import { readFile } from 'node:fs/promises';
import type { Readable, Writable } from 'node:stream';
import { CliError } from './errors.js';

/** The streams a command talks to: the process's by default, any streams in tests. */
export interface CliIo {
  readonly stdin: Readable;
  readonly stdout: Writable;
  readonly stderr: Writable;
}

/** The process's own streams. */
export function processIo(): CliIo {
  return { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr };
}

/** Reads a stream to its end as bytes. */
export async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : (chunk as Buffer));
  return Buffer.concat(chunks);
}

/**
 * Reads the bytes of a body argument; `undefined` or `-` means stdin.
 * @param label How to name the file in an error, e.g. `--body`.
 * @throws CliError `ERR_FILE_UNREADABLE`
 */
export async function readInput(path: string | undefined, io: CliIo, label: string): Promise<Buffer> {
  if (path === undefined || path === '-') return readAll(io.stdin);
  return readFileArg(path, label);
}

/**
 * Reads a file named on the command line (never stdin: key files are always real files).
 * @throws CliError `ERR_FILE_UNREADABLE`
 */
export async function readFileArg(path: string, label: string): Promise<Buffer> {
  try {
    return await readFile(path);
  } catch (cause) {
    throw new CliError('ERR_FILE_UNREADABLE', `cannot read ${label} ${path}: ${(cause as Error).message}`, { cause });
  }
}

/**
 * Writes a chunk and waits for `drain` when the stream's buffer is full, so a slow reader of a big
 * batch holds the producer back instead of letting output pile up in memory.
 */
export async function write(stream: Writable, chunk: string | Uint8Array): Promise<void> {
  if (!stream.write(chunk)) await once(stream, 'drain');
}

/**
 * One JSON line of a flat record. Payload values may be `bigint` (integers beyond 2^53, which
 * `JSON.stringify` refuses): they are written as exact JSON integers at the top level, as
 * strings when nested.
 */
export function jsonLine(record: object): string {
  const parts = Object.entries(record).map(([key, value]) => {
    const text =
      typeof value === 'bigint' ? value.toString() : JSON.stringify(value, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v));
    return `${JSON.stringify(key)}:${text ?? 'null'}`;
  });
  return `{${parts.join(',')}}\n`;
}
