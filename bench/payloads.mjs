// Deterministic benchmark payloads: the same bytes on every run and every machine.
//
// Each payload is built from a seeded PRNG (mulberry32) and written in two body styles:
// - `python`:  what Python's `json.dumps(payload)` sends with its defaults: `", "` and `": "`
//              separators, keys in insertion order, non-ASCII as `\uXXXX` escapes (ensure_ascii=True);
// - `compact`: `json.dumps(payload, separators=(",", ":"), ensure_ascii=False)`, UTF-8, non-ASCII raw.
//
// The JSON writer below emulates Python's (float repr, string escapes) on its own, without using
// @jobhook/core, so the inputs do not depend on the code under test. `node bench/check-payloads.mjs`
// cross-checks every body and the canonical form against a real python3.

/** A Python float. Plain JS numbers are written as Python ints and must be integral. */
export class PyFloat {
  /** @param {number} value */
  constructor(value) {
    this.value = value;
  }
}

/** @param {number} x */
const f = (x) => new PyFloat(x);

/**
 * mulberry32, numbers in [0, 1): the same bodies on every run. The benches' one copy (they run as
 * plain JavaScript, so they cannot import the tests' TypeScript `seededRandom`).
 * @param {number} seed
 * @returns {() => number}
 */
export function seededRandom(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** {@link seededRandom} with helpers for the payload builders. */
function prng(seed) {
  const next = seededRandom(seed);
  return {
    next,
    int: (lo, hi) => lo + Math.floor(next() * (hi - lo + 1)),
    pick: (list) => list[Math.floor(next() * list.length)],
    chance: (p) => next() < p,
    /** A float rounded to `decimals` places: Python's repr prints it back with those digits. */
    fixed: (lo, hi, decimals) => {
      const scale = 10 ** decimals;
      return Math.round((lo + next() * (hi - lo)) * scale) / scale;
    },
    uuid4: () => {
      const hex = (n) => {
        let s = '';
        for (let i = 0; i < n; i++) s += Math.floor(next() * 16).toString(16);
        return s;
      };
      const variant = '89ab'[Math.floor(next() * 4)];
      return `${hex(8)}-${hex(4)}-4${hex(3)}-${variant}${hex(3)}-${hex(12)}`;
    },
  };
}

/** Start of the payloads' timestamps: three whole hours before now. */
const BENCH_EPOCH_MS = Math.floor(Date.now() / 3_600_000) * 3_600_000 - 3 * 3_600_000;

/** Python's `datetime.isoformat()` of an aware UTC datetime with microseconds. */
function isoUtc(ms, micros) {
  const iso = new Date(ms).toISOString(); // 2026-11-21T14:03:27.123Z
  return `${iso.slice(0, 19)}.${String(micros).padStart(6, '0')}+00:00`;
}

// ---------------------------------------------------------------------------------------------
// Python's json.dumps, emulated

/** Python's `repr(float)` for a finite double: shortest round-trip digits, fixed when -4 < decpt <= 16. */
export function pyFloatRepr(x) {
  if (Number.isNaN(x)) return 'NaN';
  if (!Number.isFinite(x)) return x > 0 ? 'Infinity' : '-Infinity';
  if (x === 0) return Object.is(x, -0) ? '-0.0' : '0.0';
  const sign = x < 0 ? '-' : '';
  const js = String(Math.abs(x)); // shortest round-trip digits, as Python's repr
  const e = js.indexOf('e');
  const mantissa = e < 0 ? js : js.slice(0, e);
  const dot = mantissa.indexOf('.');
  const intPart = dot < 0 ? mantissa : mantissa.slice(0, dot);
  let digits = intPart + (dot < 0 ? '' : mantissa.slice(dot + 1));
  let decpt = intPart.length + (e < 0 ? 0 : Number(js.slice(e + 1)));
  const lead = digits.length - digits.replace(/^0+/, '').length;
  digits = digits.slice(lead).replace(/0+$/, '');
  decpt -= lead;
  if (decpt > -4 && decpt <= 16) {
    if (decpt <= 0) return `${sign}0.${'0'.repeat(-decpt)}${digits}`;
    if (decpt >= digits.length) return `${sign}${digits}${'0'.repeat(decpt - digits.length)}.0`;
    return `${sign}${digits.slice(0, decpt)}.${digits.slice(decpt)}`;
  }
  const exp = decpt - 1;
  const m = digits.length === 1 ? digits : `${digits[0]}.${digits.slice(1)}`;
  return `${sign}${m}e${exp < 0 ? '-' : '+'}${String(Math.abs(exp)).padStart(2, '0')}`;
}

const SHORT_ESCAPES = { 34: '\\"', 92: '\\\\', 10: '\\n', 13: '\\r', 9: '\\t', 8: '\\b', 12: '\\f' };

/** Python's string literal: `ensureAscii` escapes everything outside 0x20-0x7e (UTF-16 units, lowercase hex). */
export function pyQuote(s, ensureAscii) {
  let out = '"';
  let run = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    let esc;
    if (c === 0x22 || c === 0x5c || c < 0x20) esc = SHORT_ESCAPES[c] ?? `\\u${c.toString(16).padStart(4, '0')}`;
    else if (ensureAscii && c > 0x7e) esc = `\\u${c.toString(16).padStart(4, '0')}`;
    else continue;
    out += s.slice(run, i) + esc;
    run = i + 1;
  }
  return `${out}${s.slice(run)}"`;
}

