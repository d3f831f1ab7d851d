// Group `attack`: what a hostile body costs receiver.handle() (default options: 1 MiB body limit,
// canonical limit 16 × that, memory store; RSA-2048). Six ~1 MB shapes built to cost a parser or a
// canonicalizer work (as in packages/core/test/receiver/hostile-bodies.test.ts), and a 1 KB valid
// delivery for scale, each sent with
//   (a) a made-up signature: no key decodes it, so the body should never be parsed;
//   (b) a real signature over another digest (anyone who received one delivery has one): it decodes
//       under the key, so the body is parsed (bounded) and its canonical forms hashed, then refused;
//   (c) the real signature of this body, where its canonical form is under the limit: handled.
// Then every hostile shape (those six, deep float arrays, crafted keys) with (b) again, each round
// against JSON.parse of the same text: the ratio table.
// No compare(): each call is timed alone with performance.now() (1 warm-up, then RUNS timed), and
// the process RSS is followed over the whole group.
import { constants, createHash, generateKeyPair, sign } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { promisify } from 'node:util';
import { createReceiver, isJobhookError } from '@jobhook/core';
import { canonicalize } from '@jobhook/core/canonical';
import { seededRandom } from './payloads.mjs';
import { num, table, logResult } from './report.mjs';

export const description =
  'hostile ~1 MB bodies through receiver.handle() (default options, RSA-2048): made-up, decoding and real signatures; time per call and RSS';

const KEY_BITS = 2048;
const RUNS = 5;
const MB = 1_000_000;
const MiB = 2 ** 20;
/** The receiver's defaults, restated to decide case (c) and the expected answers. */
const MAX_BODY = MiB;
const MAX_CANONICAL = 16 * MAX_BODY;
/** Budgets (informational targets). */
export const BUDGET_MADE_UP_MS = 50;
export const BUDGET_DECODING_MS = 1000;
export const BUDGET_RSS_MB = 300;

const JOB_ID = '45ef7cef-bf17-4f78-a427-906ce7e8711c';
// An hour ago, as a fresh delivery: a fixed date would fall out of the receivers' replay window
// (a week) and the signed cases would measure the refusal instead of the pipeline.
const FINISHED = new Date(Math.floor(Date.now() / 3_600_000) * 3_600_000 - 3_600_000);
const CREATED = new Date(FINISHED.getTime() - 35_000);
const ENVELOPE =
  `"event":"async_job_completed","job_id":"${JOB_ID}","status":"success",` +
  '"feature":"ocr","subfeature":"ocr_async","provider":"amazon","model":null,' +
  `"created_at":"${CREATED.toISOString()}","finished_at":"${FINISHED.toISOString()}","output":{}`;

/** `unit` repeated, comma-separated, to about `bytes`. */
function repeatTo(unit, bytes) {
  return Array(Math.floor(bytes / (unit.length + 1)))
    .fill(unit)
    .join(',');
}

/** The hostile shapes: name → body text (each ≤ 1 MiB). */
function shapes() {
  return [
    ['deep nesting (500 nested [ ] × ~1,000)', `{${ENVELOPE},"pad":[${repeatTo('['.repeat(500) + ']'.repeat(500), MB)}]}`],
    ['many empty arrays', `{${ENVELOPE},"pad":[${repeatTo('[]', MB)}]}`],
    ['many small objects {"a":1}', `{${ENVELOPE},"pad":[${repeatTo('{"a":1}', MB)}]}`],
    ['one object with 60k keys', `{${ENVELOPE},"pad":{${Array.from({ length: 60_000 }, (_, i) => `"k${i}":${i}`).join(',')}}}`],
    ['long escaped string (\\u00e9 × 166k)', `{${ENVELOPE},"pad":"${'\\u00e9'.repeat(Math.floor(MB / 6))}"}`],
    ['many 17-digit floats', `{${ENVELOPE},"pad":[${repeatTo('0.12345678901234567', MB)}]}`],
  ];
}

