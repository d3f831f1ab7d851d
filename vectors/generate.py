#!/usr/bin/env python3
"""Generates the signature test vectors of this repository: vectors/vectors.jsonl (and, when missing, the
RSA keys in vectors/keys/).

    python3 vectors/generate.py           # (re)writes vectors/vectors.jsonl
    python3 vectors/generate.py --check   # regenerates in memory; exit 1 if the committed file differs

The reference is Python's own json module, which is what the service signs with:

    canonical = json.dumps(payload, sort_keys=True, indent=2, ensure_ascii=EA)   # EA False: "utf8", True: "ascii"
    digest    = hashlib.sha256(canonical.encode("utf-8")).hexdigest()
    signature = RSA_PKCS1v15_SHA256_sign(private_key, digest.encode("utf-8")).hex()

Only the standard library is used (json, hashlib, random, base64, subprocess, plus os/sys for paths and
arguments). RSA signing goes through Node's crypto (node is always present in this repository): one `node`
process signs every message of the run. RSA PKCS#1 v1.5 is deterministic and the payloads come from a
seeded random.Random, so with the committed keys a re-run reproduces vectors.jsonl byte for byte.
See vectors/README.md for the format and the expectations.
"""

import base64
import hashlib
import json
import os
import random
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
KEYS_DIR = os.path.join(HERE, "keys")
OUT_FILE = os.path.join(HERE, "vectors.jsonl")
KEY_NAMES = ("main", "other")
KEY_FILES = ("private.pem", "public.pem", "public.pkcs1.pem")
SEED = 20261122

# ---------------------------------------------------------------------------------------------------------
# Node: key generation (only when a key file is missing) and the one signing process
# ---------------------------------------------------------------------------------------------------------

# argv: keysDir, then key names. Creates each missing key (RSA 2048, PKCS#8 private PEM) and writes the
# public PEMs (SPKI, PKCS#1) derived from the private key when they are missing.
NODE_KEYGEN = r"""
const { createPrivateKey, createPublicKey, generateKeyPairSync } = require('node:crypto');
const { existsSync, readFileSync, writeFileSync, mkdirSync } = require('node:fs');
const { join } = require('node:path');
const [dir, ...names] = process.argv.slice(1);
mkdirSync(dir, { recursive: true });
for (const name of names) {
  const privFile = join(dir, `${name}.private.pem`);
  let priv;
  if (existsSync(privFile)) {
    priv = createPrivateKey(readFileSync(privFile));
  } else {
    priv = generateKeyPairSync('rsa', { modulusLength: 2048, publicExponent: 65537 }).privateKey;
    writeFileSync(privFile, priv.export({ type: 'pkcs8', format: 'pem' }));
    process.stderr.write(`created ${privFile}\n`);
  }
  const pub = createPublicKey(priv);
  for (const [suffix, type] of [['public.pem', 'spki'], ['public.pkcs1.pem', 'pkcs1']]) {
    const file = join(dir, `${name}.${suffix}`);
    if (!existsSync(file)) {
      writeFileSync(file, pub.export({ type, format: 'pem' }));
      process.stderr.write(`created ${file}\n`);
    }
  }
}
"""

# argv: keysDir. stdin: a JSON list of {key, message_b64, hash?, padding?}; stdout: JSON
# {"signatures": [hex, ...], "public": {name: {"spki": pem, "pkcs1": pem}}} (the public PEMs derived from
# the private keys, so --check can tell that the committed public keys belong to the private ones).
NODE_SIGN = r"""
const { constants, createPrivateKey, createPublicKey, sign } = require('node:crypto');
const { readFileSync } = require('node:fs');
const { join } = require('node:path');
const dir = process.argv[1];
const chunks = [];
process.stdin.on('data', (c) => chunks.push(c));
process.stdin.on('end', () => {
  const items = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  const keys = new Map();
  const keyOf = (name) => {
    if (!keys.has(name)) keys.set(name, createPrivateKey(readFileSync(join(dir, `${name}.private.pem`))));
    return keys.get(name);
  };
  const signatures = items.map(({ key, message_b64, hash = 'sha256', padding = 'pkcs1' }) => {
    const k = keyOf(key);
    const opts = padding === 'pss0'
      ? { key: k, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: 0 }
      : { key: k, padding: constants.RSA_PKCS1_PADDING };
    return sign(hash, Buffer.from(message_b64, 'base64'), opts).toString('hex');
  });
  const pub = {};
  for (const [name, k] of keys) {
    const p = createPublicKey(k);
    pub[name] = { spki: p.export({ type: 'spki', format: 'pem' }), pkcs1: p.export({ type: 'pkcs1', format: 'pem' }) };
  }
  process.stdout.write(JSON.stringify({ signatures, public: pub }));
});
"""


def run_node(script, args, stdin=b""):
    try:
        res = subprocess.run(["node", "-e", script, *args], input=stdin, capture_output=True, check=False)
    except FileNotFoundError:
        sys.exit("generate.py: `node` is not on PATH; it signs the vectors (Node's crypto)")
    if res.returncode != 0:
        sys.exit("generate.py: node failed:\n" + res.stderr.decode("utf-8", "replace"))
    sys.stderr.write(res.stderr.decode("utf-8", "replace"))
    return res.stdout


def missing_key_files():
    return [
        os.path.join(KEYS_DIR, f"{name}.{suffix}")
        for name in KEY_NAMES
        for suffix in KEY_FILES
        if not os.path.exists(os.path.join(KEYS_DIR, f"{name}.{suffix}"))
    ]


def ensure_keys():
    if missing_key_files():
        run_node(NODE_KEYGEN, [KEYS_DIR, *KEY_NAMES])


# ---------------------------------------------------------------------------------------------------------
# The reference semantics
# ---------------------------------------------------------------------------------------------------------


