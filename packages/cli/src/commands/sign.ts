import { loadPrivateKey, signPayload } from '@jobhook/core';
import {
  HELP_OPTION,
  checkPositionals,
  commandHelp,
  parseArgs,
  parseCommandLine,
  toProfile,
  type Command,
} from '../command.js';
import { UsageError } from '../errors.js';
import { readFileArg, readInput, write, type CliIo } from '../io.js';

const OPTIONS = { ...HELP_OPTION, 'private-key': { type: 'string' }, profile: { type: 'string' } } as const;

/** `jobhook sign`: the signature the service would send for these exact body bytes. */
export const signCommand: Command = {
  name: 'sign',
  summary: 'Print the hex signature of a body, as `jobhook verify` would check it.',
  synopsis: ['sign --private-key FILE [--profile NAME] [FILE]'],
  flags: [
    ['--private-key FILE', 'RSA private key, PEM (PKCS#8 or PKCS#1), at least 2048 bits'],
    ['--profile NAME', 'canonical profile to sign: python (default), python-ascii, orjson or javascript'],
    ['FILE', 'the body (default: stdin; - is stdin); it is signed as is, not re-serialized'],
    ['-h, --help', 'show this help'],
  ],
  notes: ['Prints the lowercase hex signature and a newline. Bad key or body: stderr, exit 2.'],
  async run(argv: readonly string[], io: CliIo): Promise<number> {
    const { values, positionals } = parseCommandLine(signCommand, () =>
      parseArgs({ args: [...argv], options: OPTIONS, allowPositionals: true, strict: true }),
    );
    if (values.help === true) {
      await write(io.stdout, commandHelp(signCommand));
      return 0;
    }
    checkPositionals(signCommand, positionals, 1);
    const keyFile = values['private-key'];
    if (keyFile === undefined) throw new UsageError('--private-key FILE is required', signCommand);
    const profile = toProfile(signCommand, values.profile ?? 'python');
    // Load the key before reading stdin, so a bad key fails without waiting for a body.
    const key = loadPrivateKey(await readFileArg(keyFile, '--private-key'));
    const body = await readInput(positionals[0], io, 'FILE');
    const { signature } = signPayload(body, key, { profile });
    await write(io.stdout, `${signature}\n`);
    return 0;
  },
};
