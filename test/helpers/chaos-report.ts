// The figures of a chaos run and their table: what a user would check after a night of faults.

/** How often each job was handled (from the receivers' `job handled` lines). */
export interface HandledTally {
  /** Submitted jobs handled exactly once. */
  once: number;
  /** Submitted jobs handled two or more times (must be 0). */
  twice: number;
  /** Submitted jobs never handled. */
  never: string[];
  /** Handled job ids that were never submitted (must be 0). */
  unknown: string[];
  /** Job ids handled more than once, with their count. */
  repeated: Array<{ jobId: string; times: number }>;
}

/** Counts, per submitted job, how many `job handled` lines named it. */
export function tallyHandled(submitted: readonly string[], handled: ReadonlyMap<string, number>): HandledTally {
  const tally: HandledTally = { once: 0, twice: 0, never: [], unknown: [], repeated: [] };
  const known = new Set(submitted);
  for (const jobId of submitted) {
    const times = handled.get(jobId) ?? 0;
    if (times === 0) tally.never.push(jobId);
    else if (times === 1) tally.once++;
    else {
      tally.twice++;
      tally.repeated.push({ jobId, times });
    }
  }
  for (const jobId of handled.keys()) if (!known.has(jobId)) tally.unknown.push(jobId);
  return tally;
}

/** A two-column table, labels left, values right-aligned. */
export function formatTable(title: string, rows: ReadonlyArray<readonly [string, string | number]>): string {
  const labelWidth = Math.max(...rows.map(([label]) => label.length));
  const valueWidth = Math.max(...rows.map(([, value]) => String(value).length));
  const rule = '-'.repeat(labelWidth + valueWidth + 3);
  const lines = rows.map(([label, value]) => `${label.padEnd(labelWidth)} | ${String(value).padStart(valueWidth)}`);
  return [title, rule, ...lines, rule].join('\n');
}

/** Runs `work` over `items` with at most `concurrency` at once; results in input order. */
export async function mapConcurrent<T, R>(
  items: readonly T[],
  concurrency: number,
  work: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const index = next++;
      results[index] = await work(items[index]!, index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
  return results;
}