def canonical(payload, mode):
    """The service's canonical form; UnicodeEncodeError where it cannot be signed (a lone surrogate in utf8)."""
    text = json.dumps(payload, sort_keys=True, indent=2, ensure_ascii=(mode == "ascii"))
    return text.encode("utf-8")


def digest_hex(canonical_bytes):
    return hashlib.sha256(canonical_bytes).hexdigest()


def reference_canonical(body, mode):
    """What a receiver must reproduce from the body bytes (None when Python refuses the body or the mode)."""
    try:
        value = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        return None
    if not isinstance(value, dict):
        return None
    try:
        return canonical(value, mode)
    except UnicodeEncodeError:
        return None


# ---------------------------------------------------------------------------------------------------------
# Cases
# ---------------------------------------------------------------------------------------------------------


class Cases:
    def __init__(self):
        self.items = []

    def add(self, category, body, expect, *, mode="utf8", key="main", message=None, hash="sha256",
            padding="pkcs1", transform=None, signature=None):
        """One case. `message` is what `key` signs (default: the digest of the Python canonical form of
        the body in `mode`); `transform` edits the hex signature afterwards; `signature` fixes it outright."""
        if isinstance(body, str):
            body = body.encode("utf-8")
        if signature is None and message is None:
            ref = reference_canonical(body, mode)
            if ref is None:
                raise AssertionError(f"{category}: Python refuses this body in {mode} mode: {body[:120]!r}")
            message = digest_hex(ref).encode("utf-8")
        self.items.append({
            "category": category, "body": body, "expect": expect, "mode": mode, "key": key,
            "message": message, "hash": hash, "padding": padding, "transform": transform, "signature": signature,
        })

    def signed_payload(self, category, payload, body, expect="valid", *, mode="utf8", **kw):
        """A payload the service signed, sent as `body`. For an expected-valid case, checks that the
        receiver's view of the body (json.loads) has the same canonical form as the signed payload."""
        signed = canonical(payload, mode)
        if isinstance(body, str):
            body = body.encode("utf-8")
        if expect in ("valid", "valid-or-malformed") and kw.get("key", "main") == "main":
            if reference_canonical(body, mode) != signed:
                raise AssertionError(f"{category}: the body does not round-trip to the signed payload: {body[:200]!r}")
        if expect == "invalid" and category.startswith("tamper"):
            for m in ("utf8", "ascii"):
                got = reference_canonical(body, m)
                if got is None:
                    raise AssertionError(f"{category}: the tampered body must stay a JSON object")
                if digest_hex(got) == digest_hex(signed):
                    raise AssertionError(f"{category}: the tamper changes nothing in {m} mode")
        self.add(category, body, expect, mode=mode, message=digest_hex(signed).encode("utf-8"), **kw)


# ----- value pools -------------------------------------------------------------------------------------------

TEXTS = [
    "Grüße aus Köln, Straße",
    "Ça va? Très bien.",
    "Привет, мир",
    "こんにちは世界",
    "你好，世界",
    "مرحبا بالعالم",
    "שלום עולם",
    "नमस्ते दुनिया",
    "emoji 😀🎉👍🏽 family 👨\u200d👩\u200d👧\u200d👦",
    "math 𝔸𝕓𝕔 ∑∫√∞",
    "music 𝄞 clef",
    "zero\u200bwidth\u200cjoiners\u200d",
    "line\u2028sep\u2029para",
    "tab\tnewline\nquote\" backslash\\ slash / done",
    "nul\u0000byte",
    "bom \ufeff inside",
    "combining e\u0301 vs \u00e9",
    "halfwidth \uff61\uff71\uff72\uff73",
    "\U0010fffd last plane",
    "replacement \ufffd and \uffff",
    "plain ascii text",
    "",
    "control \u001f\u007f\u0080\u009f",
    "html <b>&amp;</b> 'single'",
]

SPECIAL_FLOATS = [
    1.0, 1e-07, 1e+16, -0.0, 0.1 + 0.2, 1e22, 1e21, 1e-05, 0.0001, 5e-324, 2.2250738585072014e-308,
    1.7976931348623157e+308, 9007199254740993.0, 123456789012345680.0, 0.1, 100.0, -1.5, 3.141592653589793,
    2.718281828459045, 1.2345678901234567e-10, 6.02214076e+23, 0.5, 2.5e-05, 1e+100, -2.0, 1e15, 123.456,
]

BIG_INTS = [
    2 ** 53, 2 ** 53 + 1, 2 ** 63 - 1, -(2 ** 63) - 1, 2 ** 64, 2 ** 64 + 1, 2 ** 70, 10 ** 25 + 7, 2 ** 128,
    -(10 ** 30) - 1, 123456789012345678901234567890,
]

FEATURES = [
    ("ocr", "ocr_async", ["amazon", "google", "microsoft", "mistral"], [None, "prebuilt-read", "mistral-ocr-latest"]),
    ("ocr", "financial_parser_async", ["amazon", "google", "veryfi"], [None, "v2"]),
    ("audio", "speech_to_text_async", ["openai", "deepgram", "assembly", "google"], ["whisper-1", "nova-2", None]),
    ("video", "object_tracking_async", ["google", "amazon"], [None]),
    ("video", "explicit_content_detection_async", ["google", "amazon"], [None, "latest"]),
    ("text", "embeddings", ["openai", "mistral", "cohere"], ["text-embedding-3-small", "mistral-embed"]),
    ("translation", "document_translation_async", ["deepl", "google"], [None]),
    ("image", "generation_async", ["openai", "stabilityai"], ["dall-e-3", "stable-diffusion-xl"]),
]

ERROR_CODES = ["provider_error", "provider_timeout", "invalid_input", "file_too_large", "unsupported_language"]


