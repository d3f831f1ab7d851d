// The `availability` group's attacker, a child process: a customer of the service (the attacker
// organization) who collects real signatures, then spends them against someone else's receiver.
// IPC in:  { type: 'capture', serviceUrl, token, count, captureHost }
//          { type: 'attack', attack, receiverPort, receiverPath, seconds, localAddresses, maxConnections }
// IPC out: { type: 'captured', count, bodyBytes: [min, max], headerNames }
//          { type: 'attacked', stats }
// Capture: a server on captureHost (127.0.0.3) that stores each delivery's exact headers and body
// bytes (answers 200), and `count` jobs submitted with it as their webhook_receiver.
// Attacks, raw sockets (net.connect with a loopback localAddress other than the service's), each
// connection one request, answered or closed → a new connection at once (a connection that never
// connected waits ERROR_PAUSE_MS); bounded by `seconds` and `maxConnections`:
//   replay       80 connections, the first captured delivery's headers, Content-Length 1 MiB, no body
//   trickle      80 connections, the same head, then 100 bytes every 200 ms
//   cycle        96 connections through all captured deliveries, Content-Length 1 MiB, 1 MiB sent at
//                256 KiB/s: the captured body padded with spaces to 1 MiB (JSON whitespace: the
//                canonical form, hence the signature, is unchanged, so it verifies as that job's
//                redelivery, answered 200 duplicate once read whole)
//   none         no connection: the control run
//   cycle-raw    96 connections through the captured deliveries, each body as it was delivered
//                (its own Content-Length, a few hundred bytes), at 256 KiB/s (one write)
// Exits when the channel closes.
import { once } from 'node:events';
import http from 'node:http';
import net from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';

const MiB = 1024 * 1024;
const ERROR_PAUSE_MS = 50;
const TICK_MS = 50;
const SUBMIT_CONCURRENCY = 8;
const CAPTURE_TIMEOUT_MS = 120_000;
/** Headers of a captured delivery that the attacker writes itself (or leaves out). */
const OWN_HEADERS = new Set(['host', 'content-length', 'connection', 'transfer-encoding', 'expect', 'keep-alive']);

export const ATTACKS = {
  /** No attack: the control run (genuine jobs only). */
  none: { connections: 0, declared: () => 0, pace: null },
  replay: { connections: 80, declared: () => MiB, pace: null },
  trickle: { connections: 80, declared: () => MiB, pace: { bytes: 100, everyMs: 200 } },
  cycle: { connections: 96, declared: () => MiB, pace: { bytesPerSecond: 256 * 1024 } },
  'cycle-raw': { connections: 96, declared: (d) => d.body.length, pace: { bytesPerSecond: 256 * 1024 }, raw: true },
};

/** Captured deliveries: `{ rawHeaders, body }`, in arrival order, one per job. */
const captured = [];

async function capture({ serviceUrl, token, count, captureHost }) {
  const seen = new Set();
  let wake;
  const server = http.createServer((req, res) => {
    const parts = [];
    req.on('data', (c) => parts.push(c));
    req.on('end', () => {
      const body = Buffer.concat(parts);
      let jobId;
      try {
        jobId = JSON.parse(body.toString('utf8')).job_id;
      } catch {
        jobId = undefined;
      }
      if (jobId !== undefined && !seen.has(jobId)) {
        seen.add(jobId);
        captured.push({ rawHeaders: req.rawHeaders, body });
        wake?.();
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ ok: true, job_id: jobId ?? null, duplicate: false }));
    });
  });
  server.listen(0, captureHost);
  await once(server, 'listening');
  const receiver = `http://${captureHost}:${server.address().port}/capture`;

  let next = 0;
  const submitOne = async () => {
    while (next < count) {
      const i = next++;
      const res = await fetch(`${serviceUrl}/v3/universal-ai/async`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'ocr/ocr_async/amazon', input: { file: `attacker-${i}` }, webhook_receiver: receiver }),
        signal: AbortSignal.timeout(15_000),
      });
      if (res.status !== 201) throw new Error(`attacker submission ${i}: ${res.status} ${(await res.text()).slice(0, 300)}`);
      await res.arrayBuffer();
    }
  };
  await Promise.all(Array.from({ length: SUBMIT_CONCURRENCY }, submitOne));
  const deadline = Date.now() + CAPTURE_TIMEOUT_MS;
  while (captured.length < count) {
    if (Date.now() > deadline) throw new Error(`captured ${captured.length} of ${count} deliveries in ${CAPTURE_TIMEOUT_MS} ms`);
    await new Promise((resolve) => {
      wake = resolve;
      setTimeout(resolve, 500);
    });
  }
  server.close();
  server.closeAllConnections();
  const sizes = captured.map((d) => d.body.length);
  return {
    type: 'captured',
    count: captured.length,
    bodyBytes: [Math.min(...sizes), Math.max(...sizes)],
    headerNames: captured[0].rawHeaders.filter((_, i) => i % 2 === 0),
  };
}

/** The request head for one captured delivery, `declared` bytes of body announced. */
function head(delivery, port, path, declared) {
  const lines = [`POST ${path} HTTP/1.1`, `Host: 127.0.0.1:${port}`];
  const raw = delivery.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) if (!OWN_HEADERS.has(raw[i].toLowerCase())) lines.push(`${raw[i]}: ${raw[i + 1]}`);
  lines.push(`Content-Length: ${declared}`, '', '');
  return Buffer.from(lines.join('\r\n'), 'latin1');
}

