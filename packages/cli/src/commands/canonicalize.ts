import { canonicalize } from '@jobhook/core';
import {
  HELP_OPTION,
  checkPositionals,
  commandHelp,
  parseArgs,
  parseCommandLine,
  toProfile,
  type Command,
} from '../command.js';
import { readInput, write, type CliIo } from '../io.js';

const OPTIONS = { ...HELP_OPTION, profile: { type: 'string' } } as const;

/** `jobhook canonicalize`: the exact bytes a signer hashed, for debugging a signature mismatch. */
export const canonicalizeCommand: Command = {
  name: 'canonicalize',
  summary: 'Print the canonical bytes of a body (what the signer hashed), with nothing added.',
  synopsis: ['canonicalize [--profile NAME] [FILE]'],
  flags: [
    ['--profile NAME', 'python (default), python-ascii, orjson or javascript'],
    ['FILE', 'the body (default: stdin; - is stdin)'],
    ['-h, --help', 'show this help'],
  ],
  notes: ['Writes no trailing newline, so `| sha256sum` gives the signed digest. Errors: stderr, exit 2.'],
  async run(argv: readonly string[], io: CliIo): Promise<number> {
    const { values, positionals } = parseCommandLine(canonicalizeCommand, () =>
      parseArgs({ args: [...argv], options: OPTIONS, allowPositionals: true, strict: true }),
    );
    if (values.help === true) {
      await write(io.stdout, commandHelp(canonicalizeCommand));
      return 0;
    }
    checkPositionals(canonicalizeCommand, positionals, 1);
    const profile = toProfile(canonicalizeCommand, values.profile ?? 'python');
    const body = await readInput(positionals[0], io, 'FILE');
    await write(io.stdout, canonicalize(body, { profile }));
    return 0;
  },
};