def uuid4(rng):
    h = f"{rng.getrandbits(128):032x}"
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{'89ab'[rng.randrange(4)]}{h[17:20]}-{h[20:]}"


def timestamp(rng):
    return (f"2026-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}T{rng.randint(0, 23):02d}:"
            f"{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}.{rng.randint(0, 999999):06d}+00:00")


def float17(rng):
    """A float of 16-17 significant digits, like an embedding or a confidence."""
    return rng.uniform(-1.0, 1.0) * 10.0 ** rng.randint(-3, 3)


def some_float(rng):
    return rng.choice(SPECIAL_FLOATS) if rng.random() < 0.5 else float17(rng)


def text(rng):
    return rng.choice(TEXTS)


def output_for(rng, feature, subfeature):
    if feature == "ocr" and subfeature == "ocr_async":
        return {
            "raw_text": text(rng),
            "pages": [{
                "lines": [{
                    "text": text(rng),
                    "confidence": rng.random(),
                    "bounding_box": {"left": rng.random(), "top": rng.random(), "width": float17(rng), "height": 1.0},
                } for _ in range(rng.randint(1, 3))],
            } for _ in range(rng.randint(1, 2))],
        }
    if feature == "ocr":
        return {"extracted_data": [{
            "invoice_number": f"INV-{rng.randint(1, 99999):05d}",
            "total": rng.choice([1.0, 19.99, 100.0, 0.1 + 0.2, 1e+16]),
            "currency": rng.choice(["EUR", "USD", "JPY"]),
            "merchant": {"name": text(rng), "tax_id": rng.choice(BIG_INTS)},
            "items": [{"description": text(rng), "quantity": rng.randint(1, 9), "unit_price": some_float(rng)}
                      for _ in range(rng.randint(0, 3))],
        }]}
    if feature == "audio":
        return {
            "text": text(rng),
            "diarization": {"total_speakers": rng.randint(1, 3), "entries": [{
                "segment": text(rng), "start_time": "0.0", "end_time": f"{rng.randint(1, 90)}.{rng.randint(0, 9)}",
                "speaker": rng.randint(1, 3), "confidence": rng.choice([1.0, rng.random()]),
            } for _ in range(rng.randint(0, 3))]},
        }
    if feature == "video":
        return {"moderation": [{"label": rng.choice(["Violence", "Nudity", "Weapons"]), "confidence": rng.random(),
                                "timestamps": [rng.randint(0, 10 ** 6) / 1000 for _ in range(rng.randint(0, 4))]}
                               for _ in range(rng.randint(0, 2))]}
    if feature == "text":
        return {"items": [{"embedding": [float17(rng) for _ in range(rng.randint(4, 12))], "index": i}
                          for i in range(rng.randint(1, 2))], "usage": {"tokens": rng.randint(1, 10 ** 6)}}
    if feature == "translation":
        return {"text": text(rng), "detected_language": rng.choice(["de", "fr", "ja", None])}
    return {"items": [{"image_resource_url": f"https://cdn.example.com/{uuid4(rng)}.png", "image": ""}]}


def user_parameters(rng):
    pool = [
        ("order_id", lambda: rng.choice(BIG_INTS)),
        ("ratio", lambda: 1.0),
        ("tiny", lambda: 1e-07),
        ("huge", lambda: 1e+16),
        ("neg_zero", lambda: -0.0),
        ("sum", lambda: 0.1 + 0.2),
        ("score", lambda: float17(rng)),
        ("weights", lambda: [some_float(rng) for _ in range(rng.randint(0, 5))]),
        ("tags", lambda: [text(rng) for _ in range(rng.randint(0, 3))]),
        ("note", lambda: text(rng)),
        ("customer", lambda: {"name": "José Ñúñez", "id": rng.choice(BIG_INTS), "vip": rng.random() < 0.5}),
        ("nested", lambda: {"a": [1, 2.5, {"b": None, "c": [[], {}]}], "ok": True, "deep": {"x": {"y": {"z": some_float(rng)}}}}),
        ("retries", lambda: rng.randint(-3, 3)),
        ("empty", lambda: {}),
        ("nothing", lambda: None),
    ]
    chosen = [pool[i] for i in sorted(rng.sample(range(len(pool)), rng.randint(1, 7)))]
    rng.shuffle(chosen)
    return {name: make() for name, make in chosen}


def realistic_payload(rng):
    feature, subfeature, providers, models = rng.choice(FEATURES)
    status = "success" if rng.random() < 0.7 else "fail"
    p = {
        "event": "async_job_completed",
        "job_id": uuid4(rng),
        "status": status,
        "feature": feature,
        "subfeature": subfeature,
        "provider": rng.choice(providers),
        "model": rng.choice(models),
        "created_at": timestamp(rng),
        "finished_at": timestamp(rng),
    }
    if status == "success":
        p["output"] = output_for(rng, feature, subfeature)
        if rng.random() < 0.2:
            p["error"] = None
    else:
        err = {"message": rng.choice(["Provider returned an error: ", "Timeout after 300.0 s: ", "Échec : "]) + text(rng)}
        if rng.random() < 0.6:
            err["error_code"] = rng.choice(ERROR_CODES)
        p["error"] = err
        if rng.random() < 0.3:
            p["output"] = None
    if rng.random() < 0.8:
        cents = rng.randint(0, 5_000_000)
        p["cost"] = f"{cents // 10 ** 6}.{cents % 10 ** 6:06d}".rstrip("0").rstrip(".") if rng.random() < 0.5 else f"{cents / 10 ** 6:.4f}"
    if rng.random() < 0.8:
        p["user_parameters"] = user_parameters(rng)
    if rng.random() < 0.15:
        p["original_response"] = {"raw": [some_float(rng), rng.choice(BIG_INTS), text(rng)], "status_code": 200}
    return p


