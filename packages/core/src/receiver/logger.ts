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

/** The default: logs nothing. */
export const silentLogger: Logger = Object.freeze({ debug: noop, info: noop, warn: noop, error: noop });

/** True when `value` has the four pino-style methods. @internal */
export function isLogger(value: unknown): value is Logger {
  const v = value as Partial<Logger> | null;
  return (
    typeof v === 'object' &&
    v !== null &&
    typeof v.debug === 'function' &&
    typeof v.info === 'function' &&
    typeof v.warn === 'function' &&
    typeof v.error === 'function'
  );
}
