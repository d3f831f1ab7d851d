/**
 * Cloud metadata addresses are refused by the SSRF guard whatever the options, unless an allow-list
 * entry names the address exactly.
 */
import { describe, expect, it } from 'vitest';
import { createSsrfGuard, refusalReason, type ResolvedAddress } from '../src/index.js';
import { CLOUD_METADATA_ADDRESSES } from '../src/cloud-metadata.js';

const literal = (address: string): string => `https://${address.includes(':') ? `[${address}]` : address}/`;

/** The refusal of `url` by `guard`, as the guard's caller sees it (reason and detail.range). */
async function refusal(guard: ReturnType<typeof createSsrfGuard>, url: string): Promise<{ reason: string | undefined; range: unknown }> {
  try {
    await guard.resolveTarget(url);
  } catch (err) {
    return { reason: refusalReason(err), range: (err as { detail?: Record<string, unknown> }).detail?.['range'] };
  }
  return { reason: 'accepted', range: undefined };
}

const ADDRESSES = Object.keys(CLOUD_METADATA_ADDRESSES);

describe('cloud metadata addresses', () => {
  it('the list holds Azure WireServer, AWS IMDS (v4, v6, ECS), GCP v6, Alibaba, Oracle, Tencent', () => {
    expect(ADDRESSES).toEqual(
      expect.arrayContaining([
        '168.63.129.16',
        '169.254.169.254',
        'fd00:ec2::254',
        '169.254.170.2',
        'fd20:ce::254',
        '100.100.100.200',
        '192.0.0.192',
        '169.254.0.23',
      ]),
    );
  });

  it.each(ADDRESSES)('%s is refused by the default guard, with allowPrivate, and inside a wide allowed CIDR', async (address) => {
    const wide = address.includes(':') ? ['::/0'] : ['0.0.0.0/0'];
    for (const options of [{}, { allowPrivate: true }, { allowCidrs: wide }, { allowPrivate: true, allowCidrs: wide }]) {
      expect(await refusal(createSsrfGuard(options), literal(address))).toEqual({ reason: 'address', range: 'cloudMetadata' });
    }
  });

  it.each(ADDRESSES)('%s is accepted when an allow-list entry names it exactly', async (address) => {
    const exact = `${address}/${address.includes(':') ? 128 : 32}`;
    await expect(createSsrfGuard({ allowCidrs: [exact] }).resolveTarget(literal(address))).resolves.toMatchObject({ address });
  });

  it('Azure 168.63.129.16 (ipaddr.js: unicast) is refused although its neighbours are public', async () => {
    const guard = createSsrfGuard();
    expect(await refusal(guard, 'https://168.63.129.16/machine?comp=goalstate')).toEqual({ reason: 'address', range: 'cloudMetadata' });
    await expect(guard.resolveTarget('https://168.63.129.17/')).resolves.toMatchObject({ address: '168.63.129.17' });
  });

  it('IPv6 forms carrying a metadata IPv4 are refused even with allowPrivate: mapped, compatible, NAT64, 6to4, Teredo', async () => {
    const guard = createSsrfGuard({ allowPrivate: true });
    const forms = [
      '::ffff:169.254.169.254',
      '::ffff:a83f:8110', // 168.63.129.16
      '::a9fe:a9fe',
      '64:ff9b::a83f:8110',
      '64:ff9b:1::a9fe:a9fe',
      '2002:a9fe:a9fe::1',
      '2001:0:a83f:8110::1', // Teredo server 168.63.129.16
      '2001:0:102:304::5601:5601', // Teredo client: the complement of a9fe:a9fe (169.254.169.254)
    ];
    for (const form of forms) expect(await refusal(guard, literal(form)), form).toEqual({ reason: 'address', range: 'cloudMetadata' });
    // allowPrivate still opens other private addresses.
    await expect(guard.resolveTarget('https://[::ffff:10.0.0.1]/')).resolves.toMatchObject({ address: '::ffff:a00:1' });
  });

  it('a host name resolving to a metadata address is refused, even if only one of its answers is', async () => {
    const resolve = async (host: string): Promise<ResolvedAddress[]> =>
      host === 'metadata.example.com'
        ? [
            { address: '93.184.216.34', family: 4 },
            { address: '168.63.129.16', family: 4 },
          ]
        : [];
    const guard = createSsrfGuard({ resolve, allowPrivate: true });
    expect(await refusal(guard, 'https://metadata.example.com/')).toEqual({ reason: 'address', range: 'cloudMetadata' });
  });

  it('the refusal says "cloud metadata address" for a literal', async () => {
    await expect(createSsrfGuard({ allowPrivate: true }).resolveTarget('https://100.100.100.200/latest/meta-data/')).rejects.toMatchObject({
      code: 'ERR_RECEIVER_REFUSED',
      message: expect.stringContaining('100.100.100.200 is a cloud metadata address'),
    });
  });
});