def shuffled(rng, value):
    """The same value with every object's keys in a random order."""
    if isinstance(value, dict):
        items = list(value.items())
        rng.shuffle(items)
        return {k: shuffled(rng, v) for k, v in items}
    if isinstance(value, list):
        return [shuffled(rng, v) for v in value]
    return value


# ----- fuzz values -------------------------------------------------------------------------------------------


def random_char(rng, allow_lone):
    r = rng.random()
    if r < 0.35:
        return chr(rng.randint(0x20, 0x7E))
    if r < 0.42:
        return chr(rng.randint(0x00, 0x1F))
    if r < 0.52:
        return chr(rng.randint(0x80, 0x2FF))
    if r < 0.62:
        return chr(rng.choice([0x7F, 0x2028, 0x2029, 0xFEFF, 0xFFFF, 0xFFFE, 0xFF61, 0xE000, 0xFFFD, 0x200D]))
    if r < 0.77:
        c = rng.randint(0x300, 0xFFFD)
        return chr(c) if not 0xD800 <= c <= 0xDFFF else "\u4e2d"
    if r < 0.92:
        return chr(rng.choice([0x1F600, 0x1D11E, 0x10000, 0x10FFFF, rng.randint(0x10000, 0x10FFFF)]))
    if allow_lone:
        return chr(rng.randint(0xD800, 0xDFFF))
    return "\\"


def random_string(rng, allow_lone, max_len=12):
    out = []
    for _ in range(rng.randint(0, max_len)):
        c = random_char(rng, allow_lone)
        # A high surrogate followed by a low one would be joined into one character by json.loads of the
        # escaped body: keep lone surrogates lone.
        if out and 0xD800 <= ord(out[-1]) <= 0xDBFF and 0xDC00 <= ord(c) <= 0xDFFF:
            c = "x"
        out.append(c)
    return "".join(out)


def random_float(rng):
    r = rng.random()
    if r < 0.25:
        return rng.choice(SPECIAL_FLOATS)
    if r < 0.5:
        return float17(rng)
    if r < 0.6:
        return float(rng.randint(-10 ** 6, 10 ** 6))
    if r < 0.7:
        return rng.getrandbits(52) * 2.0 ** -1074  # subnormal
    mantissa = 1 + rng.getrandbits(52) / 2 ** 52
    return (-1) ** rng.randint(0, 1) * mantissa * 2.0 ** rng.randint(-1022, 1023)


def random_int(rng):
    r = rng.random()
    if r < 0.4:
        return rng.randint(-1000, 1000)
    if r < 0.7:
        return rng.choice(BIG_INTS)
    return rng.randint(-(2 ** 200), 2 ** 200)


def random_value(rng, depth, allow_lone):
    r = rng.random()
    if depth <= 0 or r < 0.5:
        kind = rng.randrange(7)
        if kind == 0:
            return None
        if kind == 1:
            return rng.random() < 0.5
        if kind == 2:
            return random_int(rng)
        if kind in (3, 4):
            return random_float(rng)
        return random_string(rng, allow_lone)
    if r < 0.75:
        return [random_value(rng, depth - 1, allow_lone) for _ in range(rng.randint(0, 4))]
    return random_object(rng, depth - 1, allow_lone)


def random_object(rng, depth, allow_lone):
    obj = {}
    for _ in range(rng.randint(0, 5)):
        r = rng.random()
        if r < 0.15:
            key = rng.choice(["__proto__", "constructor", "prototype", "toString", "10", "9", "01", "-1", "", " "])
        elif r < 0.3:
            key = str(rng.randint(0, 2 ** 33))
        else:
            key = random_string(rng, allow_lone, 8)
        obj[key] = random_value(rng, depth, allow_lone)
    return obj


# ----- the sets ----------------------------------------------------------------------------------------------

REALISTIC_PER_STYLE = 60
FUZZ_CASES = 48


def build_cases():
    rng = random.Random(SEED)
    cases = Cases()
    realistic = []  # (payload, mode) of the requests-style cases, reused by tamper and sig cases

    # Realistic webhooks, each body style sent by a different kind of client.
    for style in ("requests", "compact", "canonical", "shuffled-pretty"):
        for i in range(REALISTIC_PER_STYLE):
            payload = realistic_payload(rng)
            mode = "ascii" if i % 3 == 2 else "utf8"
            if style == "requests":
                body = json.dumps(payload)  # requests' json=: ensure_ascii, ", " and ": "
                realistic.append((payload, mode))
            elif style == "compact":
                body = json.dumps(payload, separators=(",", ":"), ensure_ascii=rng.random() < 0.3)
            elif style == "canonical":
                body = canonical(payload, mode)
            else:
                body = json.dumps(shuffled(rng, payload), indent=rng.choice([2, 4, "\t", 1]),
                                  ensure_ascii=rng.random() < 0.5)
            cases.signed_payload(f"realistic-{style}-body", payload, body, mode=mode)

    # Fuzz: random JSON values in a webhook frame; lone surrogates only in ascii mode (the utf8 canonical
    # form of a lone surrogate cannot be UTF-8 encoded, so the service could not sign it).
    for i in range(FUZZ_CASES):
        mode = "ascii" if i % 2 else "utf8"
        allow_lone = mode == "ascii"
        payload = {"event": "async_job_completed", "job_id": uuid4(rng),
                   "status": rng.choice(["success", "fail"]), "output": random_value(rng, 3, allow_lone)}
        payload.update(random_object(rng, 3, allow_lone))
        payload["user_parameters"] = random_object(rng, 4, allow_lone)
        ensure_ascii = allow_lone or rng.random() < 0.5
        if rng.random() < 0.5:
            body = json.dumps(payload, ensure_ascii=ensure_ascii)
        else:
            body = json.dumps(shuffled(rng, payload), ensure_ascii=ensure_ascii, indent=rng.choice([None, 2]),
                              separators=rng.choice([None, (",", ":")]))
        cases.signed_payload("fuzz", payload, body, mode=mode)

    add_traps(cases, rng)
    add_tampers(cases, rng, realistic)
    add_sig_cases(cases, realistic)
    add_malformed(cases, realistic)
    return cases


