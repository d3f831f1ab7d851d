// A submission whose webhook_receiver is a cloud metadata address is refused (400) even by a sender
// that accepts private receivers or allow-lists their whole range; an allow-list entry naming the
// address exactly accepts it.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Sender } from '../../src/index.js';
import { startTestSender, TOKENS } from '../sender/sender-fixtures.js';

let permissive: Sender; // allowPrivateReceivers and wide allow-lists
let exact: Sender; // 169.254.169.254/32 named

beforeAll(async () => {
  ({ sender: permissive } = await startTestSender({
    allowPrivateReceivers: true,
    receiverAllowlist: ['169.254.0.0/16', '100.64.0.0/10', 'fd00::/8', '0.0.0.0/0'],
  }));
  ({ sender: exact } = await startTestSender({ receiverAllowlist: ['169.254.169.254/32'] }));
});
afterAll(async () => {
  await permissive?.close();
  await exact?.close();
});

async function submit(sender: Sender, receiver: string) {
  const res = await sender.app.inject({
    method: 'POST',
    url: '/v3/universal-ai/async',
    headers: { authorization: `Bearer ${TOKENS.inference}`, 'content-type': 'application/json' },
    // Held: an accepted job is never delivered during the test.
    payload: JSON.stringify({ model: 'text/summarize/openai', input: { simulate: { delay_ms: 600_000 } }, webhook_receiver: receiver }),
  });
  return { status: res.statusCode, json: res.json() as { detail?: string } };
}

describe('cloud metadata receivers', () => {
  test.each([
    'http://169.254.169.254/latest/meta-data/iam/security-credentials/',
    'http://168.63.129.16/machine?comp=goalstate',
    'http://100.100.100.200/latest/meta-data/',
    'http://192.0.0.192/opc/v2/instance/',
    'http://[fd00:ec2::254]/latest/api/token',
    'http://[fd20:ce::254]/computeMetadata/v1/',
    'http://169.254.170.2/v2/credentials/x',
    'http://[::ffff:169.254.169.254]/',
  ])('%s: 400 even with allowPrivateReceivers and wide allow-lists', async (receiver) => {
    const { status, json } = await submit(permissive, receiver);
    expect(status).toBe(400);
    expect(json.detail).toMatch(/^webhook_receiver refused: .*cloud metadata address/);
  });

  test('a private receiver that is not a metadata address is still accepted by that sender', async () => {
    expect((await submit(permissive, 'http://169.254.10.20/hook')).status).toBe(201);
  });

  test('an allow-list entry naming the address exactly accepts it', async () => {
    expect((await submit(exact, 'http://169.254.169.254/hook')).status).toBe(201);
    expect((await submit(exact, 'http://168.63.129.16/hook')).status).toBe(400);
  });
});
