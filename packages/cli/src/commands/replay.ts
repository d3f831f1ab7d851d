import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { parseRecording, sendRecording, type Recording } from '@jobhook/core/diagnosis';
import { defineCommand, UsageError } from '../command.js';
import { describeError } from '../errors.js';
import { jsonLine, readFileArg, write, type CliIo } from '../io.js';
import { integerFlag, urlFlag } from './flag-values.js';

/** Recording files in a directory given as PATH (what `record` writes). */
const RECORDING_FILE = /^delivery-.+\.json$/;

/** `jobhook replay`: send recorded deliveries again, as they came. */
export const replayCommand = defineCommand({
  name: 'replay',
  summary: "Send recorded deliveries (a receiver's `record` files) to a URL again, byte for byte.",
  synopsis: ['replay PATH... --url URL [--timeout-ms MS]'],
  flags: [
    ['PATH', 'a recording file, or a directory of them (its delivery-*.json, oldest first); several allowed'],
    ['--url URL', 'where to send them (http:// or https://)'],
    ['--timeout-ms MS', 'time allowed for each answer (default 30000)'],
  ],
  notes: [
    'Sends each recording with its method, its kept headers (the signature among them) and its body bytes,\n' +
      'one after the other, and prints one JSON line per answer:\n' +
      '  {"file","status","code","jobId","duplicate"}\n' +
      'code is the error code of the answer, or ERR_NETWORK (status null) when no answer came.',
    'A receiver judges a replay like any delivery: older than its replay window (maxEventAgeMs) it answers\n' +
      '400 ERR_EVENT_TOO_OLD, and a job tagged for another URL 403. A replay target admits them with\n' +
      '`acceptLateEvent` and the recorded URL in its `recipientUrl` (see the core README, "Recording deliveries").',
    'Exit 0 when every answer is 2xx, 1 otherwise; 2 for a command-line mistake or a file that is not a recording.',
  ],
  options: {
    url: { type: 'string' },
    'timeout-ms': { type: 'string' },
  },
  maxPositionals: Number.POSITIVE_INFINITY,
  async execute(values, positionals, io: CliIo): Promise<number> {
    const cmd = replayCommand;
    if (values.url === undefined) throw new UsageError('--url URL is required', cmd);
    if (positionals.length === 0) throw new UsageError('give at least one recording file or directory', cmd);
    const url = urlFlag(cmd, '--url', values.url);
    const timeoutMs = integerFlag(cmd, '--timeout-ms', values['timeout-ms'], { min: 1, max: 3_600_000, fallback: 30_000 });
    // Every file is read and checked before the first is sent: a bad one stops the run with nothing sent.
    const recordings: Array<{ file: string; recording: Recording }> = [];
    for (const file of await recordingFiles(positionals)) {
      try {
        recordings.push({ file, recording: parseRecording((await readFileArg(file, 'recording')).toString('utf8'), 'jobhook replay') });
      } catch (err) {
        const { code, message } = describeError(err);
        await write(io.stderr, `jobhook replay: ${file}: ${code}: ${message}\n`);
        return 2;
      }
    }
    let allOk = true;
    for (const { file, recording } of recordings) {
      let line: object;
      try {
        const answer = await sendRecording(url, recording, { timeoutMs });
        line = {
          file,
          status: answer.status,
          code: answer.code ?? null,
          jobId: answer.jobId ?? recording.outcome.jobId ?? null,
          duplicate: answer.duplicate,
        };
        if (answer.status < 200 || answer.status > 299) allOk = false;
      } catch (err) {
        line = { file, status: null, code: 'ERR_NETWORK', jobId: recording.outcome.jobId ?? null, message: (err as Error).message };
        allOk = false;
      }
      await write(io.stdout, jsonLine(line));
    }
    return allOk ? 0 : 1;
  },
});

/** The files of the PATH arguments: a file as given, a directory's recording files sorted by name (by arrival). */
async function recordingFiles(paths: readonly string[]): Promise<string[]> {
  const files: string[] = [];
  for (const path of paths) {
    const isDir = await stat(path).then(
      (s) => s.isDirectory(),
      () => false,
    );
    if (!isDir) {
      files.push(path);
      continue;
    }
    const names = (await readdir(path)).filter((name) => RECORDING_FILE.test(name)).sort();
    files.push(...names.map((name) => join(path, name)));
  }
  return files;
}
