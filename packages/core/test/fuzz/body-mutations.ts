/**
 * Mutations of a signed body for fuzzing `receiver.handle`: structural ones (keys reordered, strings
 * re-escaped, numbers re-spelled, members duplicated, injected or deleted, re-spaced) on the parsed
 * token tree, and byte-level ones (flips, insertions, deletions, truncation). Plain records of
 * numbers and strings, so a failure shrinks to a readable case; the canonical form judges them.
 */
import fc from 'fast-check';
import { TRICKY_KEY } from './arbitraries.js';
import {
  objectNodes,
  parseJsonTree,
  printJsonTree,
  prng,
  reescapeString,
  respellNumber,
  stringSlots,
  valueSlots,
  type JsonNode,
} from './json-text.js';

/** A change made on the body's JSON structure (parsed and re-printed). */
export type TreeOp =
  | { op: 'reorder'; target: number; seed: number }
  | { op: 'respell'; target: number; variant: number; k: number }
  | { op: 'reescape'; target: number; choices: number[] }
  | { op: 'duplicate'; target: number; member: number; before: boolean; replacement: string | null }
  | { op: 'inject'; target: number; at: number; key: string; valueText: string }
  | { op: 'delete'; target: number; member: number }
  | { op: 'replace'; target: number; raw: string }
  | { op: 'wrap'; target: number };

/** A change made on the body's bytes. */
export type ByteOp =
  | { op: 'flip'; pos: number; bit: number }
  | { op: 'insert'; pos: number; byte: number }
  | { op: 'remove'; pos: number; len: number }
  | { op: 'truncate'; keep: number }
  | { op: 'swap'; pos: number }
  | { op: 'bom' }
  | { op: 'append'; text: string }
  | { op: 'prepend'; text: string };

/** How the re-printed body is spaced. */
export type Spacing =
  | { kind: 'original' }
  | { kind: 'compact' }
  | { kind: 'json-whitespace'; seed: number }
  | { kind: 'foreign-whitespace'; seed: number; char: string };

/** One mutation: spacing, structural changes, then byte changes. */
export interface Mutation {
  spacing: Spacing;
  tree: TreeOp[];
  bytes: ByteOp[];
}

const REPLACEMENT_LITERALS = [
  'null',
  'true',
  'false',
  '0',
  '-0',
  '0.0',
  '-0.0',
  '1',
  '1.0',
  '1e2',
  '100',
  '100.0',
  '1e400',
  '-1e400',
  'NaN',
  'Infinity',
  '-Infinity',
  '9007199254740993',
  '""',
  '"null"',
  '{}',
  '[]',
  '[null]',
  '{"__proto__":{"admin":true}}',
];

const treeOpArb: fc.Arbitrary<TreeOp> = fc.oneof(
  { arbitrary: fc.record({ op: fc.constant('reorder' as const), target: fc.nat(), seed: fc.nat() }), weight: 4 },
  { arbitrary: fc.record({ op: fc.constant('respell' as const), target: fc.nat(), variant: fc.nat(), k: fc.nat() }), weight: 4 },
  {
    arbitrary: fc.record({
      op: fc.constant('reescape' as const),
      target: fc.nat(),
      choices: fc.array(fc.nat({ max: 5 }), { maxLength: 8 }),
    }),
    weight: 4,
  },
  {
    arbitrary: fc.record({
      op: fc.constant('duplicate' as const),
      target: fc.nat(),
      member: fc.nat(),
      before: fc.boolean(),
      replacement: fc.option(fc.constantFrom(...REPLACEMENT_LITERALS), { nil: null }),
    }),
    weight: 2,
  },
  {
    arbitrary: fc.record({
      op: fc.constant('inject' as const),
      target: fc.nat(),
      at: fc.nat(),
      key: fc.oneof(TRICKY_KEY, fc.string({ maxLength: 6 })),
      valueText: fc.oneof(fc.constantFrom(...REPLACEMENT_LITERALS), fc.json({ maxDepth: 2 })),
    }),
    weight: 2,
  },
  { arbitrary: fc.record({ op: fc.constant('delete' as const), target: fc.nat(), member: fc.nat() }), weight: 1 },
  {
    arbitrary: fc.record({ op: fc.constant('replace' as const), target: fc.nat(), raw: fc.constantFrom(...REPLACEMENT_LITERALS) }),
    weight: 2,
  },
  { arbitrary: fc.record({ op: fc.constant('wrap' as const), target: fc.nat() }), weight: 1 },
);

