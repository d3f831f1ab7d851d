// The README, the guides and the package and example READMEs point at each other and at files of the
// repository; a page moved or a heading renamed must not leave a newcomer on a dead link. Every
// relative link of README.md, docs/*.md, packages/*/README.md and examples/*/README.md (inline
// `[text](target)` and images) must name an existing
// file or folder, and a `#fragment` into a Markdown file must name one of its headings, slugged as
// GitHub slugs them (lower case, punctuation dropped, spaces to hyphens, `-1`, `-2` for repeats).
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, test } from 'vitest';
import { REPO_ROOT } from '../helpers/chaos-cluster.js';

/** The Markdown files directly in `dir` (a folder of the repository). */
const markdownIn = (dir: string): string[] =>
  readdirSync(join(REPO_ROOT, dir))
    .filter((name) => name.endsWith('.md'))
    .map((name) => join(REPO_ROOT, dir, name));
/** The `README.md` of each folder in `dir`. */
const readmesUnder = (dir: string): string[] =>
  readdirSync(join(REPO_ROOT, dir))
    .map((name) => join(REPO_ROOT, dir, name, 'README.md'))
    .filter((file) => existsSync(file));
const pages = [join(REPO_ROOT, 'README.md'), ...markdownIn('docs'), ...readmesUnder('packages'), ...readmesUnder('examples')];

/** The text outside fenced code blocks. */
const unfenced = (text: string): string => text.replace(/^```[\s\S]*?^```$/gm, '');
/** The text outside fenced code blocks and inline code: links there are prose, not examples. */
const prose = (text: string): string => unfenced(text).replace(/`[^`\n]*`/g, '');

/** GitHub's anchors for the headings of a Markdown file (inline code in a heading keeps its text). */
function anchorsOf(file: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const [, heading] of unfenced(readFileSync(file, 'utf8')).matchAll(/^#{1,6}\s+(.+?)\s*#*$/gm)) {
    const base = heading!
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  }
  return anchors;
}

interface Link {
  page: string;
  target: string;
}

function linksOf(page: string): Link[] {
  const found: Link[] = [];
  for (const [, target] of prose(readFileSync(page, 'utf8')).matchAll(/!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target!)) continue; // http:, https:, mailto:
    found.push({ page, target: target! });
  }
  return found;
}

const links = pages.flatMap(linksOf);

describe('relative links of the READMEs and the guides resolve', () => {
  test('the pages hold links to check', () => {
    expect(pages.length).toBeGreaterThanOrEqual(8);
    expect(links.length).toBeGreaterThanOrEqual(50);
  });

  test.each(links.map((link) => [`${relative(REPO_ROOT, link.page)} → ${link.target}`, link] as const))('%s', (_name, link) => {
    const [path, fragment] = link.target.split('#') as [string, string | undefined];
    const file = path === '' ? link.page : resolve(dirname(link.page), decodeURIComponent(path));
    expect(existsSync(file), `${file} exists`).toBe(true);
    if (fragment !== undefined && fragment !== '' && statSync(file).isFile() && file.endsWith('.md')) {
      expect([...anchorsOf(file)], `a heading of ${relative(REPO_ROOT, file)} slugged ${fragment}`).toContain(fragment);
    }
  });
});
