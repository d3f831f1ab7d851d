import { Api, ApiFailure, type Attempt, type JobCounts, type JobView, type ListFilters, type WebhookView } from './api.js';
import { computePageTotals, renderAttemptsChart, renderTotals } from './chart.js';
import { byId, h, put, shortTime } from './dom.js';
import { renderJobDetail } from './job-detail.js';
import { renderJobTable, renderPager } from './job-table.js';
import { forgetKey, readKey, saveKey } from './key-store.js';
import { readSubmission, wireSubmitForm } from './submit-form.js';

/** How often the page asks for changes. Polling: `EventSource` cannot send the `Authorization` header. */
const POLL_MS = 1000;
/** Jobs a page of the list shows. */
const LIST_LIMIT = 50;

interface State {
  api: Api | null;
  filters: ListFilters;
  jobs: JobView[];
  /** The organization's jobs in all (`GET …/counts`), null until read. */
  counts: JobCounts | null;
  /** Where the page shown starts: a list's `next_cursor`; undefined for the newest page. */
  cursor: string | undefined;
  /** The cursors of the newer pages, newest first: "newer" goes back through them. */
  newer: (string | undefined)[];
  /** The page's `next_cursor`: where "older" goes; null on the oldest page. */
  nextCursor: string | null;
  /** Whether `jobs` holds the page shown (false from a page turn until its list is read). */
  loaded: boolean;
  /** Bumped when the page or the filters change: a read started before answers for a list no longer shown. */
  view: number;
  /** Each job's attempts, with the job state they were read at: read again only when it changes. */
  attempts: Map<string, { seen: string; attempts: Attempt[] }>;
  webhooks: Map<string, WebhookView>;
  selected: string | null;
  message: string;
}

const state: State = {
  api: null,
  filters: {},
  jobs: [],
  counts: null,
  cursor: undefined,
  newer: [],
  nextCursor: null,
  view: 0,
  loaded: false,
  attempts: new Map(),
  webhooks: new Map(),
  selected: null,
  message: '',
};
let timer: ReturnType<typeof setTimeout> | undefined;
let refreshing: Promise<void> | undefined;

const seenOf = (job: JobView): string => `${job.status}|${job.webhook?.delivery ?? ''}|${job.webhook?.round ?? ''}`;

function setStatus(text: string, isError = false): void {
  const el = byId('live-status');
  el.textContent = text;
  el.classList.toggle('error', isError);
}

function render(): void {
  const attemptsOf = (jobId: string): Attempt[] | undefined => state.attempts.get(jobId)?.attempts;
  put(byId('totals'), renderTotals(state.counts, computePageTotals(state.jobs, attemptsOf)));
  put(byId('chart'), renderAttemptsChart(state.jobs.flatMap((j) => attemptsOf(j.job_id) ?? [])));
  const pager = renderPager(
    {
      number: state.newer.length + 1,
      shown: state.jobs.length,
      total: filteredTotal(),
      hasNewer: state.newer.length > 0,
      hasOlder: state.nextCursor !== null,
    },
    () => turnPage('newer'),
    () => turnPage('older'),
  );
  put(byId('jobs'), state.loaded ? renderJobTable(state.jobs, state.selected, openJob) : h('p', { class: 'muted' }, 'Loading…'), pager);
  const job = state.jobs.find((j) => j.job_id === state.selected);
  const detail = byId('detail');
  if (job === undefined) {
    put(detail);
    return;
  }
  const deliveries = state.attempts.get(job.job_id);
  put(
    detail,
    renderJobDetail(
      {
        job,
        deliveries:
          deliveries === undefined
            ? null
            : {
                job_id: job.job_id,
                delivery: job.webhook?.delivery ?? null,
                round: job.webhook?.round ?? 0,
                attempts: deliveries.attempts,
              },
        webhook: state.webhooks.get(job.job_id) ?? null,
      },
      () => void redeliver(job.job_id),
      state.message,
    ),
  );
}

/** Reads the list, then the attempts of the jobs that changed (and the open job's webhook), then draws. */
async function refresh(): Promise<void> {
  const api = state.api;
  if (api === null) return;
  const view = state.view;
  try {
    const [page, counts] = await Promise.all([api.list(state.filters, LIST_LIMIT, state.cursor), api.counts()]);
    // The page or the filters changed meanwhile: this answer is for a list no longer shown.
    if (view !== state.view) return;
    state.jobs = page.jobs;
    state.loaded = true;
    state.nextCursor = page.next_cursor;
    state.counts = counts;
    const changed = page.jobs.filter((j) => j.webhook !== undefined && state.attempts.get(j.job_id)?.seen !== seenOf(j));
    await Promise.all(
      changed.map(async (j) => {
        const deliveries = await api.deliveries(j.job_id);
        // A pending round is read again at every poll: its attempts come in while its state stays.
        state.attempts.set(j.job_id, { seen: j.webhook?.delivery === 'pending' ? 'pending' : seenOf(j), attempts: deliveries.attempts });
      }),
    );
    const open = page.jobs.find((j) => j.job_id === state.selected);
    if (open !== undefined && open.status !== 'processing' && !state.webhooks.has(open.job_id))
      state.webhooks.set(open.job_id, await api.webhook(open.job_id));
    setStatus(`live · updated ${shortTime(new Date().toISOString())}`);
  } catch (err) {
    if (err instanceof ApiFailure && err.status === 401) {
      signOut(`The key was refused: ${err.message}`);
      return;
    }
    setStatus(`cannot reach the service: ${err instanceof Error ? err.message : String(err)}`, true);
  }
  render();
}

