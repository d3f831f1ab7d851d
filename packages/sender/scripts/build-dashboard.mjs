#!/usr/bin/env node
// Builds the web page into dashboard-dist/: the TypeScript modules compiled one to one by tsc (the
// browser loads ES modules as they are: no bundler), then index.html, style.css and favicon.svg copied beside them.
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const pkg = join(dirname(fileURLToPath(import.meta.url)), '..');
const out = join(pkg, 'dashboard-dist');
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');

rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
execFileSync(process.execPath, [tsc, '-p', join(pkg, 'dashboard', 'tsconfig.json')], { stdio: 'inherit' });
for (const file of ['index.html', 'style.css', 'favicon.svg']) copyFileSync(join(pkg, 'dashboard', file), join(out, file));
