// The code in the READMEs and the guides is what users copy first, so it must compile against the
// packages as published (their built .d.ts), with the project's strict settings. Every ```ts and ```js
// block of the root README, of each package README and of each guide in docs/ is type-checked as its
// own module, as the file a user would paste it into: a ```js block as JavaScript (`.mjs`, or `.cjs`
// when it require()s: a CommonJS form), so TypeScript-only syntax (`process.env.X!`, type
// annotations) fails it; a ```ts block as TypeScript (`.mts`). The names a snippet leaves to the reader
// ("your code": saveResult, req, rawBody, …) and the runtimes' globals (Bun, Deno) are declared once in
// the prelude below; anything else a snippet uses must be imported or defined in the snippet itself.
// Needs the packages built (`npm test` runs `tsc -b` first).
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';
import { afterAll, describe, expect, test } from 'vitest';
import { REPO_ROOT } from '../helpers/chaos-cluster.js';

/** Ambient "your code" of the snippets. Kept small: a name missing here is a snippet to fix. */
const PRELUDE = `
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import type { AsyncJobCompletedEvent, JsonValue, SuccessEvent } from '@jobhook/core';
import type { Client } from '@jobhook/client';
declare global {
  function saveResult(jobId: string, output: JsonValue | undefined): Promise<void>;
  function markFailed(jobId: string, message: string): Promise<void>;
  function handleJob(event: AsyncJobCompletedEvent): Promise<void>;
  function save(jobId: string, output: JsonValue | undefined): Promise<void>;
  function onSuccess(event: SuccessEvent): Promise<void>;
  function reply(status: number, body: unknown): void;
  const req: IncomingMessage;
  const rawBody: Buffer;
  const rawBodyBytes: Buffer;
  const headers: IncomingHttpHeaders;
  const client: Client;
  const model: string;
  const input: { file: string };
  /** The parts of the runtimes' globals the guides use. */
  const Bun: {
    serve(options: {
      port?: number;
      fetch: (req: Request, server: { requestIP(req: Request): { address: string } | null }) => Response | Promise<Response>;
    }): unknown;
  };
  const Deno: {
    env: { get(name: string): string | undefined };
    serve(handler: (req: Request, info: { remoteAddr: { hostname: string } }) => Response | Promise<Response>): unknown;
  };
}
export {};
`;

interface Snippet {
  readme: string;
  line: number;
  lang: string;
  code: string;
}

/** The root README, each package's README and each guide in docs/. */
function readmes(): string[] {
  const packages = readdirSync(join(REPO_ROOT, 'packages')).map((name) => join(REPO_ROOT, 'packages', name, 'README.md'));
  const guides = readdirSync(join(REPO_ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => join(REPO_ROOT, 'docs', name));
  return [join(REPO_ROOT, 'README.md'), ...packages.filter((file) => readdirSync(join(file, '..')).includes('README.md')), ...guides];
}

function snippetsOf(file: string): Snippet[] {
  const text = readFileSync(file, 'utf8');
  const found: Snippet[] = [];
  for (const match of text.matchAll(/^```(ts|js)\n([\s\S]*?)^```$/gm)) {
    const line = text.slice(0, match.index).split('\n').length;
    found.push({ readme: relative(REPO_ROOT, file), line, lang: match[1]!, code: match[2]! });
  }
  return found;
}

const snippets = readmes().flatMap(snippetsOf);
/** Where snippet `i` is written: `.cjs` for a CommonJS form (it calls require), else `.mjs` for ```js and `.mts` for ```ts. */
function fileOf(i: number): string {
  const snippet = snippets[i]!;
  const ext = /\brequire\(/.test(snippet.code) ? 'cjs' : snippet.lang === 'js' ? 'mjs' : 'mts';
  return join(dir, `snippet-${i}.${ext}`);
}
// Inside the repository, so that `@jobhook/*`, express, koa and fastify resolve from node_modules.
const dir = join(REPO_ROOT, 'test/docs', `.snippets-${process.pid}`);

afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Type-checks every snippet in one program; returns the diagnostics per snippet file. */
function check(): Map<string, string[]> {
  mkdirSync(dir, { recursive: true });
  const files = snippets.map((s, i) => {
    const file = fileOf(i);
    writeFileSync(file, s.code);
    return file;
  });
  const prelude = join(dir, 'prelude.d.mts');
  writeFileSync(prelude, PRELUDE);
  const base = ts.readConfigFile(join(REPO_ROOT, 'tsconfig.base.json'), (p) => ts.sys.readFile(p));
  const { options } = ts.parseJsonConfigFileContent(base.config, ts.sys, REPO_ROOT);
  // Snippets are fragments, not modules of this repo: unused names are fine, nothing is emitted.
  const program = ts.createProgram([prelude, ...files], {
    ...options,
    allowJs: true,
    checkJs: true,
    noEmit: true,
    noUnusedLocals: false,
    declaration: false,
    declarationMap: false,
    sourceMap: false,
  });
  const byFile = new Map<string, string[]>(files.map((f) => [f, []]));
  for (const d of ts.getPreEmitDiagnostics(program)) {
    const message = ts.flattenDiagnosticMessageText(d.messageText, '\n');
    const where = d.file === undefined ? undefined : d.file.getLineAndCharacterOfPosition(d.start ?? 0);
    const list = d.file === undefined ? undefined : byFile.get(d.file.fileName);
    if (list !== undefined && where !== undefined) list.push(`line ${where.line + 1}: ${message}`);
    else byFile.set('(program)', [...(byFile.get('(program)') ?? []), `${d.file?.fileName ?? ''} ${message}`]);
  }
  return new Map([...byFile].map(([file, errors]) => [file, errors]));
}

describe('README code compiles against the packages (strict TypeScript)', () => {
  let results: Map<string, string[]> | undefined;
  const resultsOf = (): Map<string, string[]> => (results ??= check());

  test('the READMEs and the guides hold snippets to check', () => {
    expect(snippets.length).toBeGreaterThanOrEqual(10);
    expect(snippets.filter((s) => s.readme.startsWith('docs/')).length).toBeGreaterThanOrEqual(10);
    expect(resultsOf().get('(program)') ?? []).toEqual([]);
  });

  test.each(snippets.map((s, i) => [`${s.readme}:${s.line} (${s.lang})`, i] as const))('%s', (_name, i) => {
    expect(resultsOf().get(fileOf(i))).toEqual([]);
  });
});
