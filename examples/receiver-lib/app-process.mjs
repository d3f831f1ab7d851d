// What every example server shares about its process: the JSON log line and the shutdown on
// SIGTERM / SIGINT. No dependencies, so any example (a receiver, the job app) can import it.

/** One JSON line on stdout: what the tests and the demo read. */
export const log = (fields) => console.log(JSON.stringify({ level: 'info', time: new Date().toISOString(), ...fields }));

/**
 * On the first SIGTERM or SIGINT: logs `shutting down`, runs `closeAll` (stop accepting, let requests
 * in progress finish, then close stores and pools), and exits 0; exits 1 if `closeAll` fails or takes
 * more than 10 s. Call it before listening: a signal right after the `listening` line must still shut
 * down cleanly.
 * @param {() => Promise<void>} closeAll
 * @example closeOnSignal(async () => { await app.close(); await store.close(); });
 */
export function closeOnSignal(closeAll) {
  let closing = false;
  const shutdown = async (signal) => {
    if (closing) return;
    closing = true;
    log({ msg: 'shutting down', signal });
    setTimeout(() => process.exit(1), 10_000).unref();
    try {
      await closeAll();
      process.exit(0);
    } catch (err) {
      log({ level: 'error', msg: 'shutdown failed', err: err instanceof Error ? err.message : String(err) });
      process.exit(1);
    }
  };
  process.on('SIGTERM', shutdown);
  process.on('SIGINT', shutdown);
}