def frame(rng, **fields):
    p = {"event": "async_job_completed", "job_id": uuid4(rng), "status": "success", "feature": "ocr",
         "subfeature": "ocr_async", "provider": "google", "model": None, "created_at": timestamp(rng),
         "finished_at": timestamp(rng)}
    p.update(fields)
    return p


def frame_text(rng, inner):
    """A webhook body written by hand around `inner` (the text of the user_parameters value)."""
    head = json.dumps(frame(rng))[:-1]
    return f'{head}, "output": {{"raw_text": "x"}}, "user_parameters": {inner}}}'


def add_traps(cases, rng):
    # Float forms: bodies written with number spellings Python reads to a float and writes back its way.
    float_bodies = [
        '{"a": 1E2, "b": 1.50, "c": -0, "d": 0.1e1, "e": 1e-400, "f": 10000000000000000.0, "g": 1.0000000000000002}',
        '{"h": 0.30000000000000004, "i": 1e+16, "j": 5e-324, "k": 2.4e-7, "l": 123456789012345678901234567890.0}',
        '{"m": 1.7976931348623157e308, "n": 0.000001, "o": -0.0, "p": 1e21, "q": 1e-7, "r": 1E-5, "s": 1e+015}',
        '{"t": 0.1000000000000000055511151231257827, "u": 9007199254740993.0, "v": 2.0e0, "w": -1e-0, "x": 100e-2}',
        '{"y": 4.35, "z": 0.000123456789012345678, "aa": 12345678.9, "ab": 1e16, "ac": 1e15, "ad": 123456789012345678.0}',
    ]
    for i, inner in enumerate(float_bodies):
        for mode in ("utf8", "ascii") if i < 2 else ("utf8",):
            cases.add("trap-float-forms", frame_text(rng, inner), "valid", mode=mode)
    # The same floats as the service writes them (repr), in a payload.
    p = frame(rng, user_parameters={f"f{i:02d}": f for i, f in enumerate(SPECIAL_FLOATS)})
    cases.signed_payload("trap-float-forms", p, json.dumps(p))

    # Big integers: beyond 2^53 and 2^64, negative, and the longest Python 3.11+ reads (4300 digits).
    ints = {f"i{i:02d}": n for i, n in enumerate(BIG_INTS + [-(2 ** 64) - 1, 2 ** 256, -0, 10 ** 300])}
    p = frame(rng, user_parameters=ints)
    cases.signed_payload("trap-big-ints", p, json.dumps(p))
    cases.signed_payload("trap-big-ints", p, json.dumps(p, separators=(",", ":")), mode="ascii")
    cases.add("trap-big-ints", frame_text(rng, '{"minus_zero": -0, "e": 18446744073709551617, "f": -9223372036854775809}'), "valid")
    longest = int("9" * 4300)
    p = frame(rng, user_parameters={"longest": longest, "longest_negative": -longest})
    cases.signed_payload("trap-big-ints", p, json.dumps(p))

    # Key order: Python sorts by code point; UTF-16 code unit order differs above U+FFFF.
    keys = ["\uff61", "😀", "a", "B", "é", "e\u0301", "\ue000", "\U00010000", "", " ", "Z", "_", "~", "\u007f",
            "\U0010ffff", "\ufffd", "aa", "a\u0000", "A"]
    for mode in ("utf8", "ascii"):
        p = frame(rng, user_parameters={k: i for i, k in enumerate(keys)})
        cases.signed_payload("trap-key-order-codepoints", p, json.dumps(p, ensure_ascii=mode == "ascii"), mode=mode)
    p = frame(rng, user_parameters={"\udc00": "lone low", "😀": "astral", "\uff61": "bmp", "\ud800": "lone high",
                                   "\ue000": "private use"})
    cases.signed_payload("trap-key-order-codepoints", p, json.dumps(p), mode="ascii")

    # Integer-like keys: JavaScript objects enumerate array-index keys first, in numeric order.
    ik = ["10", "9", "1", "01", "-1", "1.5", "4294967295", "4294967294", "a", "2", "0", "1e3", "00"]
    for mode in ("utf8", "ascii"):
        up = {k: k for k in ik}
        p = frame(rng, user_parameters=up, output={"10": [1], "2": {"1": None, "0": True}})
        cases.signed_payload("trap-integer-like-keys", p, json.dumps(p), mode=mode)

    # Prototype keys, at the top level and nested.
    proto = {"__proto__": {"polluted": True}, "constructor": {"prototype": {"x": 1}}, "toString": "x",
             "hasOwnProperty": 1, "valueOf": None, "__defineGetter__": [], "prototype": False}
    p = frame(rng, user_parameters=proto)
    cases.signed_payload("trap-prototype-keys", p, json.dumps(p))
    p = frame(rng, user_parameters={"a": [proto]}, **{"__proto__": {"status": "fail"}, "constructor": "c"})
    cases.signed_payload("trap-prototype-keys", p, json.dumps(p, separators=(",", ":")), mode="ascii")
    cases.add("trap-prototype-keys", '{"__proto__": null, "__proto__": {"a": 1}, "x": {"__proto__": []}}', "valid")

    # Escapes written by hand in the body (\/, upper-case hex, an escaped surrogate pair, NUL, U+2028).
    esc = [
        r'{"nul": "a\u0000b", "ls": "\u2028\u2029", "slash": "\/path\/to", "ctl": "\b\f\n\r\t\u001f\u007f"}',
        r'{"upper": "\u00E9\u00e9", "pair": "\ud83d\ude00", "PAIR": "\uD83D\uDE00", "q": "\"\\", "bmp": "\uff61"}',
        r'{"mix": "caf\u00e9 cafe\u0301 \u4e2d\u6587", "del": "\u007f", "c1": "\u0085\u009f", "bom": "\ufeff"}',
    ]
    for inner in esc:
        for mode in ("utf8", "ascii"):
            cases.add("trap-escapes", frame_text(rng, inner), "valid", mode=mode)
    cases.add("trap-escapes", frame_text(rng, r'{"lone": "\ud800", "low": "\udfff x", "rev": "\ude00\ud83d"}'), "valid",
              mode="ascii")

    # Empty containers and strings.
    p = frame(rng, output={}, user_parameters={"a": [], "b": {}, "c": [[]], "d": [{}], "e": "", "f": {"g": {}}})
    cases.signed_payload("trap-empty-containers", p, json.dumps(p))
    cases.signed_payload("trap-empty-containers", p, json.dumps(p, indent=2), mode="ascii")
    cases.add("trap-empty-containers", "{}", "valid")
    cases.add("trap-empty-containers", '{"":{"":[]}}', "valid", mode="ascii")

    # Non-ASCII mixed: body escaped while the signer wrote UTF-8, and the other way round.
    mixed = {"t": TEXTS[:12], "key é": "ü", "😀": {"ключ": "значение", "鍵": "値"}}
    for body_ascii, mode in ((True, "utf8"), (False, "ascii"), (False, "utf8"), (True, "ascii")):
        p = frame(rng, output={"raw_text": "Grüße 😀"}, user_parameters=mixed)
        cases.signed_payload("trap-non-ascii-mixed", p, json.dumps(p, ensure_ascii=body_ascii), mode=mode)

    # Duplicate keys: Python's dict keeps the last value (at the first key's place; sorting hides that).
    dups = [
        '{"a": 1, "a": 2, "b": {"c": "first", "c": "last"}}',
        '{"x": [1], "y": true, "x": {"z": null}}',
    ]
    for inner in dups:
        cases.add("trap-duplicate-keys", frame_text(rng, inner), "valid")
    head = json.dumps(frame(rng, status="success"))[:-1]
    cases.add("trap-duplicate-keys", f'{head}, "output": {{"raw_text": "x"}}, "status": "fail", "error": {{"message": "m"}}}}',
              "valid")

    # Whitespace JSON allows (space, tab, LF, CR) around and between every token.
    p = frame(rng, user_parameters={"a": [1, 2.0, {"b": None}]})
    body = " \r\n\t" + json.dumps(p, indent="\t").replace(": ", " :\r\n ").replace("[", "[ \n") + "\n \t\r\n"
    cases.signed_payload("trap-whitespace", p, body)

    # Deep nesting (well within Python's recursion limit and the receiver's default depth).
    deep = "x"
    for i in range(100):
        deep = [deep] if i % 2 else {"d": deep}
    p = frame(rng, user_parameters={"deep": deep})
    cases.signed_payload("trap-deep-nesting", p, json.dumps(p, separators=(",", ":")))

    # Python accepts these and they verify; a strict RFC 8259 / I-JSON receiver may refuse them as malformed.
    # NaN / Infinity: the service's json.dumps writes them (allow_nan=True), json.loads reads them back.
    for values, mode in (({"nan": float("nan")}, "utf8"), ({"inf": float("inf"), "ninf": float("-inf")}, "utf8"),
                         ({"all": [float("nan"), float("inf"), float("-inf"), 1.0]}, "ascii")):
        p = frame(rng, user_parameters=values)
        cases.add("trap-nonfinite", json.dumps(p), "valid-or-malformed", mode=mode,
                  message=digest_hex(canonical(p, mode)).encode("utf-8"))
    # 1e400 overflows to inf: Python writes it back as Infinity.
    cases.add("trap-nonfinite", frame_text(rng, '{"overflow": 1e400, "negative": -1e400}'), "valid-or-malformed")
    # A UTF-8 byte order mark: json.loads(bytes) skips it.
    p = realistic_payload(rng)
    cases.add("trap-utf8-bom", b"\xef\xbb\xbf" + json.dumps(p).encode("utf-8"), "valid-or-malformed",
              message=digest_hex(canonical(p, "utf8")).encode("utf-8"))
    # A UTF-16 body: json.loads(bytes) detects UTF-16 and UTF-32; RFC 8259 requires UTF-8.
    p = frame(rng, output={"raw_text": "Grüße"})
    cases.add("trap-utf16-body", json.dumps(p).encode("utf-16"), "valid-or-malformed",
              message=digest_hex(canonical(p, "utf8")).encode("utf-8"))
    # Surrogates encoded in UTF-8 (CESU-8 style, ill-formed UTF-8): json.loads(bytes) decodes with
    # surrogatepass; only the ascii canonical form can carry them.
    head = json.dumps(frame(rng))[:-1].encode("utf-8")
    for raw in (b"\xed\xa0\x80", b"\xed\xa0\xbd\xed\xb8\x80"):
        body = head + b', "output": {"raw_text": "a' + raw + b'b"}}'
        cases.add("trap-raw-surrogate-bytes", body, "valid-or-malformed", mode="ascii")


