import { parseArgs, type ParseArgsConfig } from 'node:util';
import type { CanonicalProfile } from '@jobhook/core';
import { CANONICAL_PROFILES, isCanonicalProfile } from '@jobhook/core/canonical';
import { write, type CliIo } from './io.js';
import { closestFlag } from './closest-flag.js';

/**
 * A mistake on the command line (unknown flag, missing required flag, bad flag value). `main`
 * answers it with the message and the command's usage on stderr, and exit code 2.
 */
export class UsageError extends Error {
  override readonly name = 'UsageError';

  /** @param command The command whose usage to print; the global usage when absent. */
  constructor(
    message: string,
    readonly command?: Command,
  ) {
    super(message);
  }
}

/** One `jobhook` subcommand. New commands (`serve`, `send`) are one more file and one table entry. */
export interface Command {
  /** The word after `jobhook`. */
  readonly name: string;
  /** One line for the command list. */
  readonly summary: string;
  /** Synopsis lines, without the leading `jobhook `. */
  readonly synopsis: readonly string[];
  /** `[flag, description]` rows of the help text (`-h, --help` is added). */
  readonly flags: readonly (readonly [string, string])[];
  /** Extra help paragraphs (exit codes, formats). */
  readonly notes?: readonly string[];
  /**
   * Runs the command and resolves to its exit code. Throws {@link UsageError} for command-line
   * mistakes; any other throw is reported by `main` as `code: message` on stderr with exit 2.
   */
  run(argv: readonly string[], io: CliIo): Promise<number>;
}

/** The `--help` flag every command accepts. */
const HELP_OPTION = { help: { type: 'boolean', short: 'h' } } as const;

type OptionsConfig = NonNullable<ParseArgsConfig['options']>;

/** The parsed flags of a command whose `parseArgs` options are `O`. */
export type CommandValues<O extends OptionsConfig> = ReturnType<
  typeof parseArgs<{ args: string[]; options: O; allowPositionals: true; strict: true }>
>['values'];

/** What a command declares; {@link defineCommand} does the parsing, `--help` and argument count. */
export interface CommandSpec<O extends OptionsConfig> extends Omit<Command, 'run'> {
  /** `node:util` `parseArgs` options (strict). */
  readonly options: O;
  /** How many positional arguments the command takes at most. */
  readonly maxPositionals: number;
  /** Runs the command with parsed arguments; resolves to the exit code. */
  execute(values: CommandValues<O>, positionals: readonly string[], io: CliIo): Promise<number>;
}

/**
 * Makes a {@link Command} from its spec: strict `parseArgs` (its errors become {@link UsageError}s),
 * `-h/--help`, and a check on the number of positionals, so each command holds only its own logic.
 */
export function defineCommand<const O extends OptionsConfig>(spec: CommandSpec<O>): Command {
  const command: Command = {
    name: spec.name,
    summary: spec.summary,
    synopsis: spec.synopsis,
    flags: spec.flags,
    ...(spec.notes === undefined ? {} : { notes: spec.notes }),
    async run(argv, io) {
      // biome-ignore lint/suspicious/noImplicitAnyLet: TypeScript types it from the assignment below (parseArgs' result depends on the options).
      let parsed;
      try {
        parsed = parseArgs({
          args: [...argv],
          options: { ...spec.options, ...HELP_OPTION },
          allowPositionals: true,
          strict: true,
        });
      } catch (err) {
        const code = (err as { code?: unknown }).code;
        if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
          throw new UsageError(unknownFlagMessage(err as Error, Object.keys(spec.options)), command);
        }
        if (typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS_')) {
          throw new UsageError((err as Error).message, command);
        }
        throw err;
      }
      if ((parsed.values as { help?: boolean }).help === true) {
        await write(io.stdout, commandHelp(command));
        return 0;
      }
      const extra = parsed.positionals[spec.maxPositionals];
      if (extra !== undefined) throw new UsageError(`unexpected argument '${extra}'`, command);
      return spec.execute(parsed.values as CommandValues<O>, parsed.positionals, io);
    },
  };
  return command;
}

const HELP_ROW = ['-h, --help', 'show this help'] as const;

/** The full help text of a command. */
export function commandHelp(command: Command): string {
  const width = Math.max(HELP_ROW[0].length, ...command.flags.map(([flag]) => flag.length)) + 2;
  const lines = [
    `Usage: ${command.synopsis.map((s) => `jobhook ${s}`).join('\n       ')}`,
    '',
    command.summary,
    '',
    'Options:',
    ...[...command.flags, HELP_ROW].map(([flag, text]) => `  ${flag.padEnd(width)}${text}`),
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

/**
 * parseArgs' message for an unknown flag, with the command's closest flag when one is near
 * (`--duplicate` → `--duplicates`); its advice about positionals starting with '-' is kept only
 * when nothing is near, since a mistyped flag is by far the likelier mistake.
 */
function unknownFlagMessage(err: Error, known: readonly string[]): string {
  const given = /'(-{1,2}[^'\s]+)'/.exec(err.message)?.[1];
  if (given === undefined) return err.message;
  const name = given.replace(/^-+/, '').split('=')[0] ?? '';
  const near = closestFlag(name, known);
  return near === undefined ? err.message : `unknown option '${given}'; did you mean '--${near}'?`;
}
