// The main entry is the receiver's front door: what a receiver author needs, nothing for the other
// audiences (signing, exact JSON, canonical tooling, diagnosis), which have entries of their own.
// This keeps it from growing back one export at a time.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import * as main from '../src/index.js';
import * as canonical from '../src/canonical/index.js';
import * as diagnosis from '../src/diagnosis/index.js';
import * as json from '../src/json/index.js';
import * as sign from '../src/sign/index.js';

const MAX_MAIN_RUNTIME_NAMES = 15;

describe("@jobhook/core's entries", () => {
  it(`the main entry has at most ${MAX_MAIN_RUNTIME_NAMES} runtime names, constants included`, () => {
    const names = Object.keys(main).sort();
    expect(names.length, names.join(', ')).toBeLessThanOrEqual(MAX_MAIN_RUNTIME_NAMES);
    // What a receiver author builds with, each reachable from the front door.
    expect(names).toEqual(
      expect.arrayContaining(['createReceiver', 'createFetchHandler', 'constructEvent', 'createVerifier', 'createMemoryStore']),
    );
  });

  it('no runtime name is exported by two entries: each has one home, by its audience', () => {
    const entries = { main, sign, json, canonical, diagnosis };
    const homes = new Map<string, string[]>();
    for (const [entry, module] of Object.entries(entries)) {
      for (const name of Object.keys(module)) homes.set(name, [...(homes.get(name) ?? []), entry]);
    }
    expect([...homes].filter(([, where]) => where.length > 1)).toEqual([]);
  });

  it('every entry the package exports resolves to a source file, with types and a build output', () => {
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
      exports: Record<string, string | { source: string; types: string; default: string }>;
    };
    for (const [subpath, target] of Object.entries(pkg.exports)) {
      if (typeof target === 'string') continue; // ./package.json
      const base = target.source.replace(/^\.\/src\//, '').replace(/\.ts$/, '');
      expect(target, subpath).toEqual({ source: `./src/${base}.ts`, types: `./dist/${base}.d.ts`, default: `./dist/${base}.js` });
      expect(() => readFileSync(new URL(`../${target.source}`, import.meta.url)), subpath).not.toThrow();
    }
  });

  it('RECEIVER_DEFAULTS is frozen, headerNames too', () => {
    expect(Object.isFrozen(main.RECEIVER_DEFAULTS)).toBe(true);
    expect(Object.isFrozen(main.RECEIVER_DEFAULTS.headerNames)).toBe(true);
  });
});