const byteOpArb: fc.Arbitrary<ByteOp> = fc.oneof(
  { arbitrary: fc.record({ op: fc.constant('flip' as const), pos: fc.nat(), bit: fc.nat({ max: 7 }) }), weight: 4 },
  { arbitrary: fc.record({ op: fc.constant('insert' as const), pos: fc.nat(), byte: fc.nat({ max: 255 }) }), weight: 3 },
  { arbitrary: fc.record({ op: fc.constant('remove' as const), pos: fc.nat(), len: fc.integer({ min: 1, max: 16 }) }), weight: 3 },
  { arbitrary: fc.record({ op: fc.constant('truncate' as const), keep: fc.nat() }), weight: 2 },
  { arbitrary: fc.record({ op: fc.constant('swap' as const), pos: fc.nat() }), weight: 1 },
  { arbitrary: fc.constant({ op: 'bom' as const }), weight: 1 },
  {
    arbitrary: fc.record({
      op: fc.constant('append' as const),
      text: fc.constantFrom(' ', '\n', '\r\n', '\t', '\u00a0', '\u0000', 'x', ',', '}', '{}'),
    }),
    weight: 2,
  },
  {
    arbitrary: fc.record({ op: fc.constant('prepend' as const), text: fc.constantFrom(' ', '\n', '\t', '\u00a0', '\ufeff', '\f', '[') }),
    weight: 1,
  },
);

const spacingArb: fc.Arbitrary<Spacing> = fc.oneof(
  { arbitrary: fc.constant<Spacing>({ kind: 'original' }), weight: 4 },
  { arbitrary: fc.constant<Spacing>({ kind: 'compact' }), weight: 1 },
  { arbitrary: fc.nat().map((seed): Spacing => ({ kind: 'json-whitespace', seed })), weight: 3 },
  {
    arbitrary: fc
      .tuple(fc.nat(), fc.constantFrom('\u00a0', '\f', '\v', '\u2028', '\u3000', '\u0085'))
      .map(([seed, char]): Spacing => ({ kind: 'foreign-whitespace', seed, char })),
    weight: 1,
  },
);

/** Structural changes meant to keep the canonical form (the oracle still decides: an int respelled as a float does not). */
const keepingTreeOpArb: fc.Arbitrary<TreeOp> = fc.oneof(
  { arbitrary: fc.record({ op: fc.constant('reorder' as const), target: fc.nat(), seed: fc.nat() }), weight: 3 },
  {
    arbitrary: fc.record({
      op: fc.constant('reescape' as const),
      target: fc.nat(),
      choices: fc.array(fc.nat({ max: 3 }), { minLength: 1, maxLength: 8 }),
    }),
    weight: 3,
  },
  { arbitrary: fc.record({ op: fc.constant('respell' as const), target: fc.nat(), variant: fc.nat({ max: 5 }), k: fc.nat() }), weight: 2 },
  {
    arbitrary: fc.record({
      op: fc.constant('duplicate' as const),
      target: fc.nat(),
      member: fc.nat(),
      before: fc.constant(true),
      replacement: fc.option(fc.constantFrom(...REPLACEMENT_LITERALS), { nil: null }),
    }),
    weight: 1,
  },
);

/**
 * Mutations of a signed body: untouched, changes meant to keep the canonical form (re-spaced,
 * keys reordered, strings re-escaped, numbers re-spelled, an earlier duplicate key), and changes of
 * values and bytes.
 */
export const mutationArb: fc.Arbitrary<Mutation> = fc.oneof(
  { arbitrary: fc.constant<Mutation>({ spacing: { kind: 'original' }, tree: [], bytes: [] }), weight: 1 },
  {
    arbitrary: fc.record({
      spacing: fc.oneof(
        spacingArb.filter((s) => s.kind !== 'foreign-whitespace'),
        fc.constant<Spacing>({ kind: 'original' }),
      ),
      tree: fc.array(keepingTreeOpArb, { minLength: 1, maxLength: 4 }),
      bytes: fc.constant<ByteOp[]>([]),
    }),
    weight: 4,
  },
  {
    arbitrary: fc.record({
      spacing: spacingArb,
      tree: fc.array(treeOpArb, { minLength: 1, maxLength: 3 }),
      bytes: fc.constant<ByteOp[]>([]),
    }),
    weight: 3,
  },
  {
    arbitrary: fc.record({
      spacing: spacingArb,
      tree: fc.array(treeOpArb, { maxLength: 2 }),
      bytes: fc.array(byteOpArb, { minLength: 1, maxLength: 3 }),
    }),
    weight: 2,
  },
);

function shuffle<T>(items: T[], seed: number): void {
  const next = prng(seed);
  for (let n = items.length - 1; n > 0; n--) {
    const m = Math.floor(next() * (n + 1));
    [items[n], items[m]] = [items[m]!, items[n]!];
  }
}

