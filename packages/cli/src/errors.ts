/** Codes of the failures the CLI itself detects (core's `JobhookError` codes cover the rest). */
export type CliErrorCode =
  | 'ERR_FILE_UNREADABLE'
  | 'ERR_FILE_UNWRITABLE'
  | 'ERR_FILE_EXISTS'
  // An optional peer a command needs is not installed (`serve` without `@jobhook/sender`).
  | 'ERR_PACKAGE_MISSING'
  | 'ERR_INTERNAL';

/** A failure outside core (a file that cannot be read, written, or would be overwritten), with a stable code. */
export class CliError extends Error {
  override readonly name = 'CliError';

  constructor(
    readonly code: CliErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/**
 * The stable code and message of any thrown value, so every command reports failures the same way.
 * Anything that is neither a core `JobhookError` nor a {@link CliError} is `ERR_INTERNAL`.
 */
export function describeError(err: unknown): { code: string; message: string } {
  if (err instanceof Error && typeof (err as { code?: unknown }).code === 'string') {
    const code = (err as Error & { code: string }).code;
    // Only our own codes are stable; a raw Node code (EPIPE, ERR_INVALID_ARG_TYPE) is an internal failure.
    if (code.startsWith('ERR_') && (err.name === 'JobhookError' || err.name === 'CliError')) {
      return { code, message: err.message };
    }
  }
  return { code: 'ERR_INTERNAL', message: err instanceof Error ? err.message : String(err) };
}
