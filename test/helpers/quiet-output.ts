// A vitest setup file (vitest.config.ts `setupFiles`), run in each test worker before its test file.
//
// vitest holds back what a test prints through `console` and, with `silent: 'passed-only'`, shows it
// only under a test that failed. What is written straight to `process.stdout` / `process.stderr`
// bypasses that: core's default logger (`createJsonLogger()` writes each line with
// `process.stderr.write`), a child's output piped through, a framework's error print. So both
// streams' `write` is routed here into `console.log` / `console.error`: the lines land in the test
// that was running, and reach the output only when it fails. Node's own process warnings (a
// deprecation, a listener leak) still go straight to the terminal: they say something is wrong even
// when every test passes.
import { Buffer } from 'node:buffer';

type Write = NodeJS.WriteStream['write'];

/**
 * The stream's own `write`, kept on the stream for what must reach the terminal whatever the outcome;
 * on the stream rather than in this module, so a second copy of the module (a test importing
 * {@link writeToTerminal} may get one) finds the streams already routed.
 */
const ORIGINAL_WRITE = Symbol.for('jobhook.test.originalWrite');
type RoutedStream = NodeJS.WriteStream & { [ORIGINAL_WRITE]?: Write };

/** Set while a routed line is being printed: a console that writes to the stream itself goes straight through. */
let routing = false;

/** A warning as Node.js prints it: `(node:1234) [DEP0005] DeprecationWarning: ...`. */
const NODE_WARNING = /^\(node:\d+\) /;

function route(stream: RoutedStream, print: (text: string) => void): void {
  if (stream[ORIGINAL_WRITE] !== undefined) return;
  const original = stream.write;
  stream[ORIGINAL_WRITE] = original;
  stream.write = function routedWrite(
    chunk: string | Uint8Array,
    encoding?: BufferEncoding | ((err?: Error | null) => void),
    callback?: (err?: Error | null) => void,
  ): boolean {
    const text = typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString(typeof encoding === 'string' ? encoding : 'utf8');
    if (routing || NODE_WARNING.test(text)) return original.call(stream, chunk, encoding as BufferEncoding, callback);
    routing = true;
    try {
      // console adds the newline back.
      print(text.endsWith('\n') ? text.slice(0, -1) : text);
    } finally {
      routing = false;
    }
    const done = typeof encoding === 'function' ? encoding : callback;
    if (done !== undefined) process.nextTick(done);
    return true;
  } as Write;
}

route(process.stdout, (text) => console.log(text));
route(process.stderr, (text) => console.error(text));

/**
 * Writes `text` to the terminal's stderr at once, past vitest's capture: for a note to the person
 * running the tests (a first-use install that takes a while), not for what a test or the code under
 * test logs.
 */
export function writeToTerminal(text: string): void {
  const stderr: RoutedStream = process.stderr;
  (stderr[ORIGINAL_WRITE] ?? stderr.write).call(stderr, text);
}
