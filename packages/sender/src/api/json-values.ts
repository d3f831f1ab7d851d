import type { LosslessJsonValue } from '@jobhook/core';
import { RawJson } from '@jobhook/core/json';

/** A JSON object as the request parser builds it (floats kept as {@link RawJson}). */
export type LosslessObject = { [key: string]: LosslessJsonValue };

/** True for a JSON object (not an array, not null, not a float kept as RawJson). */
export function isJsonObject(value: unknown): value is LosslessObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof RawJson);
}

/** How a value reads in an error message: `a string`, `an array`, `null`, `a number`, ... */
export function describeJson(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (value instanceof RawJson || typeof value === 'bigint') return `a number (${value instanceof RawJson ? value.text : String(value)})`;
  if (typeof value === 'object') return 'an object';
  if (typeof value === 'string') return 'a string';
  if (typeof value === 'number') return `a number (${value})`;
  return `a ${typeof value}`;
}
