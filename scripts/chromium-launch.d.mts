import type { LaunchOptions } from 'playwright-core';

/** The environment variable that points the tests and scripts at another Chromium binary instead. */
export declare const CHROMIUM_ENV: 'JOBHOOK_CHROMIUM';

/** Flags beside `headless: true`: no sandbox, no GPU, no background traffic. */
export declare const CHROMIUM_ARGS: readonly string[];

/** `$JOBHOOK_CHROMIUM` when set, else @sparticuz/chromium's binary, decompressed on first use. */
export declare function chromiumExecutable(env?: NodeJS.ProcessEnv): Promise<string>;

/** Options for `chromium.launch`: {@link chromiumExecutable}, headless, {@link CHROMIUM_ARGS}. */
export declare function chromiumLaunchOptions(env?: NodeJS.ProcessEnv): Promise<Readonly<LaunchOptions & { executablePath: string }>>;