/** Nesting of the float shapes: arrays in arrays, the floats in the innermost one. */
const FLOAT_DEPTH = 125;
/** Canonical bytes per member of the innermost array, as the parse bounds them: line break, indent, lexeme, comma. */
const FLOAT_MEMBER_BOUND = 2 + 2 * (FLOAT_DEPTH + 1) + 25;

/**
 * Float shapes built to cost the float formatting and the hashing of every candidate form: one flat
 * array of one float lexeme repeated (or of distinct ones), 125 arrays deep (each float's line is ~250 bytes of indent in
 * every form), one `"é"` in the envelope (so python and python-ascii differ), as many floats as fit
 * both ~1 MB and the canonical limit (the bound, not the real size, is what the parse refuses):
 * name → body text.
 */
function floatShapes() {
  const envelope = ENVELOPE.replace('"output":{}', '"note":"é","output":{}');
  const deep = (lexemes) => {
    const count = Math.min(Math.floor(MB / (lexemes[0].length + 1)), Math.floor((0.98 * MAX_CANONICAL) / FLOAT_MEMBER_BOUND));
    const floats = Array.from({ length: count }, (_, i) => lexemes[i % lexemes.length]).join(',');
    return `{${envelope},"pad":${'['.repeat(FLOAT_DEPTH)}${floats}${']'.repeat(FLOAT_DEPTH)}}`;
  };
  const shape = (x) => deep([x]);
  // Every float its own lexeme: nothing repeats, each is converted (once) and laid out per form.
  const rnd = seededRandom(1308);
  const distinct = Array.from({ length: 50_000 }, () => `1.${String(Math.floor(rnd() * 1e16)).padStart(16, '0')}e+307`);
  return [
    [`${FLOAT_DEPTH} deep, 1.7976931348623157e+308 (max double)`, shape('1.7976931348623157e+308')],
    [`${FLOAT_DEPTH} deep, 4.9e-324 (min subnormal)`, shape('4.9e-324')],
    [`${FLOAT_DEPTH} deep, 1.2345678901234567e-310 (subnormal)`, shape('1.2345678901234567e-310')],
    [`${FLOAT_DEPTH} deep, 0.12345678901234567 (17 digits, not shortest)`, shape('0.12345678901234567')],
    [`${FLOAT_DEPTH} deep, distinct 17-digit floats at e+307`, deep(distinct)],
  ];
}

/** Bodies sent with a real signature over another body: at most this × JSON.parse of the same body. */
export const TARGET_CRAFTED_RATIO = 10;
/** Rounds of the crafted rows: each times JSON.parse and receiver.handle of the body, one after the other. */
const CRAFTED_RUNS = 15;
const CRAFTED_KEYS = 78_000;
const NON_ASCII = [...'éàüßøπλжщ中文字ÿ'];
const ASTRAL = ['😀', '𝄞'];

/**
 * Members `"key": n` of `count` distinct keys in shuffled order: ASCII (`k1a2b`), or non-ASCII
 * (Latin-1, Cyrillic, CJK, one in seven with an astral character, whose code-point order differs
 * from its UTF-16 order).
 */
function shuffledMembers(count, nonAscii, rnd) {
  const keys = Array.from({ length: count }, (_, i) => {
    const id = i.toString(36);
    if (!nonAscii) return `k${id}`;
    const pick = () => NON_ASCII[Math.floor(rnd() * NON_ASCII.length)];
    return `${pick()}${id}${i % 7 === 0 ? ASTRAL[i % 2] : pick()}`;
  });
  for (let i = keys.length - 1; i > 0; i--) {
    const j = Math.floor(rnd() * (i + 1));
    [keys[i], keys[j]] = [keys[j], keys[i]];
  }
  return keys.map((k, i) => `${JSON.stringify(k)}:${i % 10}`);
}

