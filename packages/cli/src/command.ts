import { parseArgs } from 'node:util';
import { CANONICAL_PROFILES, isCanonicalProfile, type CanonicalProfile } from '@jobhook/core';
import type { CliIo } from './io.js';
import { UsageError } from './errors.js';

/** One `jobhook` subcommand. New commands (`serve`, `send`) are one more file and one table entry. */
export interface Command {
  /** The word after `jobhook`. */
  readonly name: string;
  /** One line for the command list. */
  readonly summary: string;
  /** Synopsis lines, without the leading `jobhook `. */
  readonly synopsis: readonly string[];
  /** `[flag, description]` rows of the help text. */
  readonly flags: readonly (readonly [string, string])[];
  /** Extra help paragraphs (exit codes, formats). */
  readonly notes?: readonly string[];
  /**
   * Runs the command and resolves to its exit code. Throws {@link UsageError} for command-line
   * mistakes; any other throw is reported by `main` as `code: message` on stderr with exit 2.
   */
  run(argv: readonly string[], io: CliIo): Promise<number>;
}

/** The `--help` flag every command accepts, to spread into its `parseArgs` options. */
export const HELP_OPTION = { help: { type: 'boolean', short: 'h' } } as const;

/**
 * Runs `node:util` `parseArgs` (strict), turning its errors into {@link UsageError}s of `command`.
 * Taking the call as a thunk keeps `parseArgs`' precise inferred types for each command.
 */
export function parseCommandLine<T>(command: Command, parse: () => T): T {
  try {
    return parse();
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    if (typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS_')) {
      throw new UsageError((err as Error).message, command);
    }
    throw err;
  }
}

/** Re-export so commands import their parser from one place. */
export { parseArgs };

/** The full help text of a command. */
export function commandHelp(command: Command): string {
  const width = Math.max(...command.flags.map(([flag]) => flag.length)) + 2;
  const lines = [
    `Usage: ${command.synopsis.map((s) => `jobhook ${s}`).join('\n       ')}`,
    '',
    command.summary,
    '',
    'Options:',
    ...command.flags.map(([flag, text]) => `  ${flag.padEnd(width)}${text}`),
  ];
  for (const note of command.notes ?? []) lines.push('', note);
  return `${lines.join('\n')}\n`;
}

/** The short usage printed after a command-line mistake. */
export function commandUsage(command: Command): string {
  return `Usage: ${command.synopsis.map((s) => `jobhook ${s}`).join('\n       ')}\nRun 'jobhook ${command.name} --help' for the options.\n`;
}

/** Checks a `--profile` value; an unknown name is a command-line mistake, not bad input. */
export function toProfile(command: Command, name: string): CanonicalProfile {
  if (!isCanonicalProfile(name)) {
    throw new UsageError(`unknown profile '${name}'; expected one of ${CANONICAL_PROFILES.join(', ')}`, command);
  }
  return name;
}

/** Refuses positionals beyond `max` (parseArgs only knows "none" or "any number"). */
export function checkPositionals(command: Command, positionals: readonly string[], max: number): void {
  const extra = positionals[max];
  if (extra !== undefined) throw new UsageError(`unexpected argument '${extra}'`, command);
}
