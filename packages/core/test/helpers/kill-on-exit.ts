// The last resort of every test helper that spawns processes (redis-server, example receivers, the
// sender): when this process exits without its afterAll having run (a crash, a killed worker), the
// children it still has are SIGKILLed, so no test leaves an orphan behind.
import type { ChildProcess } from 'node:child_process';

const alive = new Set<ChildProcess>();
let hookInstalled = false;

/** SIGKILLs `child` when this process exits while `child` still runs. */
export function killOnExit(child: ChildProcess): void {
  if (!hookInstalled) {
    hookInstalled = true;
    process.once('exit', () => {
      for (const c of alive) c.kill('SIGKILL');
    });
  }
  if (child.exitCode !== null || child.signalCode !== null) return;
  alive.add(child);
  child.once('exit', () => alive.delete(child));
}
