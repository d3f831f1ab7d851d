#!/usr/bin/env python3
"""Makes one webhook body as a Python service of the spec does, standard library only.

    python3 python-signed-deliveries.py JOB_ID FINISHED_AT

Prints one JSON line: {"body_b64", "digest", "expected_event_json"}.
- body: what `requests.post(url, json=payload)` sends, `json.dumps(payload)` (ASCII with \\u escapes,
  ", " and ": " separators, keys in insertion order): not the canonical form, so the receiver has to
  rebuild that itself.
- digest: the SHA-256 hex digest of the canonical form the spec signs,
  `json.dumps(payload, sort_keys=True, indent=2, ensure_ascii=False).encode("utf-8")`. The caller signs
  it with RSA PKCS#1 v1.5 / SHA-256 (the one step that needs no Python: any RSA library signs alike).
- expected_event_json: the event a JavaScript receiver hands over (integers beyond 2**53 - 1 as their
  digit strings, floats as numbers), as JSON.
"""

import base64
import hashlib
import json
import sys

job_id, finished_at = sys.argv[1], sys.argv[2]
payload = {
    "event": "async_job_completed",
    "job_id": job_id,
    "status": "success",
    "feature": "text",
    "subfeature": "generation",
    "provider": "openai",
    "model": None,
    "created_at": finished_at,
    "finished_at": finished_at,
    "output": {
        "text": "Grüße, 世界 — \U0001F600",
        "score": 1.0,
        "ratio": 1e-07,
        "tokens": 123456789012345678901234567890,
        "items": [{"b": 2, "a": [1, 2.5, None, True]}],
    },
    "user_parameters": {"order": "A-17"},
}


def expected(value):
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        return value if abs(value) <= 2**53 - 1 else str(value)
    if isinstance(value, dict):
        return {key: expected(item) for key, item in value.items()}
    if isinstance(value, list):
        return [expected(item) for item in value]
    return value


canonical = json.dumps(payload, sort_keys=True, indent=2, ensure_ascii=False).encode("utf-8")
print(
    json.dumps(
        {
            "body_b64": base64.b64encode(json.dumps(payload).encode("utf-8")).decode("ascii"),
            "digest": hashlib.sha256(canonical).hexdigest(),
            "expected_event_json": json.dumps(expected(payload)),
        }
    )
)
