import type { BodyStyle, SignedPayload } from '@jobhook/core/sign';
import { parseBody, toLosslessValue } from '@jobhook/core/json';
import { BREAK_VARIANTS, breakDelivery, type BreakCause } from '@jobhook/core/testing';
import type { KeyObject } from 'node:crypto';
import type { Command } from '../command.js';
import { choiceFlag, integerFlag } from './flag-values.js';
import { UsageError } from '../command.js';

/** The `parseArgs` options `send` takes for breaking deliveries. */
export const BREAK_OPTIONS = {
  break: { type: 'string' },
  'break-variant': { type: 'string' },
} as const;

/** The help rows of those flags. */
export const BREAK_FLAG_ROWS: readonly (readonly [string, string])[] = [
  [
    '--break CAUSE',
    `deliver a webhook broken that way, to see what your receiver and its logs say: ${Object.keys(BREAK_VARIANTS).join(', ')}`,
  ],
  ['--break-variant N', "which of the ways the cause happens (0 = the first; see core's BREAK_VARIANTS)"],
];

/** How to break every delivery of a run. */
export interface BreakPlan {
  cause: BreakCause;
  variant: number;
  /** The variant's name, for the note on stderr. */
  name: string;
}

/** Reads `--break` and `--break-variant`; undefined when not breaking. */
export function readBreakFlags(command: Command, cause: string | undefined, variant: string | undefined): BreakPlan | undefined {
  if (cause === undefined) {
    if (variant !== undefined) throw new UsageError('--break-variant needs --break CAUSE', command);
    return undefined;
  }
  const causes = Object.keys(BREAK_VARIANTS) as BreakCause[];
  const chosen = choiceFlag(command, '--break', cause, causes, causes[0]!);
  const names = BREAK_VARIANTS[chosen];
  const index = integerFlag(command, '--break-variant', variant, { min: 0, max: names.length - 1, fallback: 0 });
  return { cause: chosen, variant: index, name: names[index]! };
}

/**
 * The delivery `signed` would be, broken as `plan` says: its payload signed again with `key` and
 * broken by core's `breakDelivery` (the job_id and the rest of the event stay the same).
 */
export function breakSigned<T extends { payload: SignedPayload }>(signed: T, plan: BreakPlan, key: KeyObject, bodyStyle: BodyStyle): T {
  const event = toLosslessValue(parseBody(signed.payload.canonical, { maxBodyBytes: signed.payload.canonical.length + 2 })) as object;
  const broken = breakDelivery(event, plan.cause, { privateKey: key, variant: plan.variant, bodyStyle });
  return { ...signed, payload: { ...signed.payload, body: broken.body, headers: broken.headers } };
}