/**
 * `json.dumps(value)` (style `python`) or `json.dumps(value, separators=(",", ":"), ensure_ascii=False)`
 * (style `compact`), keys in insertion order.
 */
export function pyDumps(value, style) {
  const python = style === 'python';
  const item = python ? ', ' : ',';
  const colon = python ? ': ' : ':';
  const write = (v) => {
    if (v === null) return 'null';
    if (v === true) return 'true';
    if (v === false) return 'false';
    if (typeof v === 'string') return pyQuote(v, python);
    if (typeof v === 'number') {
      if (!Number.isSafeInteger(v)) throw new Error(`payload bug: ${v} is not an int; wrap floats in PyFloat`);
      return String(v);
    }
    if (v instanceof PyFloat) return pyFloatRepr(v.value);
    if (Array.isArray(v)) return `[${v.map(write).join(item)}]`;
    return `{${Object.entries(v)
      .map(([k, x]) => `${pyQuote(k, python)}${colon}${write(x)}`)
      .join(item)}}`;
  };
  return write(value);
}

// ---------------------------------------------------------------------------------------------
// Vocabulary

const FR_WORDS = [
  'Facture',
  'numéro',
  'Montréal',
  'reçu',
  'été',
  'à',
  'payer',
  'échéance',
  'Société',
  'Générale',
  'TVA',
  'total',
  'crème',
  'brûlée',
  'déjà',
  'garçon',
  'Noël',
  'œuvre',
  'Ça',
  'hôtel',
  'août',
  'prévu',
  'réglé',
  'intérêts',
  'délai',
  'Québec',
  'adresse',
  'client',
  'montant',
  'HT',
  'TTC',
  'du',
  'le',
  'la',
  'les',
  'de',
  'et',
  'pour',
  '12,50',
  '€',
  'n°',
  'rue',
  'Saint-Étienne',
];
const JA_WORDS = ['請求書', '合計', '東京都', '株式会社', 'お支払い', '金額', '税込', '日付', '御中', '様'];
const EMOJI = ['📄', '✅', '😀'];
const SPEECH_WORDS = [
  'so',
  'the',
  'quarterly',
  'numbers',
  'look',
  'good',
  'and',
  'we',
  'expect',
  'to',
  'ship',
  'the',
  'new',
  'model',
  'next',
  'week',
  'right',
  'yeah',
  'I',
  'think',
  'that',
  'makes',
  'sense',
  'okay',
  'let',
  'us',
  'move',
  'on',
  'pipeline',
  'latency',
  'is',
  'down',
  'about',
  'twenty',
  'percent',
  'customers',
  'in',
  'Montréal',
  'and',
  'São',
  'Paulo',
  'asked',
  'for',
  'the',
  'café',
  'integration',
  'résumé',
  'naïve',
  'um',
  'uh',
  'actually',
  'webhook',
  'retries',
  'signature',
  'verification',
];

