// The hand-written verification users compare jobhook with (the service's Node docs' recipe):
// JSON.parse, keys sorted by Object.keys(o).sort() at every level, JSON.stringify(v, null, 2).
// Not exact (1.0 prints 1, big integers round), no dedupe: the baseline of the verify-path and HTTP groups.

/** `value` rebuilt with each object's keys in `Object.keys(o).sort()` order. */
function sortKeysDeep(value) {
  if (Array.isArray(value)) return value.map(sortKeysDeep);
  if (value === null || typeof value !== 'object') return value;
  const out = {};
  for (const key of Object.keys(value).sort()) out[key] = sortKeysDeep(value[key]);
  return out;
}

/** The canonical text the naive recipe hashes, from the body bytes. */
export function naiveCanonical(body) {
  return JSON.stringify(sortKeysDeep(JSON.parse(body.toString('utf8'))), null, 2);
}
