// Cross-checks the benchmark payloads against a real python3 (not needed to run the benchmarks):
// - each `python` body is exactly `json.dumps(json.loads(body))`;
// - each `compact` body is exactly `json.dumps(json.loads(body), separators=(",", ":"), ensure_ascii=False)`;
// - both bodies load to the same value;
// - `canonicalize(body)` from @jobhook/core equals `json.dumps(v, sort_keys=True, indent=2, ensure_ascii=False)`.
//
// Usage: node bench/check-payloads.mjs        (python3 on PATH, or PYTHON=/path/to/python)
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { canonicalize } from '@jobhook/core/canonical';
import { BODY_STYLES, getPayloads } from './payloads.mjs';

const PY = String.raw`
import hashlib, json, sys
d = sys.argv[1]
ok = True
for name in sys.argv[2:]:
    loaded = {}
    for style in ("python", "compact"):
        body = open(f"{d}/{name}.{style}.json", "rb").read()
        v = json.loads(body)
        loaded[style] = v
        if style == "python":
            again = json.dumps(v).encode()
        else:
            again = json.dumps(v, separators=(",", ":"), ensure_ascii=False).encode()
        same = again == body
        ok &= same
        print(f"{name:12} {style:8} body == json.dumps(json.loads(body)) style: {same}")
        canon = json.dumps(v, sort_keys=True, indent=2, ensure_ascii=False).encode()
        ours = open(f"{d}/{name}.{style}.canonical", "rb").read()
        same = canon == ours
        ok &= same
        print(f"{name:12} {style:8} canonicalize == python canonical: {same} (sha256 {hashlib.sha256(canon).hexdigest()[:16]})")
    same = loaded["python"] == loaded["compact"]
    ok &= same
    print(f"{name:12} both bodies load to the same value: {same}")
sys.exit(0 if ok else 1)
`;

const dir = mkdtempSync(join(tmpdir(), 'jobhook-bench-'));
try {
  const payloads = getPayloads();
  for (const p of payloads) {
    for (const style of BODY_STYLES) {
      const body = p.bodies[style];
      writeFileSync(join(dir, `${p.name}.${style}.json`), body);
      writeFileSync(join(dir, `${p.name}.${style}.canonical`), canonicalize(body, { profile: 'python', maxBodyBytes: 16 << 20 }));
    }
  }
  const python = process.env.PYTHON ?? 'python3';
  const r = spawnSync(python, ['-c', PY, dir, ...payloads.map((p) => p.name)], { stdio: 'inherit' });
  if (r.error) throw r.error;
  console.log(r.status === 0 ? 'all payload checks passed' : 'PAYLOAD CHECK FAILED');
  process.exitCode = r.status ?? 1;
} finally {
  rmSync(dir, { recursive: true, force: true });
}
