import { hostname } from 'node:os';
import { checkFunction, checkOneOf } from '../internal/option-checks.js';

/**
 * The logger jobhook writes to: the pino method signature (`logger.info(obj, msg)`), so a pino
 * logger, or anything shaped like one, plugs in as is.
 */
export interface Logger {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

const noop = (): void => {};

/** Logs nothing. Pass it as `logger` to silence jobhook entirely. */
export const silentLogger: Logger = Object.freeze({ debug: noop, info: noop, warn: noop, error: noop });

/** A level of {@link createJsonLogger}, as pino names them. */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';

/** pino's numeric levels, so log shippers that read pino lines read ours. */
const LEVEL_NUMBER = { debug: 20, info: 30, warn: 40, error: 50 } as const;

/** Options of {@link createJsonLogger}. */
export interface JsonLoggerOptions {
  /** Lowest level written. Default `'warn'`: errors and warnings, not one line per webhook. */
  level?: LogLevel;
  /** Where each line goes (without its newline added). Default: `process.stderr`. */
  write?: (line: string) => void;
}

/**
 * A logger that writes one JSON line per entry in pino's format (`level` as a number, `time` in ms,
 * `pid`, `hostname`, `msg`, and the entry's fields; an `err` field as `{type, message, stack, code}`),
 * so `pino-pretty` and log shippers read it. The receiver's default, at level `warn`, to stderr.
 *
 * @throws JobhookError `ERR_OPTION_INVALID` naming the option: a `level` it does not know, a `write` that is not a function.
 *
 * @example
 * ```ts
 * createReceiver({ publicKeys, onEvent, logger: createJsonLogger({ level: 'info' }) });
 * ```
 */
export function createJsonLogger(options: JsonLoggerOptions = {}): Logger {
  const { level = 'warn', write = (line: string) => void process.stderr.write(line) } = options;
  checkOneOf('createJsonLogger', 'level', level, [...(Object.keys(LEVEL_NUMBER) as (keyof typeof LEVEL_NUMBER)[]), 'silent']);
  checkFunction('createJsonLogger', 'write', write, 'a function (line) => void');
  const threshold = level === 'silent' ? Infinity : LEVEL_NUMBER[level];
  const base = `"pid":${process.pid},"hostname":${JSON.stringify(hostname())}`;
  const method =
    (name: keyof typeof LEVEL_NUMBER) =>
    (obj: object, msg?: string): void => {
      const n = LEVEL_NUMBER[name];
      if (n < threshold) return;
      const fields = stringifyFields(obj);
      const message = msg === undefined ? '' : `,"msg":${JSON.stringify(msg)}`;
      write(`{"level":${n},"time":${Date.now()},${base}${fields === '' ? '' : `,${fields}`}${message}}\n`);
    };
  return Object.freeze({ debug: method('debug'), info: method('info'), warn: method('warn'), error: method('error') });
}

/** The fields of `obj` as JSON members (without braces); a field that cannot be written never loses the line. */
function stringifyFields(obj: object): string {
  let text: string;
  try {
    text = JSON.stringify(obj, replaceForLog);
  } catch {
    // A cycle or a throwing toJSON: keep the line, say why its fields are missing.
    text = '{"logError":"fields not serializable"}';
  }
  return text === undefined || text.length <= 2 ? '' : text.slice(1, -1);
}

/** Errors as pino's `err` serializer writes them; bigints (event values) as their digits. */
function replaceForLog(this: Record<string, unknown>, key: string, value: unknown): unknown {
  if (typeof value === 'bigint') return value.toString();
  // `value` is what toJSON made of the field (a JobhookError writes its answer body); the holder has the error.
  const original = this[key];
  if (original instanceof Error) return serializeError(original, 0);
  return value;
}

function serializeError(err: Error, depth: number): object {
  const code = (err as { code?: unknown }).code;
  const out: Record<string, unknown> = { type: err.name, message: err.message, stack: err.stack };
  if (code !== undefined) out['code'] = code;
  // The cause chain explains a wrapped failure (a store error inside ERR_STORE_UNAVAILABLE); bounded against cycles.
  if (err.cause instanceof Error && depth < 3) out['cause'] = serializeError(err.cause, depth + 1);
  return out;
}