// ---------------------------------------------------------------------------------------------
// Payload builders. Each takes a size knob `n` and reseeds, so build(n) is a pure function of n.

function envelope(rng, { feature, subfeature, provider, model, output, userParameters }) {
  // Within the last few hours, whole hours back from now (same lengths, same layout every run): a fixed
  // date would leave the receivers' replay window and the pipeline benches would time refusals.
  const created = BENCH_EPOCH_MS + rng.int(0, 3_600_000);
  const finished = created + rng.int(800, 95_000);
  return {
    event: 'async_job_completed',
    job_id: rng.uuid4(),
    status: 'success',
    feature,
    subfeature,
    provider,
    model,
    created_at: isoUtc(created, rng.int(0, 999_999)),
    finished_at: isoUtc(finished, rng.int(0, 999_999)),
    output,
    user_parameters: userParameters,
  };
}

/** (a) a small `async_job_completed` webhook: sentiment analysis, `n` scored segments. */
function buildSmall(n) {
  const rng = prng(0x5eed_0001);
  const segments = [
    'Le café était délicieux et le service rapide.',
    'The delivery arrived two days late.',
    'Überraschend gut, würde wieder bestellen.',
    'Prix correct, mais l’emballage était abîmé.',
  ];
  const items = [];
  for (let i = 0; i < n; i++) {
    const rate = rng.fixed(0.05, 0.99, 7);
    items.push({
      segment: segments[i % segments.length],
      sentiment: rate > 0.5 ? 'Positive' : 'Negative',
      sentiment_rate: f(rate),
    });
  }
  return envelope(rng, {
    feature: 'text',
    subfeature: 'sentiment_analysis',
    provider: 'google',
    model: 'text-sentiment-v2',
    output: {
      general_sentiment: 'Positive',
      general_sentiment_rate: f(0.8734219),
      items,
      cost: f(0.0015),
      usage: { input_tokens: 213, output_tokens: 0 },
    },
    userParameters: {
      customer_ref: 'commande n°4821 — café crème ☕',
      priority: f(1.0),
      threshold: f(0.75),
      locale: 'fr-FR',
      tags: ['bêta', 'nightly'],
    },
  });
}

function box(rng) {
  const left = rng.fixed(0.02, 0.8, 7);
  const top = rng.fixed(0.02, 0.95, 7);
  return {
    left: f(left),
    top: f(top),
    width: f(rng.fixed(0.01, 0.18, 7)),
    height: f(rng.fixed(0.008, 0.03, 7)),
  };
}

function ocrWord(rng) {
  const r = rng.next();
  if (r < 0.1) return rng.pick(JA_WORDS);
  if (r < 0.12) return rng.pick(EMOJI);
  return rng.pick(FR_WORDS);
}

/** (b) an OCR result: `n` lines of words with float bounding boxes, over pages of 12 lines. */
function buildOcr(n) {
  const rng = prng(0x5eed_0002);
  const pages = [];
  const rawLines = [];
  for (let i = 0; i < n; i++) {
    if (i % 12 === 0) {
      pages.push({ page_number: pages.length + 1, width: f(2480.0), height: f(3508.0), dpi: f(300.0), lines: [] });
    }
    const words = [];
    const count = rng.int(3, 8);
    for (let w = 0; w < count; w++) {
      words.push({ text: ocrWord(rng), confidence: f(rng.fixed(80, 99.99, 4)), bounding_box: box(rng) });
    }
    const text = words.map((w) => w.text).join(' ');
    rawLines.push(text);
    pages.at(-1).lines.push({
      text,
      confidence: f(rng.fixed(85, 99.99, 4)),
      angle: f(rng.chance(0.9) ? 0.0 : 90.0),
      pixels: { x: f(rng.int(40, 2000)), y: f(rng.int(40, 3400)), w: f(rng.int(60, 900)), h: f(12.0) },
      bounding_box: box(rng),
      words,
    });
  }
  return envelope(rng, {
    feature: 'ocr',
    subfeature: 'ocr_async',
    provider: 'amazon',
    model: 'textract-2024-06',
    output: { raw_text: rawLines.join('\n'), number_of_pages: pages.length, pages },
    userParameters: { document: 'facture-août-2026.pdf', language: 'fr', dpi: f(300.0), client: 'Société Générale 日本' },
  });
}

