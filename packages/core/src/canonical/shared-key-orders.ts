import type { ParsedBody } from './tape.js';

/**
 * The member order of each object of one parsed body under one sort rule, kept so that every
 * candidate form written with that rule sorts each object once: verification writes up to six
 * forms in code-point order (python, python-ascii and orjson, numbers as written and exact), and a
 * body of many unsorted keys would otherwise pay the sort in each.
 *
 * An entry is stored flat, `[n, k1, ..., kn]`: the tape indices of the `n` kept members' keys, in
 * output order. An object at tape index `i` owns entry slot `i / 3` (tape entries are 3 ints). Each
 * object's entry takes at most 1 + its member count ints, and its tape at least 3 + 6 per member,
 * so one int per tape entry holds every entry of the body.
 * @internal
 */
export class KeyOrderTable {
  /** Per tape entry: 1 + offset of the object's entry in {@link data}, 0 while not computed. */
  private slots: Int32Array | undefined;
  /** The entries, flat. Read by the serializers at the offset {@link find} returns. */
  data: Int32Array = EMPTY;
  private used = 0;

  constructor(private readonly tapeLength: number) {}

  /** Offset of the entry of the object at tape index `i` in {@link data} (its count first), or -1. */
  find(i: number): number {
    const slots = this.slots;
    if (slots === undefined) return -1;
    return slots[i / 3]! - 1;
  }

  /**
   * Records the object at tape index `i`: its kept members in output order, each as the tape index
   * of its key (the value follows at +3): `keys[order[m]]` for each `m` of `order`, or `keys` as
   * they are when no `order` is given.
   */
  store(i: number, keys: ArrayLike<number>, order?: ArrayLike<number>): void {
    if (this.slots === undefined) {
      const entries = Math.ceil(this.tapeLength / 3) + 1;
      this.slots = new Int32Array(entries);
      this.data = new Int32Array(entries);
    }
    let at = this.used;
    this.slots[i / 3] = at + 1;
    const data = this.data;
    const count = (order ?? keys).length;
    data[at++] = count;
    if (order === undefined) for (let m = 0; m < count; m++) data[at++] = keys[m]!;
    else for (let m = 0; m < count; m++) data[at++] = keys[order[m]!]!;
    this.used = at;
  }
}

const EMPTY = new Int32Array(0);

/**
 * The key orders of one parsed body, one table per sort rule, created empty and filled by the first
 * form written with each rule:
 * - `codePoint`: Python's `sort_keys=True` (code-point order, the last of equal keys kept), shared by
 *   every Python-family profile (python, python-ascii, orjson);
 * - `javascript`: the javascript profile's `Object.keys(o).sort()` (array-index keys first, then
 *   UTF-16 code-unit order; a duplicate keeps its first place and its last value; no `__proto__`).
 * @internal
 */
export interface SharedKeyOrders {
  readonly doc: ParsedBody;
  readonly codePoint: KeyOrderTable;
  readonly javascript: KeyOrderTable;
}

/** Empty key-order tables for `doc`; pass them to every form written of it. @internal */
export function createSharedKeyOrders(doc: ParsedBody): SharedKeyOrders {
  return { doc, codePoint: new KeyOrderTable(doc.tapeLength), javascript: new KeyOrderTable(doc.tapeLength) };
}

/** The table of `rule` when `orders` belong to `doc` (a table of another body means nothing). @internal */
export function ordersFor(
  orders: SharedKeyOrders | undefined,
  doc: ParsedBody,
  rule: 'codePoint' | 'javascript',
): KeyOrderTable | undefined {
  return orders !== undefined && orders.doc === doc ? orders[rule] : undefined;
}