/** The crafted bodies (≤ 1 MiB each): name → text. One 17-digit float each, in the envelope's output. */
function craftedBodies() {
  const out = [];
  for (const nonAscii of [false, true]) {
    for (const nested of [false, true]) {
      const rnd = seededRandom(nonAscii * 2 + nested + 21);
      const members = shuffledMembers(CRAFTED_KEYS, nonAscii, rnd);
      let pad;
      if (!nested) pad = `{${members.join(',')}}`;
      else {
        // 78 objects of 1,000 keys, each one level deeper inside the previous one's last member.
        pad = '';
        for (let o = CRAFTED_KEYS / 1000 - 1; o >= 0; o--) {
          const own = members.slice(o * 1000, (o + 1) * 1000).join(',');
          pad = `{${own}${pad === '' ? '' : `,"next${o}":${pad}`}}`;
        }
      }
      const name = `${CRAFTED_KEYS.toLocaleString('en')} unsorted ${nonAscii ? 'non-ASCII' : 'ASCII'} keys, ${nested ? 'nested' : 'flat'}`;
      const text = `{${ENVELOPE.replace('"output":{}', `"output":{"score":0.12345678901234567,"pad":${pad}}`)}}`;
      out.push([name, text]);
    }
  }
  return out;
}

/** The canonical size of `body` in the python profile, or undefined when it may exceed the receiver's limit. */
function canonicalSize(body) {
  try {
    return canonicalize(body, { maxCanonicalBytes: MAX_CANONICAL }).length;
  } catch (err) {
    if (!isJobhookError(err) || err.code !== 'ERR_CANONICAL_TOO_LARGE') throw err;
    return undefined;
  }
}

/** What a real signature over another body gets: 413 when the canonical form may exceed the limit, else 401. */
const otherBodyAnswer = (canonicalBytes) => (canonicalBytes === undefined ? '413 ERR_CANONICAL_TOO_LARGE' : '401 ERR_SIGNATURE_INVALID');

export const NOTES = [
  `Each body is sent to receiver.handle({ method: "POST", headers: { content-type, x-service-signature }, rawBody }) of a receiver with default options (body ≤ 1 MiB, canonical form ≤ 16 MiB, memory store), RSA-${KEY_BITS} key.`,
  "made-up    = 'ab'.repeat(256): a signature no configured key decodes; expected 401 ERR_SIGNATURE_INVALID before the body is parsed.",
  'other body = a real signature of the key over sha256("another body"): it decodes, so the body is parsed with the canonical-size bound and its candidate forms hashed; expected 413 ERR_CANONICAL_TOO_LARGE when the canonical form may exceed the limit, else 401 ERR_SIGNATURE_INVALID.',
  "this body  = the real signature of the body's python canonical form (only where that form is under the limit); expected 200 handled (a fresh receiver per call, created outside the timing, so the job_id is new).",
  `ms = performance.now() around one awaited handle(), after 1 warm-up call: median and max of ${RUNS}. The webhook-1kb rows are a valid 1 KB delivery, for scale.`,
  `ratio table = every hostile shape with the real signature over another body: the six above, the float shapes (one float lexeme repeated, or distinct 17-digit lexemes, in one flat array ${FLOAT_DEPTH} arrays deep, as many as fit ~1 MB and the canonical limit, one "é" in the envelope), and the crafted keys (${CRAFTED_KEYS.toLocaleString('en')} distinct keys in shuffled order, ASCII, or non-ASCII with one in seven astral, in one object (flat) or 78 objects of 1,000 nested in one another (nested), plus one 17-digit float, in the envelope's output, ~0.8–1 MB). ${CRAFTED_RUNS} rounds after 1 warm-up, each timing receiver.handle then JSON.parse(body.toString("utf8")) of the same body; ratio = median handle ÷ median JSON.parse, target ≤ ${TARGET_CRAFTED_RATIO}× with the expected answer (printed as ${TARGET_CRAFTED_RATIO}× ÷ ratio, ≥ 1.00× = met). The CPU column is the same ratio of process CPU time (process.cpuUsage, user + system, GC threads included) around the same calls: on a machine shared with other work, wall time stretches a 100 ms call by more than a 10 ms one, CPU time does not.`,
  `RSS = process RSS growth over the whole group (bodies, keys and signing included), from a gc() at its start: peak (read after every call) and at its end. Budgets: made-up ≤ ${BUDGET_MADE_UP_MS} ms, decoding signatures ≤ ${BUDGET_DECODING_MS} ms, RSS growth (peak) ≤ ${BUDGET_RSS_MB} MB over the group; the targets print budget ÷ measured (≥ 1.00× = within budget). --quick and --time do not change this group (always 1 + ${RUNS} calls per case).`,
];

