"""Differential-test oracle for @jobhook/core's canonical profiles.

Reads JSONL on stdin, one case a line: {"id": ..., "body_b64": ...}.
Writes JSONL on stdout: first a meta line {"meta": {...}}, then one line per case:

  {"id": ..., "encoding": <json.detect_encoding(body)>,
   "loads": "ok" | "error", "loads_error": "<Type: message>" (when loads failed),
   "is_object": bool (when loads succeeded),
   "python": R, "python-ascii": R, "orjson": R}

where R is {"b64": <canonical bytes>} or {"error": "<Type: message>"} (or {"skipped": true} for
orjson when it cannot be imported). Canonical forms are only computed when loads succeeded.
"""
import base64
import json
import json.decoder
import sys

try:
    import orjson  # type: ignore

    ORJSON_OPTIONS = orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS
    ORJSON_VERSION = getattr(orjson, "__version__", "unknown")
    ORJSON_IMPORT_ERROR = None
except Exception as exc:  # pragma: no cover - depends on the machine
    orjson = None
    ORJSON_OPTIONS = 0
    ORJSON_VERSION = None
    ORJSON_IMPORT_ERROR = "%s: %s" % (type(exc).__name__, exc)


def describe(exc):
    text = str(exc)
    if len(text) > 200:
        text = text[:200] + "..."
    return "%s: %s" % (type(exc).__name__, text)


def run(fn):
    try:
        return {"b64": base64.b64encode(fn()).decode("ascii")}
    except Exception as exc:  # RecursionError, UnicodeEncodeError, orjson.JSONEncodeError, ...
        return {"error": describe(exc)}


def handle(case):
    body = base64.b64decode(case["body_b64"])
    out = {"id": case["id"]}
    try:
        out["encoding"] = json.detect_encoding(body)
    except Exception as exc:
        out["encoding"] = "error: " + describe(exc)
    try:
        value = json.loads(body)
    except Exception as exc:  # JSONDecodeError, UnicodeDecodeError, ValueError (4300 digits), RecursionError
        out["loads"] = "error"
        out["loads_error"] = describe(exc)
        return out
    out["loads"] = "ok"
    out["is_object"] = isinstance(value, dict)
    out["python"] = run(
        lambda: json.dumps(value, sort_keys=True, indent=2, ensure_ascii=False).encode("utf-8")
    )
    out["python-ascii"] = run(
        lambda: json.dumps(value, sort_keys=True, indent=2, ensure_ascii=True).encode("utf-8")
    )
    if orjson is None:
        out["orjson"] = {"skipped": True}
    else:
        out["orjson"] = run(lambda: orjson.dumps(value, option=ORJSON_OPTIONS))
    return out


def main():
    meta = {
        "python": sys.version.split()[0],
        "orjson": ORJSON_VERSION,
        "orjson_error": ORJSON_IMPORT_ERROR,
        "int_max_str_digits": getattr(sys, "get_int_max_str_digits", lambda: None)(),
    }
    write = sys.stdout.write
    write(json.dumps({"meta": meta}) + "\n")
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        write(json.dumps(handle(json.loads(line))) + "\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
