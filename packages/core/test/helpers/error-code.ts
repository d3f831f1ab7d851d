import { JobhookError, type ErrorCode } from '../../src/index.js';

/** The JobhookError code `fn` throws, or 'no error'; any other throw propagates. */
export function codeOf(fn: () => unknown): ErrorCode | 'no error' {
  try {
    fn();
    return 'no error';
  } catch (err) {
    if (err instanceof JobhookError) return err.code;
    throw err;
  }
}
