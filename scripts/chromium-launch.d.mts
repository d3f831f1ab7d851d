import type { LaunchOptions } from 'playwright-core';

/** Options for `chromium.launch`: Debian's Chromium, headless, no sandbox, no background traffic. */
export declare const CHROMIUM_LAUNCH: Readonly<LaunchOptions & { executablePath: string }>;
