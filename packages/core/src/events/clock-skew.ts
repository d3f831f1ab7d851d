/** Default of `clockSkewMs`: 5 minutes, what NTP-synced hosts stay well within. */
export const DEFAULT_CLOCK_SKEW_MS = 5 * 60_000;
