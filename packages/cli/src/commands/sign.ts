import { loadPrivateKey, signPayload } from '@jobhook/core/sign';
import { defineCommand, toProfile, UsageError } from '../command.js';
import { readFileArg, readInput, write, type CliIo } from '../io.js';

/** `jobhook sign`: the signature the service would send for these exact body bytes. */
export const signCommand = defineCommand({
  name: 'sign',
  summary: 'Print the hex signature of a body, as `jobhook verify` would check it.',
  synopsis: ['sign --private-key FILE [--profile NAME] [FILE]'],
  flags: [
    ['--private-key FILE', 'RSA private key, PEM (PKCS#8 or PKCS#1), at least 2048 bits'],
    ['--profile NAME', 'canonical profile to sign: python (default), python-ascii, orjson or javascript'],
    ['FILE', 'the body (default: stdin; - is stdin); it is signed as is, not re-serialized'],
  ],
  notes: ['Prints the lowercase hex signature and a newline. Bad key or body: stderr, exit 2.'],
  options: { 'private-key': { type: 'string' }, profile: { type: 'string' } },
  maxPositionals: 1,
  async execute(values, positionals, io: CliIo): Promise<number> {
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
});