def add_tampers(cases, rng, realistic):
    """Bodies edited after signing: every one must be refused (signature invalid)."""
    def pick(pred, n=1):
        found = [(p, m) for p, m in realistic if pred(p)]
        return found[:n]

    def edit(payload, mutate):
        q = json.loads(json.dumps(payload))
        mutate(q)
        return q

    for payload, mode in pick(lambda p: True, 3):
        job = payload["job_id"]
        new = job[:-1] + ("0" if job[-1] != "0" else "1")
        cases.signed_payload("tamper-job_id", payload, json.dumps(payload).replace(job, new), "invalid", mode=mode)

    # 1.0 -> 1: the value is equal in JavaScript, not in the canonical bytes.
    for payload, mode in pick(lambda p: ": 1.0" in json.dumps(p), 3):
        body = json.dumps(payload).replace(": 1.0", ": 1", 1)
        cases.signed_payload("tamper-float-to-int", payload, body, "invalid", mode=mode)

    for payload, mode in pick(lambda p: p["status"] == "success", 1):
        body = json.dumps(payload).replace('"status": "success"', '"status": "fail"', 1)
        cases.signed_payload("tamper-status", payload, body, "invalid", mode=mode)
    for payload, mode in pick(lambda p: "cost" in p, 1):
        cases.signed_payload("tamper-drop", payload, json.dumps(edit(payload, lambda q: q.pop("cost"))), "invalid",
                             mode=mode)
    for payload, mode in pick(lambda p: True, 1):
        cases.signed_payload("tamper-add", payload, json.dumps(edit(payload, lambda q: q.update(refund=True))), "invalid",
                             mode=mode)
    for payload, mode in pick(lambda p: "user_parameters" in p, 2):
        body = json.dumps(edit(payload, lambda q: q["user_parameters"].update(tenant="attacker")))
        cases.signed_payload("tamper-user-param", payload, body, "invalid", mode=mode)
    # A later duplicate key overrides the signed value (Python keeps the last).
    for payload, mode in pick(lambda p: p["status"] == "fail", 1):
        body = json.dumps(payload)[:-1] + ', "status": "success"}'
        cases.signed_payload("tamper-duplicate-key", payload, body, "invalid", mode=mode)
    # Changes a float-based or a bigint-rounding verifier would not see.
    for payload, mode in pick(lambda p: str(2 ** 64 + 1) in json.dumps(p), 1):
        body = json.dumps(payload).replace(str(2 ** 64 + 1), str(2 ** 64), 1)
        cases.signed_payload("tamper-big-int", payload, body, "invalid", mode=mode)
    p = frame(rng, user_parameters={"sum": 0.1 + 0.2, "name": "caf\u00e9"})
    cases.signed_payload("tamper-float-digits", p, json.dumps(p).replace("0.30000000000000004", "0.3"), "invalid")
    cases.signed_payload("tamper-unicode-normalization", p, json.dumps(p).replace("caf\\u00e9", "cafe\\u0301"), "invalid")