function applyTreeOp(root: { node: JsonNode }, op: TreeOp): void {
  const pick = <T>(list: readonly T[], n: number): T | undefined => (list.length === 0 ? undefined : list[n % list.length]);
  switch (op.op) {
    case 'reorder': {
      const obj = pick(objectNodes(root.node), op.target);
      if (obj !== undefined) shuffle(obj.members, op.seed);
      return;
    }
    case 'respell': {
      const numbers = valueSlots(root).filter((s) => {
        const n = s.get();
        return n.kind === 'literal' && /^-?[\dIN]/.test(n.raw);
      });
      const slot = pick(numbers, op.target);
      const node = slot?.get();
      if (slot !== undefined && node?.kind === 'literal') slot.set({ kind: 'literal', raw: respellNumber(node.raw, op.variant, op.k) });
      return;
    }
    case 'reescape': {
      const slot = pick(stringSlots(root.node), op.target);
      if (slot !== undefined) slot.set(reescapeString(slot.get(), op.choices));
      return;
    }
    case 'duplicate': {
      const obj = pick(objectNodes(root.node), op.target);
      const idx = obj === undefined || obj.members.length === 0 ? -1 : op.member % obj.members.length;
      if (obj === undefined || idx < 0) return;
      const member = obj.members[idx]!;
      const value: JsonNode = op.replacement === null ? structuredClone(member.value) : { kind: 'literal', raw: op.replacement };
      obj.members.splice(op.before ? idx : idx + 1, 0, { key: member.key, value });
      return;
    }
    case 'inject': {
      const obj = pick(objectNodes(root.node), op.target);
      if (obj !== undefined) {
        obj.members.splice(op.at % (obj.members.length + 1), 0, {
          key: JSON.stringify(op.key),
          value: { kind: 'literal', raw: op.valueText },
        });
      }
      return;
    }
    case 'delete': {
      const obj = pick(objectNodes(root.node), op.target);
      if (obj !== undefined && obj.members.length > 0) obj.members.splice(op.member % obj.members.length, 1);
      return;
    }
    case 'replace': {
      pick(valueSlots(root), op.target)?.set({ kind: 'literal', raw: op.raw });
      return;
    }
    case 'wrap': {
      const slot = pick(valueSlots(root), op.target);
      if (slot !== undefined) slot.set({ kind: 'array', items: [slot.get()] });
      return;
    }
  }
}

function spacingGap(spacing: Spacing): (slot: number) => string {
  if (spacing.kind === 'compact' || spacing.kind === 'original') return () => '';
  const next = prng(spacing.seed);
  const pool = [' ', '  ', '\n', '\t', '\r\n', '\n  ', ''];
  if (spacing.kind === 'json-whitespace') return () => pool[Math.floor(next() * pool.length)]!;
  // One foreign character somewhere early, JSON whitespace elsewhere.
  const at = Math.floor(next() * 6);
  return (slot) => (slot === at ? spacing.char : pool[Math.floor(next() * pool.length)]!);
}

function applyByteOp(body: Buffer, op: ByteOp): Buffer {
  const at = (pos: number): number => (body.length === 0 ? 0 : pos % (body.length + 1));
  switch (op.op) {
    case 'flip': {
      if (body.length === 0) return body;
      const out = Buffer.from(body);
      const pos = op.pos % body.length;
      out[pos] = out[pos]! ^ (1 << op.bit);
      return out;
    }
    case 'insert':
      return Buffer.concat([body.subarray(0, at(op.pos)), Buffer.from([op.byte]), body.subarray(at(op.pos))]);
    case 'remove':
      return Buffer.concat([body.subarray(0, at(op.pos)), body.subarray(at(op.pos) + op.len)]);
    case 'truncate':
      return body.subarray(0, at(op.keep));
    case 'swap': {
      if (body.length < 2) return body;
      const out = Buffer.from(body);
      const pos = op.pos % (body.length - 1);
      [out[pos], out[pos + 1]] = [out[pos + 1]!, out[pos]!];
      return out;
    }
    case 'bom':
      return Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), body]);
    case 'append':
      return Buffer.concat([body, Buffer.from(op.text, 'utf8')]);
    case 'prepend':
      return Buffer.concat([Buffer.from(op.text, 'utf8'), body]);
  }
}

/** Applies a mutation to a (valid JSON) body. */
export function applyMutation(body: Buffer, mutation: Mutation): Buffer {
  let out = body;
  if (mutation.tree.length > 0 || mutation.spacing.kind !== 'original') {
    const root = { node: parseJsonTree(body.toString('utf8')) };
    for (const op of mutation.tree) applyTreeOp(root, op);
    out = Buffer.from(printJsonTree(root.node, spacingGap(mutation.spacing)), 'utf8');
  }
  for (const op of mutation.bytes) out = applyByteOp(out, op);
  return out;
}
