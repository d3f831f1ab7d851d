// The demo's output: one line per step, ✓ for a check that held, ✗ (with what was expected) for one
// that did not. Failed checks make the demo exit 1.

const color = process.stdout.isTTY === true && process.env.NO_COLOR === undefined;
const paint = (code, text) => (color ? `\x1b[${code}m${text}\x1b[0m` : text);

export function createReport() {
  const failures = [];
  let checks = 0;
  let section = '';
  return {
    failures,
    get checks() {
      return checks;
    },
    /** A numbered section title. */
    title(number, title) {
      section = `${number}. ${title}`;
      console.log(`\n${paint('1', section)}`);
    },
    /** A check: ✓ text, or ✗ text plus what was wrong. Returns `ok`. */
    check(ok, text, wrong = '') {
      checks++;
      if (ok) {
        console.log(`   ${paint('32', '✓')} ${text}`);
      } else {
        failures.push(`${section}: ${text}${wrong === '' ? '' : ` (${wrong})`}`);
        console.log(`   ${paint('31', '✗')} ${text}${wrong === '' ? '' : `\n     ${paint('31', wrong)}`}`);
      }
      return ok;
    },
    /** A step that went as it should, not counted as a check (a failure there throws). */
    done(text) {
      console.log(`   ${paint('32', '✓')} ${text}`);
    },
    /** A line that is not a check. */
    info(text) {
      console.log(`     ${paint('2', text)}`);
    },
    /** An error that stopped the demo: its message, and where it was thrown. */
    error(err) {
      checks++;
      const message = err instanceof Error ? `${err.name === 'Error' ? '' : `${err.name}: `}${err.message}` : String(err);
      failures.push(`${section}: ${message}`);
      console.log(`   ${paint('31', '✗')} ${paint('31', `stopped: ${message}`)}`);
      const where = err instanceof Error ? err.stack?.split('\n').find((line) => line.trim().startsWith('at ')) : undefined;
      if (where !== undefined) console.log(`     ${paint('2', where.trim())}`);
    },
  };
}

/** First 8 characters of a job id, enough to tell jobs apart on screen. */
export const short = (jobId) => `${String(jobId).slice(0, 8)}…`;