def add_sig_cases(cases, realistic):
    """Well-formed bodies with a signature that must not verify (except upper-case hex, see README)."""
    payload, mode = realistic[0]
    body = json.dumps(payload)
    canon = canonical(payload, mode)
    dig = digest_hex(canon)
    msg = dig.encode("utf-8")

    def flip(hexsig):
        b = bytearray(bytes.fromhex(hexsig))
        b[len(b) // 2] ^= 0x01
        return b.hex()

    cases.add("sig-other-key", body, "invalid", mode=mode, key="other", message=msg)
    cases.add("sig-truncated", body, "invalid", mode=mode, message=msg, transform=lambda s: s[:-2])
    cases.add("sig-truncated", body, "invalid", mode=mode, message=msg, transform=lambda s: s[:-1])
    cases.add("sig-bitflip", body, "invalid", mode=mode, message=msg, transform=flip)
    cases.add("sig-empty", body, "invalid", mode=mode, signature="")
    cases.add("sig-not-hex", body, "invalid", mode=mode, message=msg, transform=lambda s: s[:10] + "zz" + s[12:])
    cases.add("sig-not-hex", body, "invalid", mode=mode, message=msg, transform=lambda s: "0x" + s)
    cases.add("sig-doubled", body, "invalid", mode=mode, message=msg, transform=lambda s: s + s)
    cases.add("sig-sha1", body, "invalid", mode=mode, message=msg, hash="sha1")
    cases.add("sig-pss", body, "invalid", mode=mode, message=msg, padding="pss0")
    cases.add("sig-over-raw-digest", body, "invalid", mode=mode, message=bytes.fromhex(dig))
    cases.add("sig-over-uppercase-digest", body, "invalid", mode=mode, message=dig.upper().encode("utf-8"))
    cases.add("sig-over-canonical", body, "invalid", mode=mode, message=canon)
    cases.add("sig-over-default-dumps", body, "invalid", mode=mode,
              message=digest_hex(json.dumps(payload).encode("utf-8")).encode("utf-8"))
    cases.add("sig-over-body", body, "invalid", mode=mode,
              message=digest_hex(body.encode("utf-8")).encode("utf-8"))
    # Hex is case-insensitive: the same signature bytes, written in upper case, verify (packages/core and
    # Python's bytes.fromhex both read either case).
    cases.add("sig-uppercase-hex", body, "valid", mode=mode, message=msg, transform=str.upper)


def add_malformed(cases, realistic):
    """Bodies that are not a JSON object Python reads (the signature is well-formed hex)."""
    payload, _ = realistic[1]
    body = json.dumps(payload).encode("utf-8")
    signed = digest_hex(canonical(payload, "utf8")).encode("utf-8")
    head = body[:-1]
    bad = [
        ("malformed-not-json", b"hello, world"),
        ("malformed-not-json", b"<xml>async_job_completed</xml>"),
        ("malformed-truncated", body[: len(body) // 2]),
        ("malformed-truncated", body[:-1]),
        ("malformed-empty", b""),
        ("malformed-whitespace-only", b" \r\n\t"),
        ("malformed-array", json.dumps([payload]).encode("utf-8")),
        ("malformed-string", json.dumps("async_job_completed").encode("utf-8")),
        ("malformed-scalar", b"42"),
        ("malformed-scalar", b"null"),
        ("malformed-invalid-utf8", head + b', "x": "\xff\xfe"}'),
        ("malformed-invalid-utf8", head + b', "x": "\xc0\xaf"}'),  # overlong '/'
        ("malformed-invalid-utf8", head + b', "x": "\xe2\x82"}'),  # truncated sequence
        ("malformed-trailing-garbage", body + b"x"),
        ("malformed-trailing-garbage", body + body),
        ("malformed-nan-literal-bare", b"NaN"),
        ("malformed-single-quotes", b"{'event': 'async_job_completed'}"),
        ("malformed-trailing-comma", head + b",}"),
        ("malformed-comment", b"/* c */" + body),
        ("malformed-raw-control-char", head + b', "x": "a\tb"}'),
        ("malformed-bad-escape", head + b', "x": "\\x41"}'),
        ("malformed-bad-escape", head + b', "x": "\\u12"}'),
        ("malformed-number", head + b', "x": 01}'),
        ("malformed-number", head + b', "x": +1}'),
        ("malformed-number", head + b', "x": .5}'),
        ("malformed-number", head + b', "x": 1.}'),
        ("malformed-literal", head + b', "x": nan}'),
        ("malformed-literal", head + b', "x": True}'),
        ("malformed-literal", head + b', "x": +Infinity}'),
        ("malformed-unquoted-key", head + b", x: 1}"),
        # Python 3.11+ refuses integers of more than 4300 digits (int_max_str_digits).
        ("malformed-int-too-long", head + b', "x": ' + b"9" * 4301 + b"}"),
        ("malformed-non-json-whitespace", b"\x0c" + body),
        ("malformed-non-json-whitespace", b"\xc2\xa0" + body),
    ]
    for category, b in bad:
        if reference_canonical(b, "utf8") is not None or reference_canonical(b, "ascii") is not None:
            raise AssertionError(f"{category}: Python reads this body: {b[:120]!r}")
        cases.add(category, b, "malformed", message=signed)
    # A broken body and a broken signature: whichever a verifier checks first decides invalid or malformed.
    cases.add("sig-and-body-broken", b"{", "not-valid", signature="")
    cases.add("sig-and-body-broken", body[: len(body) // 3], "not-valid", message=signed,
              transform=lambda s: s[:20] + "zz" + s[22:])


# ---------------------------------------------------------------------------------------------------------
# Output
# ---------------------------------------------------------------------------------------------------------


def render(cases):
    to_sign = [c for c in cases.items if c["signature"] is None]
    request = [{"key": c["key"], "message_b64": base64.b64encode(c["message"]).decode("ascii"), "hash": c["hash"],
                "padding": c["padding"]} for c in to_sign]
    answer = json.loads(run_node(NODE_SIGN, [KEYS_DIR], json.dumps(request).encode("utf-8")))
    if len(answer["signatures"]) != len(to_sign):
        sys.exit("generate.py: node returned the wrong number of signatures")
    for c, sig in zip(to_sign, answer["signatures"]):
        c["signature"] = c["transform"](sig) if c["transform"] else sig
    lines = []
    for n, c in enumerate(cases.items):
        record = {
            "id": f"{c['category']}-{n:03d}",
            "category": c["category"],
            "body_b64": base64.b64encode(c["body"]).decode("ascii"),
            "signature": c["signature"],
            "key": c["key"],
            "mode": c["mode"],
            "expect": c["expect"],
        }
        lines.append(json.dumps(record, ensure_ascii=True) + "\n")
    return "".join(lines).encode("ascii"), answer["public"]


def public_keys_match(public):
    problems = []
    for name, forms in sorted(public.items()):
        for form, suffix in (("spki", "public.pem"), ("pkcs1", "public.pkcs1.pem")):
            path = os.path.join(KEYS_DIR, f"{name}.{suffix}")
            with open(path, "rb") as f:
                if f.read() != forms[form].encode("ascii"):
                    problems.append(f"{path} is not the public key of {name}.private.pem")
    return problems


def main(argv):
    check = "--check" in argv
    unknown = [a for a in argv if a != "--check"]
    if unknown:
        sys.exit(f"usage: python3 vectors/generate.py [--check]  (unknown: {' '.join(unknown)})")
    if check:
        missing = missing_key_files()
        if missing:
            print("generate.py --check: key files are missing: " + ", ".join(missing), file=sys.stderr)
            return 1
    else:
        ensure_keys()
    data, public = render(build_cases())
    count = data.count(b"\n")
    problems = public_keys_match(public)
    if check:
        try:
            with open(OUT_FILE, "rb") as f:
                committed = f.read()
        except FileNotFoundError:
            committed = None
        if committed is None:
            problems.append(f"{OUT_FILE} is missing")
        elif committed != data:
            old, new = committed.split(b"\n"), data.split(b"\n")
            first = next((i for i in range(max(len(old), len(new)))
                          if i >= len(old) or i >= len(new) or old[i] != new[i]), None)
            problems.append(f"{OUT_FILE} differs from the generator's output: {len(old) - 1} committed lines, "
                            f"{len(new) - 1} generated; first difference at line {first + 1}")
        if problems:
            for p in problems:
                print("generate.py --check: " + p, file=sys.stderr)
            print("Run `python3 vectors/generate.py` and commit vectors/vectors.jsonl.", file=sys.stderr)
            return 1
        print(f"generate.py --check: {OUT_FILE} matches the generator ({count} cases)")
        return 0
    if problems:
        for p in problems:
            print("generate.py: " + p, file=sys.stderr)
        return 1
    with open(OUT_FILE, "wb") as f:
        f.write(data)
    print(f"wrote {count} cases to {OUT_FILE}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
