// The API key lives in this tab's session storage only: gone when the tab closes, never in the
// HTML, never sent anywhere but this origin's API.
const KEY = 'jobhook.apiKey';

/** The key this tab holds, or null. */
export function readKey(): string | null {
  return sessionStorage.getItem(KEY);
}

/** Keeps `key` for this tab. */
export function saveKey(key: string): void {
  sessionStorage.setItem(KEY, key);
}

/** Drops the tab's key. */
export function forgetKey(): void {
  sessionStorage.removeItem(KEY);
}