/** Refreshes now (after the one running, if any), then every {@link POLL_MS}. */
function poll(): Promise<void> {
  clearTimeout(timer);
  refreshing = (refreshing ?? Promise.resolve()).then(refresh).finally(() => {
    if (state.api !== null) timer = setTimeout(() => void poll(), POLL_MS);
  });
  return refreshing;
}

/** How many jobs match the filters in all, when the counts tell (not for both filters at once). */
function filteredTotal(): number | null {
  const { counts, filters } = state;
  if (counts === null) return null;
  if (filters.status && filters.delivery) return null;
  if (filters.status) return counts.status[filters.status as keyof JobCounts['status']] ?? null;
  if (filters.delivery) return counts.delivery[filters.delivery as keyof JobCounts['delivery']] ?? null;
  return counts.jobs;
}

/** Shows the list from `cursor` on (the newest page when undefined) and reads it at once. */
function showList(cursor: string | undefined, newer: (string | undefined)[]): void {
  state.view++;
  state.cursor = cursor;
  state.newer = newer;
  state.nextCursor = null;
  state.jobs = [];
  state.loaded = false;
  render();
  void poll();
}

function turnPage(direction: 'newer' | 'older'): void {
  if (direction === 'older') {
    if (state.nextCursor !== null) showList(state.nextCursor, [state.cursor, ...state.newer]);
  } else if (state.newer.length > 0) {
    const [previous, ...rest] = state.newer;
    showList(previous, rest);
  }
}

function openJob(jobId: string): void {
  state.selected = jobId;
  state.message = '';
  render();
  void poll();
}

async function redeliver(jobId: string): Promise<void> {
  if (state.api === null) return;
  try {
    const { round } = await state.api.redeliver(jobId);
    state.message = `redelivery round ${round} started`;
  } catch (err) {
    state.message = err instanceof Error ? err.message : String(err);
  }
  render();
  await poll();
}

function signIn(api: Api): void {
  state.api = api;
  byId('signed-out').hidden = true;
  byId('signed-in').hidden = false;
  void poll();
}

function signOut(reason: string): void {
  forgetKey();
  clearTimeout(timer);
  Object.assign(state, {
    api: null,
    jobs: [],
    loaded: false,
    counts: null,
    cursor: undefined,
    newer: [],
    nextCursor: null,
    selected: null,
    message: '',
  });
  state.view++;
  state.attempts.clear();
  state.webhooks.clear();
  byId('signed-out').hidden = false;
  byId('signed-in').hidden = true;
  byId('key-message').textContent = reason;
}

function wire(): void {
  byId<HTMLFormElement>('key-form').addEventListener('submit', (event) => {
    event.preventDefault();
    const input = byId<HTMLInputElement>('api-key');
    const key = input.value.trim();
    if (key === '') return;
    const api = new Api(key);
    // Checked with one list call before it is kept: a wrong key says so at once.
    api.list({}, 1).then(
      () => {
        saveKey(key);
        input.value = '';
        byId('key-message').textContent = '';
        signIn(api);
      },
      (err: unknown) => {
        byId('key-message').textContent =
          err instanceof ApiFailure && err.status === 401 ? `The key was refused: ${err.message}` : `Cannot check the key: ${String(err)}`;
      },
    );
  });
  byId('sign-out').addEventListener('click', () => signOut('Key forgotten.'));
  byId<HTMLFormElement>('filters').addEventListener('change', (event) => {
    const form = event.currentTarget as HTMLFormElement;
    const data = new FormData(form);
    state.filters = { status: String(data.get('status') ?? ''), delivery: String(data.get('delivery') ?? '') };
    // Cursors belong to one filtered list: a new filter starts from the newest page.
    showList(undefined, []);
  });
  wireSubmitForm(document.body.dataset['receiver']);
  byId<HTMLFormElement>('submit-form').addEventListener('submit', (event) => {
    event.preventDefault();
    if (state.api === null) return;
    const out = byId('submit-message');
    state.api.submit(readSubmission(event.currentTarget as HTMLFormElement)).then(
      (job) => {
        out.textContent = `submitted ${job.job_id}`;
        state.selected = job.job_id;
        // The new job is the newest: shown on the first page.
        if (state.cursor === undefined) void poll();
        else showList(undefined, []);
      },
      (err: unknown) => {
        out.textContent = `refused: ${err instanceof Error ? err.message : String(err)}`;
      },
    );
  });
}

wire();
const saved = readKey();
if (saved !== null) signIn(new Api(saved));