/** (c) a speech-to-text result: `n` timed words from 3 speakers. */
function buildStt(n) {
  const rng = prng(0x5eed_0003);
  const words = [];
  let t = 0.32;
  let speaker = 0;
  for (let i = 0; i < n; i++) {
    if (rng.chance(0.04)) speaker = rng.int(0, 2);
    const start = Math.round(t * 100) / 100;
    const end = Math.round((t + rng.fixed(0.08, 0.6, 2)) * 100) / 100;
    words.push({
      word: rng.pick(SPEECH_WORDS),
      start: f(start),
      end: f(end),
      confidence: f(rng.fixed(0.55, 1, 8)),
      speaker,
    });
    t = end + (rng.chance(0.1) ? rng.fixed(0.2, 1.5, 2) : 0.02);
  }
  return envelope(rng, {
    feature: 'audio',
    subfeature: 'speech_to_text_async',
    provider: 'deepgram',
    model: 'nova-2',
    output: {
      text: words.map((w) => w.word).join(' '),
      language: 'en',
      duration: f(Math.round(t * 1000) / 1000),
      diarization: { total_speakers: 3 },
      words,
    },
    userParameters: { meeting: 'Réunion trimestrielle – Q4', speakers: 3, sample_rate: f(16000.0) },
  });
}

/** (d) an embeddings result: `n` vectors of 1536 full-precision floats (16–17 significant digits). */
function buildEmbeddings(n) {
  const rng = prng(0x5eed_0004);
  const data = [];
  for (let i = 0; i < n; i++) {
    const embedding = [];
    // Unrounded doubles, as a model's float32→float64 output prints in Python: 16–17 digits each.
    for (let d = 0; d < 1536; d++) embedding.push(f((rng.next() * 2 - 1) * 0.1));
    data.push({ object: 'embedding', index: i, embedding });
  }
  return envelope(rng, {
    feature: 'text',
    subfeature: 'embeddings',
    provider: 'openai',
    model: 'text-embedding-3-small',
    output: { items: data, usage: { prompt_tokens: 8 * n, total_tokens: 8 * n } },
    userParameters: { batch: 'kb-articles-2026-11', dimensions: 1536 },
  });
}

const LABELS = ['person', 'car', 'bicycle', 'dog', 'traffic light', 'bus', 'chair', 'cup'];

/** (e) an object-detection result: `n` small objects with a label, a confidence and a box. */
function buildDetection(n) {
  const rng = prng(0x5eed_0005);
  const items = [];
  for (let i = 0; i < n; i++) {
    items.push({
      label: rng.pick(LABELS),
      confidence: f(rng.fixed(0.3, 0.999, 3)),
      x_min: rng.int(0, 1800),
      x_max: rng.int(0, 1920),
      y_min: rng.int(0, 1000),
      y_max: rng.int(0, 1080),
    });
  }
  return envelope(rng, {
    feature: 'image',
    subfeature: 'object_detection_async',
    provider: 'google',
    model: 'vision-objects-v1',
    output: { items, frames: 1 },
    userParameters: { camera: 'entrée-nord', threshold: f(0.3) },
  });
}

const CHAT_SENTENCES = [
  'Voici le résumé de la réunion : les délais sont tenus, le budget dépasse de 3 %.',
  'The migration finished overnight; 2 of 14 services needed a manual restart.',
  '会議の要点：来週までに見積もりを更新し、契約書を確認してください。',
  'Die Lieferung verzögert sich um zwei Tage – bitte Kunden informieren.',
  'Итоги квартала: выручка выросла на 12 %, расходы снизились.',
  'الاجتماع القادم يوم الثلاثاء في الساعة العاشرة صباحاً.',
  '新产品的发布会定于下个月初，请提前准备演示材料。',
  'Resumen: el cliente aprobó la propuesta con dos cambios menores. ✅',
];

