import type { Command } from '../command.js';
import { canonicalizeCommand } from './canonicalize.js';
import { doctorCommand } from './doctor.js';
import { keygenCommand } from './keygen.js';
import { replayCommand } from './replay.js';
import { sendCommand } from './send.js';
import { serveCommand } from './serve.js';
import { signCommand } from './sign.js';
import { verifyCommand } from './verify.js';

/** Every `jobhook` command, in help order. Nothing else dispatches on command names. */
export const COMMANDS: readonly Command[] = [
  verifyCommand,
  doctorCommand,
  canonicalizeCommand,
  signCommand,
  keygenCommand,
  serveCommand,
  sendCommand,
  replayCommand,
];

/** The command named `name`, if any. */
export function findCommand(name: string): Command | undefined {
  return COMMANDS.find((c) => c.name === name);
}
