import { canonicalize } from '@jobhook/core/canonical';
import { defineCommand, toProfile } from '../command.js';
import { readInput, write, type CliIo } from '../io.js';

/** `jobhook canonicalize`: the exact bytes a signer hashed, for debugging a signature mismatch. */
export const canonicalizeCommand = defineCommand({
  name: 'canonicalize',
  summary: 'Print the canonical bytes of a body (what the signer hashed), with nothing added.',
  synopsis: ['canonicalize [--profile NAME] [FILE]'],
  flags: [
    ['--profile NAME', 'python (default), python-ascii, orjson or javascript'],
    ['FILE', 'the body (default: stdin; - is stdin)'],
  ],
  notes: ['Writes no trailing newline, so `| sha256sum` gives the signed digest. Errors: stderr, exit 2.'],
  options: { profile: { type: 'string' } },
  maxPositionals: 1,
  async execute(values, positionals, io: CliIo): Promise<number> {
    const profile = toProfile(canonicalizeCommand, values.profile ?? 'python');
    const body = await readInput(positionals[0], io, 'FILE');
    await write(io.stdout, canonicalize(body, { profile }));
    return 0;
  },
});
