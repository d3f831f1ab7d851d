/**
 * The known flag a mistyped one most likely meant: the one at the smallest edit distance, if that
 * distance is at most 2 (or a third of the name, for long names), or the only flag the given one is
 * a prefix of. `undefined` when nothing is that close: suggesting a far flag misleads more than it helps.
 */
export function closestFlag(given: string, known: readonly string[]): string | undefined {
  if (given === '') return undefined;
  const limit = Math.max(2, Math.floor(given.length / 3));
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const name of known) {
    const distance = editDistance(given, name);
    if (distance < bestDistance) {
      best = name;
      bestDistance = distance;
    }
  }
  if (best !== undefined && bestDistance <= limit) return best;
  const extending = known.filter((name) => name.startsWith(given));
  return extending.length === 1 ? extending[0] : undefined;
}

/** Levenshtein distance (insert, delete, substitute), two rows: flag names are short. */
function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitute = (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1);
      current.push(Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, substitute));
    }
    previous = current;
  }
  return previous[b.length] ?? 0;
}
