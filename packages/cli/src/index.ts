/**
 * @jobhook/cli: the `jobhook` command, runnable in-process through {@link main}.
 * @packageDocumentation
 */
import { readFileSync } from 'node:fs';
import { commandHelp, commandUsage, type Command, UsageError } from './command.js';
import { COMMANDS, findCommand } from './commands/index.js';
import { describeError } from './errors.js';
import { processIo, write, type CliIo } from './io.js';

export { UsageError, type Command } from './command.js';
export type { CliIo } from './io.js';
export { CliError, type CliErrorCode } from './errors.js';
export { COMMANDS } from './commands/index.js';

/**
 * Runs `jobhook` with `argv` (the arguments after the program name) and resolves to the exit code:
 * 0 success, 1 invalid signature (verify), 2 bad input or command line. Never calls
 * `process.exit`, so tests can run it in-process with their own streams.
 *
 * @example
 * ```ts
 * process.exitCode = await main(process.argv.slice(2));
 * ```
 */
export async function main(argv: readonly string[], io: CliIo = processIo()): Promise<number> {
  const [name, ...rest] = argv;
  if (name === '--help' || name === '-h' || name === 'help') {
    const topic = name === 'help' && rest[0] !== undefined ? findCommand(rest[0]) : undefined;
    if (name === 'help' && rest[0] !== undefined && topic === undefined) return usageError(io, `unknown command '${rest[0]}'`);
    await write(io.stdout, topic === undefined ? globalHelp() : commandHelp(topic));
    return 0;
  }
  if (name === '--version' || name === '-V') {
    await write(io.stdout, `${version()}\n`);
    return 0;
  }
  if (name === undefined) return usageError(io, 'no command given');
  const command = findCommand(name);
  if (command === undefined) {
    return usageError(io, name.startsWith('-') ? `unknown option '${name}'` : `unknown command '${name}'`);
  }
  try {
    return await command.run(rest, io);
  } catch (err) {
    if (err instanceof UsageError) return usageError(io, err.message, err.command ?? command);
    const { code, message } = describeError(err);
    await write(io.stderr, `jobhook ${command.name}: ${code}: ${message}\n`);
    return 2;
  }
}

async function usageError(io: CliIo, message: string, command?: Command): Promise<number> {
  const prefix = command === undefined ? 'jobhook' : `jobhook ${command.name}`;
  await write(io.stderr, `${prefix}: ${message}\n\n${command === undefined ? globalUsage() : commandUsage(command)}`);
  return 2;
}

function globalUsage(): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length)) + 2;
  return [
    'Usage: jobhook <command> [options]',
    '',
    'Commands:',
    ...COMMANDS.map((c) => `  ${c.name.padEnd(width)}${c.summary}`),
    '',
    "Run 'jobhook <command> --help' for a command's options.",
    '',
  ].join('\n');
}

function globalHelp(): string {
  return [
    "jobhook: run the reference service, send test webhooks, and verify, canonicalize and sign the service's signed async-job webhooks.",
    '',
    globalUsage(),
    'Options:',
    '  -h, --help     show this help',
    '  -V, --version  print the version',
    '',
  ].join('\n');
}

/** The package version, read at call time so the source and the build report the same one. */
function version(): string {
  // ../package.json from both src/ (tests) and dist/ (the binary).
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version?: unknown };
  return typeof pkg.version === 'string' ? pkg.version : 'unknown';
}
