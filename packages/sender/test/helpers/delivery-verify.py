"""Verifies webhook deliveries as a Python client of the service would (spec 6.3).

Usage: python3 delivery-verify.py <public-key.pem (SPKI)>
Reads JSONL on stdin, one delivery a line: {"id", "body_b64", "signature", "via": "auto" | "openssl"}.
Writes JSONL on stdout: a meta line {"meta": {"python", "cryptography"}}, then per delivery:

  {"id", "ok": bool, "via": "cryptography" | "openssl", "digest": <sha256 hex of the canonical form>,
   "body_is_canonical": bool, "user_parameters": <json.dumps(value, sort_keys=True, ensure_ascii=False)> | null,
   "error": <text> (when something raised)}

The canonical form is the service's (python profile): json.dumps(json.loads(body), sort_keys=True,
indent=2, ensure_ascii=False). "auto" verifies with the cryptography module when importable and with
`openssl dgst -sha256 -verify` otherwise; "openssl" forces the latter.
"""
import base64
import hashlib
import json
import os
import subprocess
import sys
import tempfile

try:
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import padding

    import cryptography

    CRYPTOGRAPHY = cryptography.__version__
except Exception:  # pragma: no cover - depends on the machine
    CRYPTOGRAPHY = None


def verify_cryptography(pem, digest, signature):
    key = serialization.load_pem_public_key(pem)
    try:
        key.verify(signature, digest.encode("utf-8"), padding.PKCS1v15(), hashes.SHA256())
        return True
    except InvalidSignature:
        return False


def verify_openssl(pem_path, digest, signature):
    with tempfile.TemporaryDirectory() as tmp:
        msg = os.path.join(tmp, "digest.txt")
        sig = os.path.join(tmp, "signature.bin")
        with open(msg, "wb") as f:
            f.write(digest.encode("utf-8"))
        with open(sig, "wb") as f:
            f.write(signature)
        run = subprocess.run(
            ["openssl", "dgst", "-sha256", "-verify", pem_path, "-signature", sig, msg],
            capture_output=True,
        )
        return run.returncode == 0


def handle(case, pem_path, pem):
    out = {"id": case["id"]}
    try:
        body = base64.b64decode(case["body_b64"])
        value = json.loads(body)
        canonical = json.dumps(value, sort_keys=True, indent=2, ensure_ascii=False).encode("utf-8")
        digest = hashlib.sha256(canonical).hexdigest()
        signature = bytes.fromhex(case["signature"])
        if case.get("via") == "openssl" or CRYPTOGRAPHY is None:
            out["via"] = "openssl"
            out["ok"] = verify_openssl(pem_path, digest, signature)
        else:
            out["via"] = "cryptography"
            out["ok"] = verify_cryptography(pem, digest, signature)
        out["digest"] = digest
        out["body_is_canonical"] = body == canonical
        params = value.get("user_parameters")
        out["user_parameters"] = None if params is None else json.dumps(params, sort_keys=True, ensure_ascii=False)
    except Exception as exc:
        out["ok"] = False
        out["error"] = "%s: %s" % (type(exc).__name__, exc)
    return out


def main():
    pem_path = sys.argv[1]
    with open(pem_path, "rb") as f:
        pem = f.read()
    write = sys.stdout.write
    write(json.dumps({"meta": {"python": sys.version.split()[0], "cryptography": CRYPTOGRAPHY}}) + "\n")
    for line in sys.stdin:
        if line.strip():
            write(json.dumps(handle(json.loads(line), pem_path, pem), ensure_ascii=False) + "\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
