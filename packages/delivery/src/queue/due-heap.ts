/** One entry of a {@link DueHeap}: ordered by `dueAt`, then by insertion (`seq`) so equal due times stay FIFO. */
export interface DueEntry {
  dueAt: number;
  seq: number;
}

/**
 * A binary min-heap of timed entries. The memory queue keeps its delayed work here under ONE timer
 * armed for the earliest entry, instead of a timer (and a closure) per entry: 100,000 delayed
 * retries then cost 100,000 small objects in one array, and O(log n) per push/pop. @internal
 */
export class DueHeap<T extends DueEntry> {
  private readonly items: T[] = [];

  get size(): number {
    return this.items.length;
  }

  peek(): T | undefined {
    return this.items[0];
  }

  push(entry: T): void {
    const items = this.items;
    items.push(entry);
    let i = items.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      const p = items[parent] as T;
      if (!before(entry, p)) break;
      items[i] = p;
      i = parent;
    }
    items[i] = entry;
  }

  pop(): T | undefined {
    const items = this.items;
    const top = items[0];
    const last = items.pop();
    if (top === undefined || last === undefined || items.length === 0) return top;
    // Sift `last` down from the root.
    let i = 0;
    const n = items.length;
    for (;;) {
      const left = 2 * i + 1;
      if (left >= n) break;
      const right = left + 1;
      const l = items[left] as T;
      const r = items[right];
      const child = r !== undefined && before(r, l) ? right : left;
      const c = items[child] as T;
      if (!before(c, last)) break;
      items[i] = c;
      i = child;
    }
    items[i] = last;
    return top;
  }

  clear(): void {
    this.items.length = 0;
  }
}

function before(a: DueEntry, b: DueEntry): boolean {
  return a.dueAt < b.dueAt || (a.dueAt === b.dueAt && a.seq < b.seq);
}
