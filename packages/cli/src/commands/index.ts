import type { Command } from '../command.js';
import { canonicalizeCommand } from './canonicalize.js';
import { keygenCommand } from './keygen.js';
import { signCommand } from './sign.js';
import { verifyCommand } from './verify.js';

/**
 * Every `jobhook` command, in help order. `serve` and `send` will be one file each and one entry
 * here; nothing else dispatches on command names.
 */
export const COMMANDS: readonly Command[] = [verifyCommand, canonicalizeCommand, signCommand, keygenCommand];

/** The command named `name`, if any. */
export function findCommand(name: string): Command | undefined {
  return COMMANDS.find((c) => c.name === name);
}