/** The body sent after the head: the captured body, padded with spaces to `length` (JSON whitespace). */
function paddedBody(delivery, length) {
  if (delivery.body.length >= length) return delivery.body.subarray(0, length);
  return Buffer.concat([delivery.body, Buffer.alloc(length - delivery.body.length, 0x20)]);
}

async function attack({ attack: name, receiverPort, receiverPath, seconds, localAddresses, maxConnections }) {
  const spec = ATTACKS[name];
  if (spec === undefined) throw new Error(`unknown attack ${name} (${Object.keys(ATTACKS).join(', ')})`);
  const deliveries = name === 'replay' || name === 'trickle' ? [captured[0]] : captured;
  const prepared = deliveries.map((d) => {
    const declared = spec.declared(d);
    return { head: head(d, receiverPort, receiverPath, declared), body: spec.raw ? d.body : paddedBody(d, declared) };
  });
  const stats = {
    attack: name,
    connectionSlots: spec.connections,
    localAddresses,
    connectionsOpened: 0,
    connectFailures: 0,
    answered: 0,
    statuses: {},
    closedUnanswered: 0,
    errors: {},
    bodiesSentWhole: 0,
    bytesSent: 0,
    seconds: 0,
  };
  const started = Date.now();
  const deadline = started + seconds * 1000;
  const sockets = new Set();
  let attempts = 0;
  let nextDelivery = 0;

  const oneConnection = (slot) =>
    new Promise((resolve) => {
      const req = prepared[nextDelivery++ % prepared.length];
      attempts++;
      const socket = net.connect({ host: '127.0.0.1', port: receiverPort, localAddress: localAddresses[slot % localAddresses.length] });
      sockets.add(socket);
      socket.setNoDelay(true);
      let connected = false;
      let answered = false;
      let sent = 0;
      let timer;
      let statusLine = '';
      const sendUpTo = (target) => {
        const end = Math.min(target, req.body.length);
        if (end <= sent || socket.destroyed || answered) return;
        const chunk = req.body.subarray(sent, end);
        sent = end;
        stats.bytesSent += chunk.length;
        socket.write(chunk);
        if (sent === req.body.length) stats.bodiesSentWhole++;
      };
      socket.once('connect', () => {
        connected = true;
        stats.connectionsOpened++;
        socket.write(req.head);
        stats.bytesSent += req.head.length;
        const pace = spec.pace;
        if (pace === null) return;
        if (pace.bytes !== undefined) {
          timer = setInterval(() => sendUpTo(sent + pace.bytes), pace.everyMs);
        } else {
          const t0 = performance.now();
          const tick = () => sendUpTo(Math.floor(((performance.now() - t0) / 1000) * pace.bytesPerSecond));
          tick();
          if (sent < req.body.length) timer = setInterval(tick, TICK_MS);
        }
      });
      socket.on('data', (data) => {
        if (answered) return;
        statusLine += data.toString('latin1', 0, Math.min(data.length, 64));
        const eol = statusLine.indexOf('\r\n');
        if (eol < 0 && statusLine.length < 64) return;
        answered = true;
        stats.answered++;
        const status = /^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1] ?? 'unparsed';
        stats.statuses[status] = (stats.statuses[status] ?? 0) + 1;
        // RST rather than FIN: no TIME_WAIT on the attacker's ports, and the reconnect is at once.
        socket.resetAndDestroy();
      });
      socket.on('error', (err) => {
        stats.errors[err.code ?? 'error'] = (stats.errors[err.code ?? 'error'] ?? 0) + 1;
      });
      socket.once('close', () => {
        clearInterval(timer);
        sockets.delete(socket);
        if (Date.now() >= deadline) {
          // stopped by the end of the attack: neither a failure nor an unanswered close
        } else if (!connected) stats.connectFailures++;
        else if (!answered && Date.now() < deadline) stats.closedUnanswered++;
        resolve(connected);
      });
    });

  const slot = async (i) => {
    while (Date.now() < deadline && attempts < maxConnections) {
      const connected = await oneConnection(i);
      if (!connected) await delay(ERROR_PAUSE_MS);
    }
  };
  const stopTimer = setTimeout(() => {
    for (const s of sockets) s.destroy();
  }, deadline - Date.now());
  await Promise.all(Array.from({ length: spec.connections }, (_, i) => slot(i)));
  if (spec.connections === 0) await delay(deadline - Date.now());
  clearTimeout(stopTimer);
  stats.seconds = (Date.now() - started) / 1000;
  stats.hitConnectionCap = attempts >= maxConnections;
  return { type: 'attacked', stats };
}

// Imported by availability.bench.mjs for ATTACKS: only a forked attacker listens.
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  process.on('message', (message) => {
    const work = message?.type === 'capture' ? capture(message) : message?.type === 'attack' ? attack(message) : null;
    if (work === null) return;
    work.then(
      (answer) => process.send(answer),
      (err) => process.send({ type: 'error', message: String(err?.stack ?? err) }),
    );
  });
  process.once('disconnect', () => process.exit(0));
}