/** (f) a long multilingual chat completion: `n` sentences of text in one message. */
function buildChat(n) {
  const rng = prng(0x5eed_0006);
  const parts = [];
  for (let i = 0; i < n; i++) parts.push(rng.pick(CHAT_SENTENCES) + (rng.chance(0.2) ? '\n\n' : ' '));
  return envelope(rng, {
    feature: 'text',
    subfeature: 'chat_async',
    provider: 'mistral',
    model: 'mistral-large-latest',
    output: {
      generated_text: parts.join(''),
      message: [{ role: 'assistant', message: parts.slice(0, 3).join('') }],
      usage: { prompt_tokens: 1200, completion_tokens: 18 * n, total_tokens: 1200 + 18 * n },
    },
    userParameters: { conversation: 'support-4821', temperature: f(0.2) },
  });
}

/**
 * The payload of the smallest `n` whose python-style body reaches `target` bytes: bracketing from
 * `hint` in steps of 1/16, then a binary search (deterministic).
 */
function sized(build, target, hint) {
  const size = (n) => Buffer.byteLength(pyDumps(build(n), 'python'));
  const step = Math.max(1, hint >> 4);
  let lo = hint;
  let hi = hint;
  if (size(hint) < target) {
    do hi += step;
    while (size(hi) < target);
    lo = hi - step;
  } else {
    do lo = Math.max(0, lo - step);
    while (lo > 0 && size(lo) >= target);
  }
  while (lo + 1 < hi) {
    const mid = (lo + hi) >> 1;
    if (size(mid) < target) lo = mid;
    else hi = mid;
  }
  return build(hi);
}

/** Payload specs: name, target size of the python-style body, builder. */
export const PAYLOAD_SPECS = [
  { name: 'webhook-1kb', description: 'async_job_completed envelope (sentiment analysis)', target: 1_000, hint: 3, build: buildSmall },
  { name: 'ocr-30kb', description: 'OCR result: pages, lines, words, float boxes, FR/JA/emoji', target: 30_000, hint: 32, build: buildOcr },
  { name: 'stt-1mb', description: 'speech-to-text result: timed words, 3 speakers', target: 1_000_000, hint: 10_000, build: buildStt },
  { name: 'embeddings-8x1536', description: 'embeddings: 8 × 1536 full-precision floats', exact: 8, build: buildEmbeddings },
  { name: 'detection-3000', description: 'object detection: 3,000 small objects', exact: 3000, build: buildDetection },
  {
    name: 'chat-100kb',
    description: 'chat completion text, python style: ~100 KB, escape-heavy',
    target: 100_000,
    hint: 830,
    build: buildChat,
  },
  { name: 'chat-300kb', description: 'long multilingual chat text (FR/EN/JA/DE/RU/AR/ZH)', target: 300_000, hint: 2_500, build: buildChat },
];

/** Body styles, as each Python sender would write them. */
export const BODY_STYLES = ['python', 'compact'];

let cache;

/**
 * The payloads: `{ name, description, value, bodies: { python: Buffer, compact: Buffer } }`.
 * Built once per process (a few hundred ms, mostly sizing the largest).
 */
export function getPayloads() {
  if (cache) return cache;
  cache = PAYLOAD_SPECS.map(({ name, description, target, hint, exact, build }) => {
    const value = exact === undefined ? sized(build, target, hint) : build(exact);
    const bodies = {};
    for (const style of BODY_STYLES) bodies[style] = Buffer.from(pyDumps(value, style), 'utf8');
    return { name, description, value, bodies };
  });
  return cache;
}

/** One payload by name. */
export function getPayload(name) {
  const p = getPayloads().find((x) => x.name === name);
  if (!p) throw new Error(`unknown payload ${name}`);
  return p;
}
