// The `availability` group's figures for one run, from the genuine jobs' delivery logs
// (GET …/{job_id}/deliveries, oldest attempt first), the receiver's handled job ids and RSS, and
// the attacker's counts.
/** Goals of issue 28, per run. */
export const GOALS = { firstAttemptShare: 0.95, lostJobs: 0, rssDeltaMB: 300 };
const MB = 1_000_000;

/** An attempt's answer: its HTTP status, else its error code (`timeout`, `ECONNRESET`, …). */
function answerOf(attempt) {
  if (attempt === undefined) return 'none';
  return attempt.status_code !== null && attempt.status_code !== undefined ? String(attempt.status_code) : (attempt.error ?? 'no answer');
}

function is2xx(attempt) {
  return attempt !== undefined && attempt.status_code >= 200 && attempt.status_code < 300;
}

function bump(counts, key) {
  counts[key] = (counts[key] ?? 0) + 1;
}

/**
 * One run's result: `{ adapter, attack, genuine, rss, attacker, captured, goals, jobs }`.
 * `submissions`: `[{ i, status, jobId? }]`; `logs[k]`: the delivery log of the k-th submission
 * with a job id (null when it could not be read).
 */
export function summarizeRun({
  load,
  adapter,
  attack,
  submissions,
  logs,
  receiverStats,
  baselineRss,
  attackerStats,
  captured,
  attackSeconds,
  drainSeconds,
}) {
  const handled = receiverStats.handled;
  const jobs = submissions.filter((s) => s.jobId !== undefined);
  const genuine = {
    submitted: jobs.length,
    submitFailures: submissions.length - jobs.length,
    firstAttempt2xx: 0,
    firstAttemptShare: 0,
    firstStatuses: {},
    allStatuses: {},
    attempts: 0,
    deliveredAtAttempt: {},
    delivered: 0,
    failed: 0,
    rejected: 0,
    pending: 0,
    unreadLogs: 0,
    handledByReceiver: 0,
    handlerRuns: 0,
    lost: 0,
    unresolved: 0,
  };
  const perJob = jobs.map((s, k) => {
    const log = logs[k];
    const runs = handled[s.jobId] ?? 0;
    if (runs > 0) genuine.handledByReceiver++;
    genuine.handlerRuns += runs;
    if (log === null) {
      genuine.unreadLogs++;
      return { i: s.i, jobId: s.jobId, delivery: 'unread', handlerRuns: runs };
    }
    const round = Math.min(...log.attempts.map((a) => a.round));
    const first = log.attempts.find((a) => a.round === round);
    if (is2xx(first)) genuine.firstAttempt2xx++;
    bump(genuine.firstStatuses, answerOf(first));
    for (const a of log.attempts) bump(genuine.allStatuses, answerOf(a));
    genuine.attempts += log.attempts.length;
    const deliveredAt = log.attempts.findIndex(is2xx);
    if (deliveredAt >= 0) bump(genuine.deliveredAtAttempt, String(deliveredAt + 1));
    if (log.delivery === 'delivered') genuine.delivered++;
    else if (log.delivery === 'failed') genuine.failed++;
    else if (log.delivery === 'rejected') genuine.rejected++;
    else genuine.pending++;
    if (runs === 0 && (log.delivery === 'failed' || log.delivery === 'rejected')) genuine.lost++;
    if (runs === 0 && log.delivery === 'pending') genuine.unresolved++;
    return {
      i: s.i,
      jobId: s.jobId,
      delivery: log.delivery,
      handlerRuns: runs,
      attempts: log.attempts.map((a) => ({ at: a.started_at, ms: a.duration_ms, answer: answerOf(a), outcome: a.outcome })),
    };
  });
  // A log that could not be read and no handler run: counted as unresolved, never as delivered.
  genuine.unresolved += perJob.filter((j) => j.delivery === 'unread' && j.handlerRuns === 0).length;
  genuine.firstAttemptShare = genuine.submitted === 0 ? 0 : genuine.firstAttempt2xx / genuine.submitted;

  const rss = {
    baselineMB: baselineRss / MB,
    peakMB: receiverStats.rssPeak / MB,
    deltaMB: (receiverStats.rssPeak - baselineRss) / MB,
    endMB: receiverStats.rssNow / MB,
  };
  const missed = [];
  if (genuine.firstAttemptShare < GOALS.firstAttemptShare) missed.push('1st 2xx');
  if (genuine.lost + genuine.unresolved > GOALS.lostJobs) missed.push('lost');
  if (!(rss.deltaMB <= GOALS.rssDeltaMB)) missed.push('RSS');
  if (receiverStats.exited !== undefined) missed.push(`receiver exited (${receiverStats.exited})`);
  if (genuine.submitted === 0) missed.push('no job');
  return {
    adapter,
    attack,
    load,
    attackSeconds,
    drainSeconds,
    genuine,
    rss,
    attacker: attackerStats,
    captured,
    receiverStats: receiverStats.receiverStats,
    goals: { met: missed.length === 0, missed },
    jobs: perJob,
    submissionFailures: submissions.filter((s) => s.jobId === undefined),
  };
}
