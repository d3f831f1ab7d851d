// The API key lives in this tab's session storage only: gone when the tab closes, never in the
// HTML, never sent anywhere but this origin's API.
const KEY = 'jobhook.apiKey';

export function readKey(): string | null {
  return sessionStorage.getItem(KEY);
}

export function saveKey(key: string): void {
  sessionStorage.setItem(KEY, key);
}

export function forgetKey(): void {
  sessionStorage.removeItem(KEY);
}