/** Process CPU time (user + system) since `since`, in ms: steadier than wall time on a loaded machine. */
const cpuMs = (since) => {
  const { user, system } = process.cpuUsage(since);
  return (user + system) / 1000;
};

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const n = s.length;
  return n % 2 ? s[(n - 1) >> 1] : (s[n / 2 - 1] + s[n / 2]) / 2;
};

export async function run({ log, payloads }) {
  // First thing: the RSS baseline, after a full GC.
  globalThis.gc?.();
  const rss0 = process.memoryUsage.rss();
  let rssPeak = rss0;
  const sampleRss = () => {
    const rss = process.memoryUsage.rss();
    if (rss > rssPeak) rssPeak = rss;
  };

  log(`  generating an RSA-${KEY_BITS} key…`);
  const { publicKey, privateKey } = await promisify(generateKeyPair)('rsa', { modulusLength: KEY_BITS, publicExponent: 65537 });
  const pem = publicKey.export({ type: 'pkcs1', format: 'pem' });
  const rsaSign = (digestHex) =>
    sign('sha256', Buffer.from(digestHex, 'latin1'), { key: privateKey, padding: constants.RSA_PKCS1_PADDING }).toString('hex');
  const madeUp = 'ab'.repeat(256);
  const otherBody = rsaSign(createHash('sha256').update('another body').digest('hex'));
  const handled = [];
  const newReceiver = () => createReceiver({ publicKeys: pem, onEvent: (e) => void handled.push(e.job_id) });
  const shared = newReceiver();

  const small = payloads.find((p) => p.name === 'webhook-1kb');
  const bodies = [
    ...shapes().map(([name, text]) => ({ name, body: Buffer.from(text, 'utf8'), hostile: true })),
    { name: 'webhook-1kb (valid delivery)', body: small.bodies.python, hostile: false },
  ];

  const rows = [];
  for (const { name, body, hostile } of bodies) {
    if (body.length > MAX_BODY) throw new Error(`attack: ${name} has ${body.length} bytes, over the 1 MiB body limit`);
    const canonicalBytes = canonicalSize(body);
    const overLimit = canonicalBytes === undefined;
    const real = overLimit ? undefined : rsaSign(createHash('sha256').update(canonicalize(body)).digest('hex'));
    sampleRss();
    const cases = [
      { signature: 'made-up', value: madeUp, expected: '401 ERR_SIGNATURE_INVALID', fresh: false },
      {
        signature: 'other body',
        value: otherBody,
        expected: otherBodyAnswer(canonicalBytes),
        fresh: false,
      },
    ];
    if (!overLimit) cases.push({ signature: 'this body', value: real, expected: '200 handled', fresh: true });

    for (const c of cases) {
      log(`  ${name}, ${c.signature} signature…`);
      const headers = { 'content-type': 'application/json', 'x-service-signature': c.value };
      const times = [];
      let answer;
      for (let i = 0; i <= RUNS; i++) {
        const receiver = c.fresh ? newReceiver() : shared;
        const t0 = performance.now();
        const res = await receiver.handle({ method: 'POST', headers, rawBody: body });
        const ms = performance.now() - t0;
        sampleRss();
        const got = `${res.status} ${res.outcome.code ?? res.outcome.kind}`;
        if (answer !== undefined && got !== answer) answer = `${answer} / ${got}`;
        else answer ??= got;
        if (i > 0) times.push(ms);
        else c.warmUpMs = ms;
      }
      rows.push({
        body: name,
        hostile,
        bytes: body.length,
        canonicalBytes: canonicalBytes ?? null,
        signature: c.signature,
        answer,
        expected: c.expected,
        asExpected: answer === c.expected,
        warmUpMs: c.warmUpMs,
        medianMs: median(times),
        maxMs: Math.max(...times),
        times,
      });
    }
  }
  // Every hostile shape behind a real signature over another body, against JSON.parse of the same body.
  const crafted = [];
  for (const [name, text] of [...shapes(), ...floatShapes(), ...craftedBodies()]) {
    const body = Buffer.from(text, 'utf8');
    if (body.length > MAX_BODY) throw new Error(`attack: ${name} has ${body.length} bytes, over the 1 MiB body limit`);
    const canonicalBytes = canonicalSize(body);
    const expected = otherBodyAnswer(canonicalBytes);
    log(`  ${name} (${body.length.toLocaleString('en')} B), other body signature vs JSON.parse…`);
    const headers = { 'content-type': 'application/json', 'x-service-signature': otherBody };
    const handleMs = [];
    const parseMs = [];
    const handleCpuMs = [];
    const parseCpuMs = [];
    let answer;
    for (let i = 0; i <= CRAFTED_RUNS; i++) {
      let c0 = process.cpuUsage();
      let t0 = performance.now();
      const res = await shared.handle({ method: 'POST', headers, rawBody: body });
      const h = performance.now() - t0;
      const hc = cpuMs(c0);
      c0 = process.cpuUsage();
      t0 = performance.now();
      JSON.parse(body.toString('utf8'));
      const p = performance.now() - t0;
      const pc = cpuMs(c0);
      sampleRss();
      const got = `${res.status} ${res.outcome.code ?? res.outcome.kind}`;
      if (answer !== undefined && got !== answer) answer = `${answer} / ${got}`;
      else answer ??= got;
      if (i > 0) {
        handleMs.push(h);
        parseMs.push(p);
        handleCpuMs.push(hc);
        parseCpuMs.push(pc);
      }
    }
    const handle = median(handleMs);
    const parse = median(parseMs);
    const cpuRatio = median(handleCpuMs) / median(parseCpuMs);
    crafted.push({
      body: name,
      bytes: body.length,
      canonicalBytes: canonicalBytes ?? null,
      answer,
      expected,
      met: handle / parse <= TARGET_CRAFTED_RATIO && answer === expected,
      handleMs: handle,
      parseMs: parse,
      ratio: handle / parse,
      handleCpuMs: median(handleCpuMs),
      parseCpuMs: median(parseCpuMs),
      cpuRatio,
      handleTimes: handleMs,
      parseTimes: parseMs,
    });
  }

  const rssEnd = process.memoryUsage.rss();
  sampleRss();
  const growthPeakMB = (rssPeak - rss0) / MB;
  const growthEndMB = (rssEnd - rss0) / MB;

  const ms = (x) => (x >= 100 ? num(x) : x >= 10 ? num(x, 1) : num(x, 2));
  let last;
  const text = table(
    [
      { header: 'body', align: 'left' },
      { header: 'bytes' },
      { header: 'canonical bytes' },
      { header: 'signature', align: 'left' },
      { header: 'answer', align: 'left' },
      { header: 'median ms' },
      { header: 'max ms' },
      { header: 'as expected?', align: 'left' },
    ],
    rows.map((r) => {
      const first = r.body !== last;
      last = r.body;
      return [
        first ? r.body : '',
        first ? r.bytes.toLocaleString('en') : '',
        first ? (r.canonicalBytes === null ? `> ${num(MAX_CANONICAL)} (limit)` : r.canonicalBytes.toLocaleString('en')) : '',
        r.signature,
        r.answer,
        ms(r.medianMs),
        ms(r.maxMs),
        r.asExpected ? 'yes' : `NO (expected ${r.expected})`,
      ];
    }),
  );
  const craftedText = table(
    [
      { header: 'body (real signature over another body)', align: 'left' },
      { header: 'bytes' },
      { header: 'canonical bytes' },
      { header: 'answer', align: 'left' },
      { header: 'handle median ms' },
      { header: 'JSON.parse median ms' },
      { header: 'handle / JSON.parse' },
      { header: 'CPU ms: handle / JSON.parse' },
      { header: `≤ ${TARGET_CRAFTED_RATIO}×?`, align: 'left' },
    ],
    crafted.map((r) => [
      r.body,
      r.bytes.toLocaleString('en'),
      r.canonicalBytes === null ? `> ${num(MAX_CANONICAL)} (limit)` : r.canonicalBytes.toLocaleString('en'),
      r.answer,
      ms(r.handleMs),
      ms(r.parseMs),
      `${r.ratio.toFixed(2)}×`,
      `${ms(r.handleCpuMs)} / ${ms(r.parseCpuMs)} = ${r.cpuRatio.toFixed(2)}×`,
      r.met ? 'yes' : r.answer === r.expected ? 'NO' : `NO (expected ${r.expected})`,
    ]),
  );
  const rssLine = `RSS growth over the group: peak ${num(growthPeakMB, 1)} MB, at the end ${num(growthEndMB, 1)} MB (budget ${BUDGET_RSS_MB} MB; baseline ${num(rss0 / MB, 1)} MB after gc()).`;
  logResult(log, `${text}\n\n${craftedText}`, NOTES, ['', rssLine]);

  const hostileRows = rows.filter((r) => r.hostile);
  const worst = (list) => list.reduce((a, b) => (b.maxMs > a.maxMs ? b : a));
  const madeUpWorst = worst(hostileRows.filter((r) => r.signature === 'made-up'));
  const decodingWorst = worst(hostileRows.filter((r) => r.signature !== 'made-up'));
  const budget = (name, limit, measured) => ({ name, value: limit / measured, min: 1, met: measured <= limit, measured, limit });
  const targets = [
    budget(
      `attack made-up signature, ${BUDGET_MADE_UP_MS} ms ÷ slowest max (${madeUpWorst.body}: ${ms(madeUpWorst.maxMs)} ms)`,
      BUDGET_MADE_UP_MS,
      madeUpWorst.maxMs,
    ),
    budget(
      `attack decoding signature, ${BUDGET_DECODING_MS} ms ÷ slowest max (${decodingWorst.body}, ${decodingWorst.signature}: ${ms(decodingWorst.maxMs)} ms)`,
      BUDGET_DECODING_MS,
      decodingWorst.maxMs,
    ),
    budget(
      `attack RSS growth, ${BUDGET_RSS_MB} MB ÷ peak growth (${num(growthPeakMB, 1)} MB)`,
      BUDGET_RSS_MB,
      Math.max(growthPeakMB, 0.001),
    ),
  ];
  for (const r of crafted) {
    targets.push({
      name: `attack other body (${r.body}), ${TARGET_CRAFTED_RATIO}× ÷ handle/JSON.parse (${r.ratio.toFixed(2)}×)`,
      value: TARGET_CRAFTED_RATIO / r.ratio,
      min: 1,
      met: r.met,
    });
  }
  const unexpected = rows.filter((r) => !r.asExpected);
  if (unexpected.length > 0) log(`  ${unexpected.length} answer(s) not as expected (see the table)`);
  return {
    text: `${text}\n\n${craftedText}\n\n${rssLine}`,
    notes: NOTES,
    data: {
      keyBits: KEY_BITS,
      runs: RUNS,
      rows,
      crafted,
      rss: { baselineMB: rss0 / MB, growthPeakMB, growthEndMB },
      handledJobs: handled.length,
    },
    targets,
  };
}
